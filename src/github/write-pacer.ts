import { setTimeout as delay } from "node:timers/promises";
import type { ProbotOctokit } from "probot";

/**
 * The order an installation's writes go out in when several wait: what tells a person Lisa heard
 * them (👀, the first tracking comment), then what the issue and a reviewer wait for (state labels,
 * the pull request, the review request), then the rest, and tracking edits last. The store orders
 * them by their index (store/write-slots.ts).
 */
export const LANES = ["ack", "state", "normal", "edit"] as const;
export type Lane = (typeof LANES)[number];
/** Lanes that take the earliest slot however far ahead; the later ones reserve only within the horizon. */
const UNBOUNDED: ReadonlySet<Lane> = new Set(["ack", "state"]);
/** A lane's place in the order, as the store keeps it. */
const rank = (lane: Lane) => LANES.indexOf(lane);

/** What a write is to GitHub's limits and in which lane it waits: null for a read, which is not paced. */
export interface WriteKind {
  creates: boolean;
  lane: Lane;
}

/** A budget held a write back this long: the minute's or hour's content-creating writes so far. */
export interface LongWait {
  installationId: number;
  waitMs: number;
  /** When the write's slot (or its next try) comes. */
  until: number;
  minute: number;
  hour: number;
  limitedBy: "minute" | "hour";
}

/** The store's reservation of an installation's write slots (store/write-slots.ts), in plain values. */
export interface SlotReserver {
  reserve(request: { installationId: number; creates: boolean; lane: number; horizonMs: number }): Promise<
    ({ at: number; slot: number } | { retryAt: number }) & {
      minute: number;
      hour: number;
      limitedBy?: "minute" | "hour";
    }
  >;
  /** The write of `slot` (reserved for `at`, of lane `lane`, its index in LANES) goes out now (`sentAt`, its slot moved there), or waits until `retryAt`. */
  send(request: {
    installationId: number;
    slot: number;
    at: number;
    lane: number;
    marginMs: number;
  }): Promise<{ sentAt: number } | { retryAt: number }>;
}

/**
 * How long a write's send may trail the store's record of it (the transaction's return). Sends
 * are recorded this much more than 1 s apart, so the spacing holds at the socket too.
 */
export const SEND_MARGIN_MS = 25;
/** How many times a send is recorded again when the store answered later than the margin. */
const MAX_SLOW_SENDS = 3;

export interface WritePacerOptions {
  slots: SlotReserver;
  installationId: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** How far ahead a write of a bounded lane (after `state`) may reserve. */
  horizonMs?: number;
  /** A write held back longer than this by a content budget is reported through `onLongWait`, once. */
  longWaitMs?: number;
  onLongWait?: (wait: LongWait) => void;
}

export type WritePacer = (kind: WriteKind) => Promise<number>;

/**
 * Waits until the installation's next write slot in the store (store/write-slots.ts), shared by
 * every Lisa process: 1 s between writes, 80 content-creating writes a minute, 500 an hour, in the
 * order of their lanes. Acknowledgements and state writes take the earliest slot however far ahead;
 * the others reserve only within `horizonMs` and otherwise ask again later. Resolves with the
 * time the write goes out.
 */
export function createWritePacer(options: WritePacerOptions): WritePacer {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => delay(ms));
  const horizonMs = options.horizonMs ?? 2_000;
  const longWaitMs = options.longWaitMs ?? 30_000;
  // This process's writes ask for their slots one after another, in the order they came: the store
  // answers each in its own time, and writes asked for together must not overtake one another.
  let asked: Promise<unknown> = Promise.resolve();
  const reserve = (kind: WriteKind) => {
    const answer = asked.then(() =>
      options.slots.reserve({
        installationId: options.installationId,
        creates: kind.creates,
        lane: rank(kind.lane),
        horizonMs: UNBOUNDED.has(kind.lane) ? Number.POSITIVE_INFINITY : horizonMs,
      }),
    );
    asked = answer.catch(() => undefined);
    return answer;
  };
  return async (kind) => {
    const started = now();
    let told = false;
    for (;;) {
      const answer = await reserve(kind);
      const until = "at" in answer ? answer.at : answer.retryAt;
      if (!told && answer.limitedBy && until - started >= longWaitMs) {
        told = true;
        options.onLongWait?.({
          installationId: options.installationId,
          waitMs: until - started,
          until,
          minute: answer.minute,
          hour: answer.hour,
          limitedBy: answer.limitedBy,
        });
      }
      const wait = until - now();
      if (wait > 0) await sleep(wait);
      if ("at" in answer) return send({ slot: answer.slot, at: answer.at, lane: rank(kind.lane) });
    }
  };

  // Spacing is measured from when each write goes out, not from its slot: a write woken late
  // must not bring the next one closer than the gap (the store holds the send times of all processes).
  async function send(reserved: { slot: number; at: number; lane: number }): Promise<number> {
    for (let slow = 0; ; ) {
      const answer = await options.slots.send({ installationId: options.installationId, ...reserved, marginMs: SEND_MARGIN_MS });
      if ("retryAt" in answer) {
        const wait = answer.retryAt - now();
        if (wait > 0) await sleep(wait);
        continue;
      }
      // The store's answer took longer than the spacing's margin: recorded again, closer to the send;
      // a few times at most, or a store (or event loop) slower than the margin would hold it for good.
      if (now() - answer.sentAt <= SEND_MARGIN_MS || ++slow > MAX_SLOW_SENDS) return answer.sentAt;
    }
  }
}

