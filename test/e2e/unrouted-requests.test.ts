import { describe, expect, it } from "vitest";
import { startEmulatedLisa } from "../../dev/emulated-lisa.ts";

// GitHub mocked at the HTTP layer fails the test on a request it has no answer for: a test must
// not pass while Lisa talks to nothing. The emulator answers such a request 404, which Lisa may
// catch and go on; the harness's stop fails instead, naming it.

describe("a request the emulator has no route for", () => {
  it("fails the emulated Lisa's stop, which names it", async () => {
    const env = await startEmulatedLisa({ claudeBinary: "/bin/false" });
    const token = env.github.createInstallationToken();
    const answer = await fetch(`${env.github.url}/repos/acme/api/traffic/views`, {
      headers: { authorization: `token ${token}` },
    });
    expect(answer.status).toBe(404);

    await expect(env.stop()).rejects.toThrow(
      "requests to the GitHub emulator that no route answers:\nGET /repos/acme/api/traffic/views",
    );
  });

  it("is let through when the test says it sends it on purpose", async () => {
    const env = await startEmulatedLisa({ claudeBinary: "/bin/false", unroutedAllowed: /^GET \/repos\/acme\/api\/traffic\// });
    await fetch(`${env.github.url}/repos/acme/api/traffic/views`);

    await expect(env.stop()).resolves.toBeUndefined();
  });
});
