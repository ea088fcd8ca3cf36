import { describe, expect, it } from "vitest";
import { testDatabaseUrl } from "../../dev/test-database.ts";
import { SURE_COMMAND, UNSURE_COMMAND } from "../../src/store/commands.ts";
import { Store } from "../../src/store/store.ts";
import { tempDir } from "../support/git-fixtures.ts";

// Labels only a stale read of the config says are not Lisa's wait behind the commands surely hers,
// whenever they were stored; an issue's own commands stay in the order they were said (issue 38).

const unsure = (issue: string) => ({ priority: UNSURE_COMMAND, issue });
const sure = (issue: string) => ({ priority: SURE_COMMAND, issue });

async function order(commands: [string, { priority: number; issue: string }][]): Promise<string[]> {
  const store = new Store(testDatabaseUrl(tempDir("command-order")) ?? ":memory:");
  try {
    for (const [delivery, place] of commands) await store.commands.add(delivery, "start_run", {}, undefined, place);
    return (await store.commands.ready()).map((command) => command.delivery_id);
  } finally {
    await store.close();
  }
}

describe("the order in which stored commands are handed out", () => {
  it("puts a command surely Lisa's ahead of the unsure ones stored before it", async () => {
    const flood = Array.from({ length: 300 }, (_, i): [string, ReturnType<typeof unsure>] => [`topic-${i}`, unsure(`a/r${i}#1`)]);
    const ready = await order([...flood, ["lisa", sure("a/z#9")]]);
    expect(ready[0]).toBe("lisa");
    expect(ready.slice(1, 4)).toEqual(["topic-0", "topic-1", "topic-2"]);
  });

  it("takes an unsure command of an issue with a surer one at that one's priority, still ahead of it", async () => {
    const ready = await order([
      ["bug on #1", unsure("a/r#1")],
      ["bug on #2", unsure("a/r#2")],
      ["lisa on #3", sure("a/r#3")],
      ["lisa on #2", sure("a/r#2")],
    ]);
    expect(ready).toEqual(["bug on #2", "lisa on #3", "lisa on #2", "bug on #1"]);
  });
});
