import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { startEmulatedLisa } from "../../dev/emulated-lisa.ts";
import { createFakeClaude } from "../../dev/fake-agent.ts";
import type { Delivery, RecordedRequest } from "../../emulator/github-emulator.ts";

// The emulator and Lisa held to GitHub's published OpenAPI description (@octokit/openapi): every
// route the emulator answers is an operation GitHub has; every request Lisa sends in a run that
// goes round two passes and is accepted is one, with only the body fields GitHub takes, of their
// types, the required ones present; every webhook the emulator sends in that run carries every
// field GitHub's schema for it requires, of its type; and every field of the emulator's answers
// that GitHub documents has GitHub's type. (The emulator answers a subset of each object on
// purpose, so fields GitHub has and the emulator leaves out of an answer are not counted.)

interface Schema {
  $ref?: string;
  type?: string;
  nullable?: boolean;
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  items?: Schema;
  required?: string[];
  enum?: unknown[];
  allOf?: Schema[];
  anyOf?: Schema[];
  oneOf?: Schema[];
}
interface Operation {
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}
interface Description {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

const require = createRequire(import.meta.url);
// The non-dereferenced file: 13 MB instead of 73, and its $refs are resolved on demand below.
const DESCRIPTION_FILE = path.join(
  path.dirname(require.resolve("@octokit/openapi/package.json")),
  "generated",
  "api.github.com.json",
);

let description: Description;
beforeAll(() => {
  description = JSON.parse(readFileSync(DESCRIPTION_FILE, "utf8")) as Description;
});

/** `/repos/:owner/:repo/contents/*path` and `/repos/{owner}/{repo}/contents/{path}` alike: `/repos/{}/{}/contents/{}`. */
const shape = (template: string) => template.replace(/[:*]\w+|\{\w+\}/g, "{}");

/** GitHub's operation for `method` on a path template (the emulator's `:name` or OpenAPI's `{name}`). */
function operationOf(method: string, template: string): Operation | undefined {
  const wanted = shape(template);
  const documented = Object.keys(description.paths).find((p) => shape(p) === wanted);
  return documented ? description.paths[documented]?.[method.toLowerCase()] : undefined;
}

function resolve(schema: Schema): Schema {
  let resolved = schema;
  while (resolved.$ref) {
    const name = resolved.$ref.replace("#/components/schemas/", "");
    const target = description.components.schemas[name];
    if (!target) throw new Error(`unresolvable ${resolved.$ref}`);
    resolved = target;
  }
  return resolved;
}

/**
 * What is held to `schema`: a request Lisa sends, in full (no field GitHub does not take, the
 * required ones, enums); a webhook payload the emulator sends, as GitHub's schema for it says
 * (the required fields, enums, types; more fields may come); an answer of the emulator, only the
 * types of the documented fields it returns (it answers a subset of each object on purpose).
 */
type Held = "request" | "payload" | "answer";

/** Where `value` is not what `schema` describes, as `where: what` lines (see Held). */
function mismatches(value: unknown, raw: Schema, where: string, held: Held): string[] {
  const strict = held !== "answer";
  const schema = resolve(raw);
  if (schema.allOf) return schema.allOf.flatMap((part) => mismatches(value, part, where, held));
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) {
    const tried = branches.map((branch) => mismatches(value, branch, where, held));
    return tried.some((problems) => problems.length === 0) ? [] : (tried.sort((a, b) => a.length - b.length)[0] ?? []);
  }
  if (value === null) return schema.nullable || schema.type === "null" ? [] : [`${where}: null, GitHub says ${schema.type}`];
  if (schema.enum && strict && !schema.enum.includes(value))
    return [`${where}: ${JSON.stringify(value)} is none of ${schema.enum.join(", ")}`];
  switch (schema.type) {
    case "object": {
      if (typeof value !== "object" || Array.isArray(value)) return [`${where}: ${typeof value}, GitHub says object`];
      const record = value as Record<string, unknown>;
      const problems = strict
        ? (schema.required ?? [])
            .filter((name) => !(name in record))
            .map((name) => `${where}.${name}: missing, GitHub requires it`)
        : [];
      for (const [name, field] of Object.entries(record)) {
        const documented =
          schema.properties?.[name] ??
          (typeof schema.additionalProperties === "object" ? schema.additionalProperties : undefined);
        if (documented) problems.push(...mismatches(field, documented, `${where}.${name}`, held));
        else if (held === "request" && schema.additionalProperties !== true)
          problems.push(`${where}.${name}: GitHub does not take it`);
      }
      return problems;
    }
    case "array":
      if (!Array.isArray(value)) return [`${where}: ${typeof value}, GitHub says array`];
      return schema.items ? value.flatMap((item, i) => mismatches(item, schema.items as Schema, `${where}[${i}]`, held)) : [];
    case "integer":
      return Number.isInteger(value) ? [] : [`${where}: ${JSON.stringify(value)}, GitHub says integer`];
    case "number":
      return typeof value === "number" ? [] : [`${where}: ${JSON.stringify(value)}, GitHub says number`];
    case "string":
    case "boolean":
      return typeof value === schema.type ? [] : [`${where}: ${JSON.stringify(value)}, GitHub says ${schema.type}`];
    default:
      return [];
  }
}

