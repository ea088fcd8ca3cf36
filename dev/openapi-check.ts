// Requests and answers held to one of GitHub's published OpenAPI descriptions (@octokit/openapi):
// api.github.com or a GHES release. Used by the emulator's contract test and by
// scripts/validate-requests.ts, which checks every request a whole suite run sent.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

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

/** The descriptions a request must hold for: GitHub.com and the GHES releases Lisa supports. */
export const API_DESCRIPTIONS = ["api.github.com", "ghes-3.17", "ghes-3.18", "ghes-3.19"] as const;
export type ApiDescriptionName = (typeof API_DESCRIPTIONS)[number];

/**
 * What is held to a schema: a request Lisa sends, in full (no field GitHub does not take, the
 * required ones, enums); a webhook payload the emulator sends, as GitHub's schema for it says (the
 * required fields, enums, types; more fields may come); an answer of the emulator, only the types
 * of the documented fields it returns (it answers a subset of each object on purpose).
 */
type Held = "request" | "payload" | "answer";

const require = createRequire(import.meta.url);

/** `/repos/:owner/:repo/contents/*path` and `/repos/{owner}/{repo}/contents/{path}` alike: `/repos/{}/{}/contents/{}`. */
const shape = (template: string) => template.replace(/[:*]\w+|\{\w+\}/g, "{}");

/** A checker for one description; the non-dereferenced file (13 MB, not 73) with $refs resolved on demand. */
export function openApiChecker(name: ApiDescriptionName = "api.github.com") {
  const file = path.join(path.dirname(require.resolve("@octokit/openapi/package.json")), "generated", `${name}.json`);
  const description = JSON.parse(readFileSync(file, "utf8")) as Description;
  const byShape = new Map<string, Record<string, Operation>>();
  for (const [documented, operations] of Object.entries(description.paths)) byShape.set(shape(documented), operations);

  /** GitHub's operation for `method` on a path template (the emulator's `:name` or OpenAPI's `{name}`). */
  const operationOf = (method: string, template: string): Operation | undefined =>
    byShape.get(shape(template))?.[method.toLowerCase()];

  function resolve(schema: Schema): Schema {
    let resolved = schema;
    while (resolved.$ref) {
      const target = description.components.schemas[resolved.$ref.replace("#/components/schemas/", "")];
      if (!target) throw new Error(`unresolvable ${resolved.$ref}`);
      resolved = target;
    }
    return resolved;
  }

  /** Where `value` is not what `schema` describes, as `where: what` lines (see Held). */
  function mismatches(value: unknown, raw: Schema, where: string, held: Held): string[] {
    const schema = resolve(raw);
    const strict = held !== "answer";
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
              .filter((field) => !(field in record))
              .map((field) => `${where}.${field}: missing, GitHub requires it`)
          : [];
        for (const [field, fieldValue] of Object.entries(record)) {
          const documented =
            schema.properties?.[field] ??
            (typeof schema.additionalProperties === "object" ? schema.additionalProperties : undefined);
          if (documented) problems.push(...mismatches(fieldValue, documented, `${where}.${field}`, held));
          else if (held === "request" && schema.additionalProperties !== true)
            problems.push(`${where}.${field}: GitHub does not take it`);
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

  return {
    name,
    operationOf,
    /** Why GitHub would not take this request: no such operation, or a body it refuses (none when it would). */
    requestProblems(method: string, route: string, body: unknown): string[] {
      const operation = operationOf(method, route);
      if (!operation) return [`${method} ${route}: no such operation`];
      if (body === undefined) return [];
      const schema = operation.requestBody?.content?.["application/json"]?.schema;
      if (!schema) return [`${method} ${route}: GitHub takes no JSON body`];
      return mismatches(body, schema, `${method} ${route} body`, "request");
    },
    /** Where an answer's documented fields have another type than GitHub's (extra fields are not counted). */
    answerProblems(method: string, route: string, status: number, body: unknown): string[] {
      const schema = operationOf(method, route)?.responses?.[String(status)]?.content?.["application/json"]?.schema;
      if (!schema) return [`${method} ${route} ${status}: GitHub documents no JSON answer with this status`];
      return mismatches(body, schema, `${method} ${route} → ${status}`, "answer");
    },
    /** Where a webhook payload is not what GitHub's schema for its event and action says. */
    payloadProblems(event: string, action: string | undefined, payload: unknown): string[] {
      const name = `webhook-${[event, action].filter(Boolean).join("-").replaceAll("_", "-")}`;
      const schema = description.components.schemas[name];
      if (!schema) return [`${name}: GitHub documents no such webhook`];
      return mismatches(payload, schema, name, "payload");
    },
  };
}
export type OpenApiChecker = ReturnType<typeof openApiChecker>;
