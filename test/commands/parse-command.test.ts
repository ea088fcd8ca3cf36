import { describe, expect, it } from "vitest";
import { COMMAND_NAMES, parseCommand } from "../../src/commands/parse-command.ts";

describe("parseCommand", () => {
  it.each(COMMAND_NAMES)("reads /lisa %s", (name) => {
    expect(parseCommand(`/lisa ${name}`)).toEqual({ name, word: name, text: "" });
  });

  it("knows the ten commands of §3", () => {
    expect([...COMMAND_NAMES].sort()).toEqual(
      ["abort", "accept", "continue", "fix", "help", "proceed", "redirect", "retry", "skip", "status"].sort(),
    );
  });

  it.each([
    ["/LISA RETRY", "retry"],
    ["/Lisa Redirect use v2", "redirect"],
    ["/lisa SkIp", "skip"],
  ])("reads %j case-insensitively as %s", (body, name) => {
    expect(parseCommand(body)?.name).toBe(name);
  });

  it("keeps the word as written, lowercased, for the reply to an unknown command", () => {
    expect(parseCommand("/lisa Frobnicate now")).toEqual({ name: "unknown", word: "frobnicate", text: "now" });
  });

  it.each([
    ["/lisa retry2", "retry2"],
    ["/lisa fix_it now", "fix_it"],
  ])("reads a word glued to a command (%j) as unknown, not as the command", (body, word) => {
    expect(parseCommand(body)).toMatchObject({ name: "unknown", word });
  });

  it.each(["/lisa", "/lisa   ", "/lisa\t", "Hi\n/lisa\nthanks"])("reads a bare /lisa (%j) as help", (body) => {
    expect(parseCommand(body)?.name).toBe("help");
  });

  it("keeps the text of a redirect, trimmed", () => {
    expect(parseCommand("/lisa redirect   use the v2 endpoint  ")).toEqual({
      name: "redirect",
      word: "redirect",
      text: "use the v2 endpoint",
    });
  });

  it("keeps a redirect's text across lines, blank lines and lists included", () => {
    const body = "/lisa redirect use the v2 endpoint\n\n- keep the v1 fallback\n- add a test\n```ts\nfetch('/v2')\n```";
    expect(parseCommand(body)?.text).toBe(
      "use the v2 endpoint\n\n- keep the v1 fallback\n- add a test\n```ts\nfetch('/v2')\n```",
    );
  });

  it("takes a redirect whose text starts on the next line", () => {
    expect(parseCommand("/lisa redirect\nuse the v2 endpoint\nplease")).toMatchObject({
      name: "redirect",
      text: "use the v2 endpoint\nplease",
    });
  });

  it("keeps the notes of /lisa fix", () => {
    expect(parseCommand("/lisa fix the flaky test needs a longer timeout")).toMatchObject({
      name: "fix",
      text: "the flaky test needs a longer timeout",
    });
  });

  it("finds a command on a later line of a comment, review body or inline comment", () => {
    expect(parseCommand("Looks good overall.\n\n/lisa redirect polish the docs")).toEqual({
      name: "redirect",
      word: "redirect",
      text: "polish the docs",
    });
  });

  it("takes the first command when a body has several", () => {
    expect(parseCommand("/lisa status\n/lisa abort")).toMatchObject({ name: "status", text: "/lisa abort" });
  });

  it.each([
    ["CRLF", "Thanks\r\n/lisa redirect use v2\r\nand log it\r\n"],
    ["CR", "Thanks\r/lisa redirect use v2\rand log it\r"],
  ])("reads a body with %s line ends, and gives the text with \\n", (_ends, body) => {
    expect(parseCommand(body)).toEqual({ name: "redirect", word: "redirect", text: "use v2\nand log it" });
  });

  it("finds a command after a closed code block, and keeps code its text quotes", () => {
    expect(parseCommand("```\n/lisa abort\n```\n/lisa redirect use this:\n```ts\nexport const x = 1;\n```")).toEqual({
      name: "redirect",
      word: "redirect",
      text: "use this:\n```ts\nexport const x = 1;\n```",
    });
  });

  it("accepts a tab between /lisa and the command", () => {
    expect(parseCommand("/lisa\tabort")?.name).toBe("abort");
  });

  it.each([
    ["a body without a command", "lisa retry please"],
    ["an empty body", ""],
    ["a word that only starts with /lisa", "/lisafoo retry"],
    ["/lisa glued to a hyphen", "/lisa-retry"],
    ["a command in the middle of a line", "please /lisa retry"],
    ["a command after a quote marker", "> /lisa retry"],
    ["an indented command", "  /lisa retry"],
    ["a path that contains /lisa", "see docs/lisa retry"],
    ["a fenced code block", "The bot said:\n```\n/lisa retry\n```\n"],
    ["a tilde fence", "~~~text\n/lisa abort\n~~~"],
    ["a fence left open to the end", "Log:\n````\n/lisa abort\n```\n/lisa retry"],
  ])("finds none in %s", (_what, body) => {
    expect(parseCommand(body)).toBeUndefined();
  });
});
