import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { z } from "zod";
import type { Podman } from "./podman.ts";
import { podmanSecurityOptions } from "./run-options.ts";

/** The parts of a compose service this runner takes; anything else in the file is refused, not ignored. */
const serviceSchema = z.strictObject({
  image: z.string().optional(),
  build: z.string().optional(),
  env_file: z.string().optional(),
  environment: z.record(z.string(), z.union([z.string(), z.number()])).default({}),
  depends_on: z.record(z.string(), z.strictObject({ condition: z.enum(["service_started", "service_healthy"]) })).default({}),
  restart: z.string().optional(),
  security_opt: z.array(z.string()).default([]),
  volumes: z.array(z.string()).default([]),
  ports: z.array(z.string()).default([]),
  healthcheck: z
    .strictObject({ test: z.array(z.string()), interval: z.string().default("5s"), retries: z.number().default(10) })
    .optional(),
  deploy: z.strictObject({ replicas: z.number().int().min(1) }).optional(),
  stop_grace_period: z.string().optional(),
});
const composeSchema = z.object({ services: z.record(z.string(), serviceSchema) });
export type ComposeService = z.infer<typeof serviceSchema>;

/** The compose file's services, YAML merge keys and `${VAR:-default}` resolved from `variables`. */
export function readCompose(file: string, variables: Record<string, string>): Record<string, ComposeService> {
  const text = readFileSync(file, "utf8").replace(
    /\$\{(\w+)(?::-([^}]*))?\}/g,
    (_, name: string, fallback?: string) => variables[name] ?? fallback ?? "",
  );
  return composeSchema.parse(parse(text, { merge: true })).services;
}

/** A container of the set: its name, and the service and replica it is. */
export interface Started {
  name: string;
  service: string;
}

/** Seconds in a compose duration such as `30s` or `2m`. */
const seconds = (duration: string) => {
  const [, amount, unit] = /^(\d+)(s|m)$/.exec(duration) ?? [];
  if (!amount) throw new Error(`a duration this runner does not read: ${duration}`);
  return Number(amount) * (unit === "m" ? 60 : 1);
};

/** Where each container of the set will be: its name, service and address, and what each service name resolves to. */
export interface ComposePlan {
  order: string[];
  containers: { name: string; service: string; ip: string }[];
  /** `name:address` for `--add-host`: each service's first container. */
  hosts: string[];
}

/** Addresses on `subnet` (a /24's first three numbers) from .10 on, one per replica, services in dependency order. */
export function planCompose(services: Record<string, ComposeService>, subnet: string): ComposePlan {
  const order = dependencyOrder(services);
  const containers: ComposePlan["containers"] = [];
  const hosts: string[] = [];
  let next = 10;
  for (const service of order) {
    const replicas = services[service]?.deploy?.replicas ?? 1;
    for (let replica = 1; replica <= replicas; replica++) {
      const ip = `${subnet}.${next++}`;
      if (replica === 1) hosts.push(`${service}:${ip}`);
      containers.push({ name: replicas > 1 ? `${service}-${replica}` : service, service, ip });
    }
  }
  return { order, containers, hosts };
}

/**
 * Brings a compose file's services up with `podman run` on `network`, as `docker compose up` would
 * on one host: in dependency order, each replica a container of its own, every service's name
 * resolving to its first container, a `service_healthy` dependency waited for with its own health
 * check. `build` services run `builtImage` with `mounts`, `env_file` is `envFile`, and published
 * ports are left out (nothing outside the network talks to the set).
 */
export async function composeUp(
  podman: Podman,
  services: Record<string, ComposeService>,
  plan: ComposePlan,
  options: {
    network: string;
    builtImage: string;
    envFile: string;
    extraHosts: string[];
    mounts: string[];
    log: (line: string) => void;
  },
): Promise<Started[]> {
  const hosts = [...plan.hosts, ...options.extraHosts].flatMap((host) => ["--add-host", host]);
  const started: Started[] = [];
  for (const service of plan.order) {
    const spec = services[service] as ComposeService;
    for (const [dependency, { condition }] of Object.entries(spec.depends_on)) {
      if (condition === "service_healthy") await waitHealthy(podman, dependency, services[dependency] as ComposeService);
    }
    for (const container of plan.containers.filter((c) => c.service === service)) {
      const image = spec.build ? options.builtImage : spec.image;
      if (!image) throw new Error(`service ${service} has neither an image nor a build`);
      await podman.ok([
        // Health is checked by running each service's check (waitHealthy, the caller): podman's own
        // timers need systemd.
        ...["run", "--detach", "--no-healthcheck", "--name", container.name, "--hostname", container.name],
        ...["--network", options.network, "--ip", container.ip],
        ...hosts,
        ...podmanSecurityOptions(spec.security_opt),
        ...(spec.env_file ? ["--env-file", options.envFile] : []),
        ...Object.entries(spec.environment).flatMap(([name, value]) => ["--env", `${name}=${value}`]),
        ...spec.volumes.flatMap((volume) => ["--volume", volume]),
        ...(spec.build ? options.mounts.flatMap((mount) => ["--volume", mount]) : []),
        image,
      ]);
      started.push({ name: container.name, service });
      options.log(`started ${container.name} (${image}) at ${container.ip}`);
    }
  }
  return started;
}

/** Stops the set's containers as `docker compose down` would (each with its `stop_grace_period`); their exit statuses. */
export async function composeDown(
  podman: Podman,
  services: Record<string, ComposeService>,
  started: Started[],
): Promise<Map<string, number>> {
  const statuses = new Map<string, number>();
  for (const { name, service } of [...started].reverse()) {
    const grace = seconds(services[service]?.stop_grace_period ?? "10s");
    await podman.run(["stop", "--time", String(grace), name]);
    const status = await podman.run(["inspect", "--format", "{{.State.ExitCode}}", name]);
    statuses.set(name, Number(status.stdout.trim()));
  }
  return statuses;
}

/** Waits for a service's first container to pass its compose health check. */
async function waitHealthy(podman: Podman, service: string, spec: ComposeService): Promise<void> {
  const check = spec.healthcheck;
  if (!check) throw new Error(`${service} is waited for as healthy but has no healthcheck`);
  const [kind, ...command] = check.test;
  if (kind !== "CMD") throw new Error(`${service}'s healthcheck: only ["CMD", …] is read here`);
  for (let attempt = 1; attempt <= check.retries; attempt++) {
    if ((await podman.run(["exec", service, ...command])).code === 0) return;
    await new Promise((resolve) => setTimeout(resolve, seconds(check.interval) * 1_000));
  }
  const logs = await podman.run(["logs", service]);
  throw new Error(`${service} did not become healthy:\n${logs.stdout}${logs.stderr}`);
}

/** Services before those that depend on them. */
function dependencyOrder(services: Record<string, ComposeService>): string[] {
  const order: string[] = [];
  const visit = (name: string, path: string[]) => {
    if (order.includes(name)) return;
    if (path.includes(name)) throw new Error(`a dependency cycle: ${[...path, name].join(" → ")}`);
    const spec = services[name];
    if (!spec) throw new Error(`${path.at(-1)} depends on ${name}, which is no service`);
    for (const dependency of Object.keys(spec.depends_on)) visit(dependency, [...path, name]);
    order.push(name);
  };
  for (const name of Object.keys(services)) visit(name, []);
  return order;
}
