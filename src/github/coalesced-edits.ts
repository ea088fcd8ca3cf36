/**
 * Edits of one comment, in one process, coalesced to the newest text: while an edit waits for its
 * write slot or is on its way, later texts replace one another, and one edit carries the newest
 * when it is done. Tracking edits wait behind every other write of their installation, so under
 * load this is most of them.
 */
export function coalescedEdits() {
  const pending = new Map<string, { text: string; waiting: { resolve: () => void; reject: (error: unknown) => void }[] }>();
  const sending = new Set<string>();

  async function drain(key: string, send: (text: string) => Promise<void>): Promise<void> {
    sending.add(key);
    try {
      for (let next = pending.get(key); next; next = pending.get(key)) {
        pending.delete(key);
        try {
          await send(next.text);
          for (const waiter of next.waiting) waiter.resolve();
        } catch (error) {
          for (const waiter of next.waiting) waiter.reject(error);
        }
      }
    } finally {
      sending.delete(key);
    }
  }

  /** Resolves once an edit with `text`, or a newer text of the same comment, is written. */
  return (key: string, text: string, send: (text: string) => Promise<void>): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const queued = pending.get(key);
      if (queued) {
        queued.text = text;
        queued.waiting.push({ resolve, reject });
      } else pending.set(key, { text, waiting: [{ resolve, reject }] });
      if (!sending.has(key)) void drain(key, send);
    });
}