/** The JSON schema of an operation's request body or of its answer with `status`. */
const requestSchema = (operation: Operation) => operation.requestBody?.content?.["application/json"]?.schema;
const responseSchema = (operation: Operation, status: number) =>
  operation.responses?.[String(status)]?.content?.["application/json"]?.schema;

describe("the emulator against GitHub's OpenAPI description", () => {
  it("tells a body GitHub would refuse: a wrong type, a field it does not take, a required one missing", () => {
    const comment = operationOf("POST", "/repos/:owner/:repo/issues/:issue_number/comments");
    const schema = comment && requestSchema(comment);
    if (!schema) throw new Error("GitHub's description has no comment body");
    expect(mismatches({ body: "Hi" }, schema, "body", "request")).toEqual([]);
    expect(mismatches({ body: 5, bodyy: "Hi" }, schema, "body", "request")).toEqual([
      "body.body: 5, GitHub says string",
      "body.bodyy: GitHub does not take it",
    ]);
    expect(mismatches({}, schema, "body", "request")).toEqual(["body.body: missing, GitHub requires it"]);
  });

  it("answers only operations GitHub has, with the same method and path", async () => {
    const agent = createFakeClaude([]);
    const env = await startEmulatedLisa({ claudeBinary: agent.binary });
    try {
      // GraphQL is not part of the REST description; the review decision is read there.
      const routes = env.github.routes().filter((route) => route.pattern !== "/graphql");
      expect(routes.length).toBeGreaterThan(25);
      expect(routes.filter((route) => !operationOf(route.method, route.pattern)).map((r) => `${r.method} ${r.pattern}`)).toEqual(
        [],
      );
    } finally {
      await env.stop();
    }
  });

  describe("in a run that goes round two passes and is accepted", () => {
    const exchanges: { request: RecordedRequest; sent: unknown; answered: unknown }[] = [];
    let deliveries: Delivery[] = [];
    beforeAll(async () => {
      const agent = createFakeClaude([
        { write: { "health.ts": "v1\n" }, manifest: { title: "Add a health check", what: "v1." } },
        { write: { "health.ts": "v2\n" }, manifest: { title: "Add a health check", what: "v2." } },
      ]);
      const env = await startEmulatedLisa({ claudeBinary: agent.binary });
      try {
        const { github } = env;
        github.beforeAnswer((request, bodies) => exchanges.push({ request, sent: bodies.request, answered: bodies.response }));
        await github.createRepo("acme/api", {
          files: { "README.md": "# API\n" },
          config: "label: lisa\ngates:\n  - test -f health.ts\n",
          // CI, for its check_run, check_suite and status webhooks.
          ci: [{ name: "test" }, { name: "ci/lint", as: "status" }],
        });
        github.addCollaborator("acme/api", "ann", "write");
        const issue = await github.createIssue("acme/api", { title: "Add a health check", body: "Add it.", user: "ann" });
        await github.labelIssue("acme/api", issue.number, "lisa", "ann");
        await env.settle();
        const [pull] = github.pulls("acme/api");
        if (!pull) throw new Error("no pull request");
        await github.commentOnIssue("acme/api", pull.number, "/lisa redirect make it v2", "ann");
        await env.settle();
        await github.submitReview("acme/api", pull.number, { state: "APPROVED", body: "", user: "ann" });
        await env.settle();
        deliveries = github.deliveries();
      } finally {
        await env.stop();
      }
    }, 120_000);

    it("sends only documented operations, with the body fields GitHub takes, of their types", () => {
      const api = exchanges.filter((e) => e.request.route !== "/graphql");
      expect(api.length).toBeGreaterThan(20);
      // Every operation Lisa used, so a new one is seen here first.
      const used = [...new Set(api.map((e) => `${e.request.method} ${e.request.route}`))];
      expect(used.length).toBeGreaterThan(12);
      const problems = api.flatMap(({ request, sent }) => {
        const operation = request.route ? operationOf(request.method, request.route) : undefined;
        if (!operation) return [`${request.method} ${request.path}: no such operation on GitHub`];
        const schema = requestSchema(operation);
        if (sent === undefined) return [];
        if (!schema) return [`${request.method} ${request.route}: GitHub takes no JSON body`];
        return mismatches(sent, schema, `${request.method} ${request.route} body`, "request");
      });
      expect([...new Set(problems)]).toEqual([]);
    });

    it("sends each webhook as GitHub's schema for it says: the required fields, of their types", () => {
      const sent = deliveries.filter((d) => d.error !== "not subscribed");
      // Every kind of webhook Lisa got, so a new one is held to its schema here first.
      const kinds = [...new Set(sent.map((d) => (d.action ? `${d.event}.${d.action}` : d.event)))];
      expect(kinds).toEqual(expect.arrayContaining(["issues.labeled", "issue_comment.created", "pull_request_review.submitted"]));
      expect(kinds).toEqual(expect.arrayContaining(["check_run.completed", "check_suite.completed", "status"]));
      const problems = sent.flatMap((delivery) => {
        const name = `webhook-${[delivery.event, delivery.action].filter(Boolean).join("-").replaceAll("_", "-")}`;
        const schema = description.components.schemas[name];
        if (!schema) return [`${name}: GitHub documents no such webhook`];
        return mismatches(delivery.payload, schema, name, "payload");
      });
      expect([...new Set(problems)]).toEqual([]);
      // And it would tell: a required field missing, one of the wrong type.
      const labeled = sent.find((d) => d.event === "issues" && d.action === "labeled");
      const issue = { ...(labeled?.payload.issue as object), number: "1" } as Record<string, unknown>;
      delete issue.user;
      const broken = { ...labeled?.payload, issue };
      expect(mismatches(broken, description.components.schemas["webhook-issues-labeled"] ?? {}, "p", "payload")).toEqual([
        "p.issue.user: missing, GitHub requires it",
        'p.issue.number: "1", GitHub says integer',
      ]);
    });

    it("answers each with GitHub's types for every documented field it returns", () => {
      const problems = exchanges
        // A string answer is raw content, asked for with GitHub's raw media type (the config file).
        .filter(
          (e) =>
            e.request.route &&
            e.request.route !== "/graphql" &&
            e.request.status < 300 &&
            e.answered !== undefined &&
            typeof e.answered !== "string",
        )
        .flatMap(({ request, answered }) => {
          const operation = operationOf(request.method, request.route ?? "");
          const schema = operation && responseSchema(operation, request.status);
          if (!schema)
            return [`${request.method} ${request.route} ${request.status}: GitHub documents no JSON answer with this status`];
          return mismatches(answered, schema, `${request.method} ${request.route} → ${request.status}`, "answer");
        });
      expect([...new Set(problems)]).toEqual([]);
    });
  });
});