const READS: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS"]);
/** The lanes of Lisa's writes, by path; a write no pattern names is `normal`. */
const LANE_OF: readonly [Lane, string | undefined, RegExp][] = [
  // 👀 on a label or a command: the first thing a person sees.
  ["ack", "POST", /\/reactions$/],
  // State labels, the pull request and the review request: what the issue and a reviewer wait for.
  ["state", undefined, /^\/repos\/[^/]+\/[^/]+\/issues\/[^/]+\/labels(\/[^/]+)?$/],
  ["state", "POST", /^\/repos\/[^/]+\/[^/]+\/pulls$/],
  ["state", "POST", /^\/repos\/[^/]+\/[^/]+\/pulls\/[^/]+\/requested_reviewers$/],
  // A tracking comment says the newest; an edit waits behind everything else.
  ["edit", "PATCH", /^\/repos\/[^/]+\/[^/]+\/issues\/comments\/[^/]+$/],
];
/** Token requests are the App's, not the installation's writes. */
const AUTH = /^\/app\/installations\/[^/]+\/access_tokens$/;

/**
 * How a request counts against GitHub's limits, and its lane: the one its caller named
 * (`request: { lane }`, as the first tracking comment does), else its path's. GitHub names no list
 * of "content-creating" requests, so every POST counts (each of Lisa's creates something people
 * see); PATCH, PUT and DELETE edit, merge or remove and only keep the 1 s spacing. A GraphQL
 * request is a write only as a mutation.
 */
export function classifyRequest(request: { method: string; url: string; query?: unknown; request?: object }): WriteKind | null {
  const method = request.method.toUpperCase();
  if (READS.has(method)) return null;
  const path = new URL(request.url, "http://github.test").pathname.replace(/^\/api\/v3(?=\/)/, "");
  if (AUTH.test(path)) return null;
  if (path === "/graphql" || path.endsWith("/api/graphql")) {
    return /^\s*mutation\b/.test(String(request.query ?? "")) ? { creates: false, lane: "normal" } : null;
  }
  const named = (request.request as { lane?: unknown } | undefined)?.lane;
  const lane = (LANES as readonly unknown[]).includes(named)
    ? (named as Lane)
    : (LANE_OF.find(([, only, route]) => (only === undefined || only === method) && route.test(path))?.[0] ?? "normal");
  return { creates: method === "POST", lane };
}

type Hookable = { hook: InstanceType<typeof ProbotOctokit>["hook"] };

/**
 * Makes every write of `octokit` wait for its slot before it is sent; reads go at once. The wait
 * is in the request's `fetch`, the last step before the socket: waited for in a hook, a write
 * would go out after whatever the hooks inside it do first (minting an installation token takes
 * a request of its own), closer than the gap to the next.
 */
export function paceWrites<T extends Hookable>(octokit: T, pace: WritePacer): T {
  octokit.hook.wrap("request", async (request, options) => {
    const kind = classifyRequest(options);
    if (!kind) return request(options);
    const given: typeof fetch & { unpaced?: typeof fetch } = options.request?.fetch ?? globalThis.fetch;
    // A request sent again with these options (a retry) is paced once, not once more per try.
    const send = given.unpaced ?? given;
    const paced = Object.assign(
      async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
        await pace(kind);
        return send(input, init);
      },
      { unpaced: send },
    );
    // Set on these options themselves: the hooks inside this one were bound to them, not to a copy.
    options.request = { ...options.request, fetch: paced };
    return request(options);
  });
  return octokit;
}
