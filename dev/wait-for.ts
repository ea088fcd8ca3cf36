type Probed<T> = T | undefined | false;

/** Polls until `probe` gives a value (not undefined or false): an agent started, a run reached a state. */
export async function waitFor<T>(what: string, probe: () => Probed<T> | Promise<Probed<T>>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
