import { spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { composeDown, composeUp, planCompose, readCompose, type Started } from "./compose-up.ts";
import type { Podman } from "./podman.ts";

interface EmulatorState {
  deliveries: { event: string; action?: string; status: number | null }[];
  issues: { number: number; labels: string[]; comments: { user: string; body: string }[] }[];
  pulls: { number: number; state: string; head: string; reviews: { state: string }[] }[];
}

/**
 * docker/compose.yml brought up with podman (web, the workers, PostgreSQL), and one issue from
 * `lisa emulator` taken through it: labeled, a pull request opened by a worker, approved, accepted.
 * The emulator runs in a container of the Lisa image beside them, with the checkout's emulator/
 * (not in the image) mounted, and its stand-in agent, which calls no model, as the agent.
 * Returns what it saw, a line each; throws on the first thing that does not hold.
 */
export async function composeIssue(
  podman: Podman,
  options: { checkout: string; image: string; postgresImage: string; work: string; log: (line: string) => void },
): Promise<string[]> {
  const { log } = options;
  const services = readCompose(path.join(options.checkout, "docker", "compose.yml"), {
    LISA_POSTGRES_IMAGE: options.postgresImage,
  });
  const shared = path.join(options.work, "shared");
  mkdirSync(shared, { recursive: true });
  // The image's user `node` (uid 1000) writes the emulator's env file and App key there.
  chownSync(shared, 1000, 1000);
  const network = "lisa-compose";
  // The set's own bridge, with no route out: the emulator at .5, the services from .10 on.
  const subnet = "10.89.42";
  const plan = planCompose(services, subnet);
  const emulatorMount = `${path.join(options.checkout, "emulator")}:/app/emulator:ro`;
  const seen: string[] = [];
  let started: Started[] = [];
  try {
    await podman.ok(["network", "create", "--internal", "--subnet", `${subnet}.0/24`, network]);
    await podman.ok([
      ...["run", "--detach", "--no-healthcheck", "--name", "emulator", "--network", network, "--ip", `${subnet}.5`],
      ...plan.hosts.flatMap((host) => ["--add-host", host]),
      ...["--volume", emulatorMount, "--volume", `${shared}:/shared`],
      options.image,
      ...["lisa", "emulator", "--port", "3001", "--host", "emulator"],
      ...["--webhook-url", "http://web:3000/api/github/webhooks", "--write-env", "/shared/lisa.env"],
    ]);
    await until("the emulator's env file", async () => existsSync(path.join(shared, "lisa.env")), 60);
    started = await composeUp(podman, services, plan, {
      network,
      builtImage: options.image,
      envFile: path.join(shared, "lisa.env"),
      extraHosts: [`emulator:${subnet}.5`],
      mounts: [emulatorMount, `${shared}:/shared:ro`],
      log,
    });
    const lisas = started.filter(({ service }) => services[service]?.build);
    // The image's own HEALTHCHECK command (podman runs no health timers without systemd), at the
    // metrics address the image and the compose file set.
    const [, ...healthcheck] = JSON.parse(
      await podman.ok(["image", "inspect", "--format", "{{json .Config.Healthcheck.Test}}", options.image]),
    ) as string[];
    for (const { name } of lisas) {
      await until(`${name} to be healthy`, async () => (await podman.run(["exec", name, ...healthcheck])).code === 0, 90);
    }
    seen.push(`up: ${started.map(({ name }) => name).join(", ")}; every Lisa container healthy`);

    const web = lisas.find(({ service }) => service === "web")?.name ?? "web";
    const metricsBeside = await fetchIn(podman, web, "http://127.0.0.1:3000/metrics");
    const metricsOwn = await fetchIn(podman, web, "http://127.0.0.1:9464/metrics");
    if (metricsBeside.status !== 404 || metricsOwn.status !== 200)
      throw new Error(`/metrics answered ${metricsBeside.status} beside the webhooks and ${metricsOwn.status} on 9464`);
    seen.push("/metrics: 404 on the webhook port 3000, 200 on its own address :9464");

    const control = async (route: string, body: unknown) => {
      const answer = await fetchIn(podman, "emulator", `http://127.0.0.1:3001/_emulator/${route}`, body);
      if (answer.status !== 201) throw new Error(`the emulator's ${route} control answered ${answer.status}: ${answer.text}`);
    };
    const state = async () =>
      JSON.parse((await fetchIn(podman, "emulator", "http://127.0.0.1:3001/_emulator/state")).text) as EmulatorState;
    await control("issues", { title: "Add a health check" });
    log("issue 1 opened and labeled lisa");
    const review = await until(
      "a pull request and the review request",
      async () => {
        const now = await state();
        return now.issues[0]?.labels.includes("lisa:review") && now.pulls.length === 1 && now;
      },
      240,
    );
    const pull = review.pulls[0] as EmulatorState["pulls"][number];
    seen.push(`issue 1: pull request #${pull.number} opened from ${pull.head}, review asked for (lisa:review)`);
    await control("reviews", { pull: pull.number, event: "approve" });
    const accepted = await until(
      "the run to be accepted",
      async () => {
        const now = await state();
        // And every webhook sent so far answered: Lisa's own writes send some after the label.
        return now.issues[0]?.labels.includes("lisa:accepted") && now.deliveries.every((d) => d.status !== null) && now;
      },
      120,
    );
    if (!accepted.deliveries.every((delivery) => delivery.status === 200))
      throw new Error(`a webhook was not answered 200: ${JSON.stringify(accepted.deliveries)}`);
    const claimed = await workerThatRan(podman, lisas);
    seen.push(
      `approved: run accepted (lisa:accepted); every one of ${accepted.deliveries.length} webhooks answered 200; ${claimed}`,
    );
    // A deploy: each container stopped as compose stops it; a Lisa that does not exit 0 is a failure.
    const statuses = await composeDown(podman, services, started);
    started = [];
    const unclean = [...statuses].filter(([name, status]) => status !== 0 && !name.startsWith("postgres"));
    if (unclean.length > 0)
      throw new Error(`stopped, Lisa containers exited with ${JSON.stringify(Object.fromEntries(unclean))}`);
    seen.push(`down: ${[...statuses.keys()].join(", ")} stopped; every Lisa container exited 0`);
  } catch (error) {
    for (const name of ["emulator", ...started.map((s) => s.name)]) {
      const logs = await podman.run(["logs", "--tail", "40", name]);
      log(`--- ${name}'s last lines:\n${logs.stdout}${logs.stderr}`);
    }
    throw error;
  } finally {
    await composeDown(podman, services, started);
    await podman.run(["rm", "--force", "--time", "5", "emulator"]);
    await removeNetwork(podman, network);
  }
  return seen;
}

/** Removes the set's network, and its bridge on this machine, which podman leaves behind. */
async function removeNetwork(podman: Podman, network: string): Promise<void> {
  const bridge = (await podman.run(["network", "inspect", "--format", "{{.NetworkInterface}}", network])).stdout.trim();
  await podman.run(["network", "rm", "--force", network]);
  if (/^[\w.-]+$/.test(bridge)) spawnSync("ip", ["link", "delete", bridge], { stdio: "ignore" });
}

/** Which workers' logs say an agent session ended there. */
async function workerThatRan(podman: Podman, lisas: Started[]): Promise<string> {
  const workers = lisas.filter(({ service }) => service === "worker");
  const ran: string[] = [];
  for (const { name } of workers) {
    const logs = await podman.run(["logs", name]);
    if (`${logs.stdout}${logs.stderr}`.includes("agent session ended")) ran.push(name);
  }
  return `${workers.length} workers up (${workers.map((w) => w.name).join(", ")}); the agent ran on ${ran.join(", ") || "none of them"}`;
}

/** A request from inside a container, with the image's Node, so nothing outside the set's network is reached. */
async function fetchIn(
  podman: Podman,
  container: string,
  url: string,
  body?: unknown,
): Promise<{ status: number; text: string }> {
  const script =
    "const [url, body] = process.argv.slice(1);" +
    "fetch(url, body ? { method: 'POST', body } : {}).then(async (r) => process.stdout.write(JSON.stringify({ status: r.status, text: await r.text() })))" +
    ".catch((e) => process.stdout.write(JSON.stringify({ status: 0, text: String(e) })));";
  const result = await podman.run([
    "exec",
    container,
    "node",
    "-e",
    script,
    url,
    ...(body === undefined ? [] : [JSON.stringify(body)]),
  ]);
  try {
    return JSON.parse(result.stdout) as { status: number; text: string };
  } catch {
    return { status: 0, text: `${result.stdout}${result.stderr}` };
  }
}

/** Polls `probe` every second until it gives a value, for at most `seconds`. */
async function until<T>(what: string, probe: () => Promise<T | false | undefined>, seconds: number): Promise<T> {
  const deadline = Date.now() + seconds * 1_000;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${seconds} s waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}
