import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { requirePostgres } from "../../dev/test-postgres.ts";
import { waitFor } from "../../dev/wait-for.ts";
import { PostgresDriver } from "../../src/store/postgres-driver.ts";
import { sql } from "../../src/store/sql.ts";
import { type ConnectionChange, isDatabaseUnavailable } from "../../src/store/sql-driver.ts";
import { Store } from "../../src/store/store.ts";
import { newRun, oneStep } from "../support/store-fixtures.ts";
import { startTcpProxy } from "../support/tcp-proxy.ts";

// The store reaches PostgreSQL through a relay the test cuts: every connection dropped and new ones
// refused, as when the server restarts or a failover moves it, then accepted again.

let base: URL;
const cleanups: (() => Promise<void> | void)[] = [];
beforeAll(async () => {
  base = new URL(await requirePostgres());
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A relay to the test server and a fresh schema's URL through it. */
async function throughProxy() {
  const proxy = await startTcpProxy({ host: base.hostname, port: Number(base.port || 5432) });
  const schema = `reconnect_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const url = new URL(base);
  url.port = String(proxy.port);
  url.searchParams.set("schema", schema);
  cleanups.push(async () => {
    await proxy.stop();
    const admin = new pg.Client({ connectionString: base.toString() });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  });
  return { proxy, url: url.toString() };
}

async function thrown(work: () => Promise<unknown>): Promise<unknown> {
  try {
    await work();
  } catch (error) {
    return error;
  }
  throw new Error("expected it to throw");
}

/** The store's pending commands once it answers again: reconnection backs off (up to 5 s between attempts). */
const pendingOnceBack = (store: Store) =>
  waitFor(
    "the store to answer again",
    async () => {
      try {
        return await store.commands.pending();
      } catch (error) {
        if (isDatabaseUnavailable(error)) return undefined;
        throw error;
      }
    },
    15_000,
  );

describe("the PostgreSQL store when its connection is lost", () => {
  it("opens another: reads and writes work again, and the loss and the return are said once each", async () => {
    const { proxy, url } = await throughProxy();
    const store = new Store(url);
    cleanups.push(() => store.close());
    const changes: ConnectionChange["kind"][] = [];
    store.onConnection((change) => changes.push(change.kind));
    expect(await store.commands.add("before", "gesture", {})).toBeTypeOf("number");

    await proxy.cut();
    await proxy.restore();

    expect(await store.commands.pending()).toBe(1);
    expect(await store.commands.add("after", "gesture", {})).toBeTypeOf("number");
    expect(await store.commands.pending()).toBe(2);
    await waitFor("the return to be said", () => changes.length === 2 || undefined);
    expect(changes).toEqual(["lost", "restored"]);
  });

  it("fails a transaction whose connection was lost, whole: none of it is written on the new one", async () => {
    const { proxy, url } = await throughProxy();
    const driver = new PostgresDriver(url);
    cleanups.push(() => driver.close());
    await driver.script("CREATE TABLE written (id SERIAL PRIMARY KEY, n INTEGER)");

    const failure = await driver
      .transaction(async (tx) => {
        await tx.run(sql`INSERT INTO written (n) VALUES (${1})`);
        await proxy.cut();
        await proxy.restore();
        const error = await thrown(() => tx.run(sql`INSERT INTO written (n) VALUES (${2})`));
        expect(isDatabaseUnavailable(error), String(error)).toBe(true);
        expect(String(error)).toMatch(/connection this transaction ran on was lost/);
        // Its caller may catch that and go on: the commit still fails, and nothing was written.
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(String(failure)).toMatch(/connection this transaction ran on was lost/);

    expect(await driver.all(sql`SELECT n FROM written`)).toEqual([]);
    // The next transaction runs on a new connection.
    await driver.transaction((tx) => tx.run(sql`INSERT INTO written (n) VALUES (${3})`));
    expect(await driver.all(sql`SELECT n FROM written`)).toEqual([{ n: 3 }]);
  });

  it("loses a named lock with the connection that held it: held() says so, and another process takes the lock", async () => {
    const { proxy, url } = await throughProxy();
    const store = new Store(url);
    cleanups.push(() => store.close());
    const direct = new URL(url);
    direct.port = base.port || "5432";
    const other = new Store(direct.toString());
    cleanups.push(() => other.close());

    const seen = await store.exclusively("inbox", async (held) => {
      const before = await held();
      expect(await other.exclusively("inbox", async () => "taken")).toBeUndefined();
      await proxy.cut();
      await proxy.restore();
      const after = await held();
      const taken = await waitFor("the other store to take the lock", () => other.exclusively("inbox", async () => "taken"));
      return { before, after, taken };
    });
    expect(seen).toEqual({ before: true, after: false, taken: "taken" });
  });

  it("fails statements at once as unavailable while the server is gone, and serves them when it is back", async () => {
    const { proxy, url } = await throughProxy();
    const store = new Store(url);
    cleanups.push(() => store.close());
    await store.commands.add("before", "gesture", {});

    await proxy.cut();
    const started = Date.now();
    const error = await thrown(() => store.commands.pending());
    expect(isDatabaseUnavailable(error), String(error)).toBe(true);
    // Not the 30 s a statement may wait for its answer: a web process answers 503 meanwhile.
    expect(Date.now() - started).toBeLessThan(3_000);

    await proxy.restore();
    // Reconnection backs off (up to 5 s between attempts) while the server is gone.
    const pending = await pendingOnceBack(store);
    expect(pending).toBe(1);
  });

  it("takes a server that refuses a new connection (too many clients) as unavailable, not as the statement's failure", async () => {
    // A role allowed two connections: the store holds one, a client of the test the other.
    const role = `full_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
    const admin = new pg.Client({ connectionString: base.toString() });
    await admin.connect();
    await admin.query(`CREATE ROLE "${role}" LOGIN CONNECTION LIMIT 2`);
    await admin.query(`GRANT CREATE ON DATABASE "${base.pathname.slice(1) || "postgres"}" TO "${role}"`);
    const url = new URL(base);
    url.username = role;
    url.searchParams.set("schema", role);
    const other = new pg.Client({ connectionString: url.toString() });
    cleanups.push(async () => {
      await other.end().catch(() => undefined);
      await admin.query(`DROP SCHEMA IF EXISTS "${role}" CASCADE`);
      await admin.query(`REVOKE CREATE ON DATABASE "${base.pathname.slice(1) || "postgres"}" FROM "${role}"`);
      await admin.query(`DROP ROLE IF EXISTS "${role}"`);
      await admin.end();
    });
    const store = new Store(url.toString());
    cleanups.unshift(() => store.close());
    await store.commands.add("before", "gesture", {});
    await other.connect();

    // Two writes at once (a read would be tried again; two commands would share one INSERT): the
    // second needs a connection the server refuses (53300).
    const [stored, created] = await Promise.allSettled([
      store.commands.add("a", "gesture", {}),
      store.runs.create(newRun(1), oneStep(1)),
    ]);
    const refused = [stored, created].flatMap((result) => (result.status === "rejected" ? [result.reason] : []));
    expect(refused.length).toBeGreaterThan(0);
    for (const error of refused) expect(isDatabaseUnavailable(error), String(error)).toBe(true);

    await other.end();
    const pending = await pendingOnceBack(store);
    expect(pending).toBe(stored.status === "fulfilled" ? 2 : 1);
  });
});
