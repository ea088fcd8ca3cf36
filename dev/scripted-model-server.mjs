#!/usr/bin/env node

// scripted-model-server.mjs — a dependency-free fake of the Anthropic Messages API
// and of the Gemini API that replays a per-test script of assistant turns, for driving
// the real Claude Code, OpenCode (Anthropic dialect) and Gemini CLI fully offline.
// Both dialects share one port, one script and one turn counter, so a test can let
// one CLI fail and the next one carry on.
//
//   Anthropic: POST /v1/messages (SSE when `stream`), /v1/messages/count_tokens, GET /v1/models
//   Gemini:    POST /v1beta/models/<model>:streamGenerateContent?alt=sse (SSE),
//              POST /v1beta/models/<model>:generateContent (JSON), :countTokens
//              (point the CLI at it with GOOGLE_GEMINI_BASE_URL=<url>)
//
// Node >= 18, ESM, node: built-ins only.
//
// ── Use as a program ────────────────────────────────────────────────────────
//   node scripted-model-server.mjs --script script.json [--port 0] [--host 127.0.0.1]
//        [--log requests.jsonl] [--port-file port.txt]
//   Prints one line `LISTENING <port>` on stdout once ready. SIGTERM/SIGINT stop it.
//
// ── Use as a module ─────────────────────────────────────────────────────────
//   import { startScriptedModelServer } from './scripted-model-server.mjs'
//   const srv = await startScriptedModelServer({ script, port: 0, logFile })
//   srv.url, srv.port, srv.requests (array), srv.mainRequests(), srv.toolResults(), srv.setScript(s), await srv.close()
//
// ── Script format (JSON) ────────────────────────────────────────────────────
//   {
//     "turns": [ STEP, ... ],        // consumed in order by "main" requests (see below)
//     "fallback": STEP,               // used once turns run out (default: text "Done.")
//     "side": STEP,                   // answer to "side" requests (default: text "OK")
//     "model": "claude-sonnet-4-5",  // model echoed back (default: the request's model)
//     "usage": { "input_tokens": 100, "output_tokens": 20 }   // reported per answer
//   }
//   STEP (one of; all may carry "delay_ms" — wait before answering — and "times": N
//   — the step answers N consecutive requests before the next step is taken — or instead
//   "while_model": "name" — it answers every request for that model, and the first request
//   for another model goes to the next step; for a CLI whose number of retries varies):
//     { "text": "final answer" }
//     { "text": "optional preface", "tool_use": [ { "name": "Write", "input": {...}, "id"?: "toolu_x" }, ... ] }
//     { "thinking": "...", "text": "..." }                 // adds a thinking block first
//     { "error": { "status": 429, "type": "rate_limit_error", "message": "...",
//                  "headers": { "retry-after": "0" } } }   // HTTP error with Anthropic error body
//     { "stream_error": { "type": "overloaded_error", "message": "..." } }  // 200 + SSE `event: error`
//     { "stall": true }                       // 200 + SSE headers, then nothing (socket kept open)
//     { "stall": true, "after_events": 1 }    // send the first N SSE events, then go silent
//     { "stall": true, "before_headers": true } // read the request, never answer at all
//     { "verdict": "FAIL", "reason": "...", "file"?: "a.md", "line"?: 3, "text"?: "preface" }
//                                             // a judge's answer: the preface, then the verdict JSON on its own line
//     { "drop": true }                        // destroy the socket before any response
//     { "drop": true, "after_events": 2 }     // send N SSE events, then destroy the socket
//   Strings inside tool inputs / text may use placeholders filled from the request:
//     {{CWD}}  – the working directory the CLI announces in its system prompt / context
//                (script-level "cwd" overrides it; falls back to the server's own cwd)
//     {{N}}    – the 1-based index of this main request
//
//   A request is "main" when its body carries a non-empty `tools` array (the agent
//   loop always sends its tools; for Gemini, function declarations); otherwise it is a
//   "side" request (title/summary generation, quota probes, Gemini's model router, …).
//   Set "main_when": "always" in the script to make every model request consume a turn.
//
//   For Gemini, the same STEPs are answered in its own shapes: "tool_use" entries become
//   `functionCall` parts (name the CLI's tools: write_file, run_shell_command, replace, …),
//   "thinking" a `thought` part, "usage" `usageMetadata` (its "thoughts_tokens" `thoughtsTokenCount`); "error" answers
//   `{"error":{"code","message","status"}}` with that HTTP status; a stream is one SSE event
//   per part (the last carries finishReason and usage), which is what "after_events" counts;
//   "stream_error" breaks the stream after the first part with the bare error object, as the
//   API does. Side requests asking for JSON (the model router) get a minimal object matching
//   their schema. Both dialects honour "stall", "drop", "delay_ms" and "times" alike.
//
// ── Control endpoints (for tests in another process) ───────────────────────
//   GET  /__scripted/requests   → JSON array of every recorded request
//   GET  /__scripted/tool_results → [{ tool_use_id, name, input, is_error, content }] from the client's tool_result blocks
//                                  (Gemini: functionResponse parts)
//   GET  /__scripted/state      → { turnIndex, mainCount, sideCount }
//   POST /__scripted/script     → replace the script (body = script JSON), resets counters
//   POST /__scripted/reset      → clear recorded requests and counters

import { randomBytes } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import { pathToFileURL } from "node:url";

const DEFAULT_USAGE = { input_tokens: 100, output_tokens: 20 };

function rid(prefix) {
  return prefix + randomBytes(12).toString("hex");
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

// Find the working directory the CLI tells the model about.
function findCwd(body) {
  const texts = [];
  const push = (v) => {
    if (typeof v === "string") texts.push(v);
    else if (Array.isArray(v)) for (const b of v) push(b && (b.text ?? b.content));
  };
  push(body?.system);
  for (const m of body?.messages || []) push(m.content);
  // Gemini: system instruction and contents are lists of parts.
  push(body?.systemInstruction?.parts);
  for (const c of body?.contents || []) push(c.parts);
  for (const t of texts) {
    // full prompt: " - Primary working directory: /path"; --bare prompt: "CWD: /path"
    const m = /(?:Primary working directory|Working directory|working directory is|^CWD)\s*:?\s*(\/[^\s`'"<>]*)/im.exec(t);
    if (m) return m[1];
    // Gemini CLI: "- **Workspace Directories:**\n  - /path"
    const g = /Workspace Directories:?\**\s*\n\s*-\s*(\/[^\s`'"<>]*)/i.exec(t);
    if (g) return g[1];
  }
  return process.cwd();
}

function fill(value, vars) {
  if (typeof value === "string") return value.replace(/\{\{(\w+)\}\}/g, (all, k) => (k in vars ? String(vars[k]) : all));
  if (Array.isArray(value)) return value.map((v) => fill(v, vars));
  if (value && typeof value === "object") {
    const out = {};
    for (const [k, v] of Object.entries(value)) out[k] = fill(v, vars);
    return out;
  }
  return value;
}

// Build the content blocks of an assistant answer from a step.
function buildContent(step, vars) {
  const content = [];
  if (step.thinking) content.push({ type: "thinking", thinking: fill(step.thinking, vars), signature: "c2lnbmF0dXJl" });
  if (typeof step.text === "string" && step.text.length) content.push({ type: "text", text: fill(step.text, vars) });
  for (const t of step.tool_use || []) {
    content.push({ type: "tool_use", id: t.id || rid("toolu_"), name: t.name, input: fill(t.input || {}, vars) });
  }
  if (!content.length) content.push({ type: "text", text: "" });
  return content;
}

function sseEvents(message) {
  const events = [];
  const { content, ...rest } = message;
  events.push([
    "message_start",
    {
      type: "message_start",
      message: { ...rest, content: [], stop_reason: null, stop_sequence: null, usage: { ...message.usage, output_tokens: 1 } },
    },
  ]);
  events.push(["ping", { type: "ping" }]);
  content.forEach((block, index) => {
    if (block.type === "text") {
      events.push(["content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } }]);
      // split text in two chunks to exercise delta accumulation
      const mid = Math.ceil(block.text.length / 2);
      for (const part of [block.text.slice(0, mid), block.text.slice(mid)]) {
        if (part)
          events.push(["content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: part } }]);
      }
    } else if (block.type === "thinking") {
      events.push([
        "content_block_start",
        { type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } },
      ]);
      events.push([
        "content_block_delta",
        { type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: block.thinking } },
      ]);
      events.push([
        "content_block_delta",
        { type: "content_block_delta", index, delta: { type: "signature_delta", signature: block.signature } },
      ]);
    } else if (block.type === "tool_use") {
      events.push([
        "content_block_start",
        { type: "content_block_start", index, content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } },
      ]);
      const json = JSON.stringify(block.input);
      const mid = Math.ceil(json.length / 2);
      events.push([
        "content_block_delta",
        { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: json.slice(0, mid) } },
      ]);
      events.push([
        "content_block_delta",
        { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: json.slice(mid) } },
      ]);
    }
    events.push(["content_block_stop", { type: "content_block_stop", index }]);
  });
  events.push([
    "message_delta",
    {
      type: "message_delta",
      delta: { stop_reason: message.stop_reason, stop_sequence: null },
      usage: { output_tokens: message.usage.output_tokens },
    },
  ]);
  events.push(["message_stop", { type: "message_stop" }]);
  return events;
}

// Every tool_result block the client sent back (deduplicated by tool_use_id, in order),
// with the tool name/input it answers: lets a test check that a scripted tool call
// really succeeded (the CLI reports tool failures to the model, not as is_error).
export function collectToolResults(requests) {
  const uses = new Map();
  const out = new Map();
  for (const r of requests) {
    // Gemini: functionCall parts answered by functionResponse parts with the same id (or name).
    for (const c of r.body?.contents || []) {
      for (const p of c.parts || []) {
        if (p.functionCall)
          uses.set(p.functionCall.id ?? p.functionCall.name, { name: p.functionCall.name, input: p.functionCall.args });
        const fr = p.functionResponse;
        const key = fr && (fr.id ?? fr.name);
        if (fr && !out.has(key)) {
          const response = fr.response || {};
          out.set(key, {
            tool_use_id: key,
            ...uses.get(key),
            is_error: response.error !== undefined,
            content: typeof response.output === "string" ? response.output : JSON.stringify(response.error ?? response),
          });
        }
      }
    }
    for (const m of r.body?.messages || []) {
      if (!Array.isArray(m.content)) continue;
      for (const b of m.content) {
        if (b.type === "tool_use") uses.set(b.id, { name: b.name, input: b.input });
        if (b.type === "tool_result" && !out.has(b.tool_use_id)) {
          const text = typeof b.content === "string" ? b.content : (b.content || []).map((c) => c.text ?? "").join("");
          out.set(b.tool_use_id, {
            tool_use_id: b.tool_use_id,
            ...uses.get(b.tool_use_id),
            is_error: !!b.is_error,
            content: text,
          });
        }
      }
    }
  }
  return [...out.values()];
}

// ── Gemini dialect ──────────────────────────────────────────────────────────

const GEMINI_ROUTE = /^\/v1(?:beta|alpha)?\/models\/([^/:]+):(streamGenerateContent|generateContent|countTokens)$/;
const GEMINI_STATUS = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

function geminiError(status, message) {
  return { error: { code: status, message: message || `scripted ${status}`, status: GEMINI_STATUS[status] || "UNKNOWN" } };
}

function geminiParts(step, vars) {
  const parts = [];
  if (step.thinking) parts.push({ text: fill(step.thinking, vars), thought: true });
  if (typeof step.text === "string" && step.text.length) parts.push({ text: fill(step.text, vars) });
  for (const t of step.tool_use || []) {
    // Gemini 3 models sign their function calls; this documented placeholder passes validation.
    parts.push({
      functionCall: { name: t.name, args: fill(t.input || {}, vars) },
      thoughtSignature: "skip_thought_signature_validator",
    });
  }
  if (!parts.length) parts.push({ text: "" });
  return parts;
}

// Side requests that ask for JSON (Gemini CLI's model router) get a minimal object matching the schema.
function geminiSideParts(body, script, vars) {
  const config = body.generationConfig || {};
  const schema = config.responseJsonSchema || config.responseSchema;
  if (config.responseMimeType !== "application/json" && !schema) return [{ text: fill(script.side?.text ?? "OK", vars) }];
  const object = {};
  for (const [key, property] of Object.entries(schema?.properties || {})) {
    const type = String(property.type || "").toLowerCase();
    if (property.enum) object[key] = property.enum.includes("flash") ? "flash" : property.enum[0];
    else if (type === "number" || type === "integer") object[key] = property.minimum ?? 1;
    else if (type === "boolean") object[key] = false;
    else object[key] = "scripted";
  }
  return [{ text: JSON.stringify(object) }];
}

// One streamed chunk per part; the last one carries finishReason and usage.
function geminiChunks(parts, usage, model) {
  const responseId = rid("resp_");
  // Thinking is counted apart from the answer, and in the total, as the API does.
  const thoughts = usage.thoughts_tokens ?? 0;
  const usageMetadata = {
    promptTokenCount: usage.input_tokens,
    candidatesTokenCount: usage.output_tokens,
    ...(thoughts ? { thoughtsTokenCount: thoughts } : {}),
    totalTokenCount: usage.input_tokens + usage.output_tokens + thoughts,
  };
  return parts.map((part, i) => {
    const last = i === parts.length - 1;
    return {
      candidates: [{ content: { role: "model", parts: [part] }, index: 0, ...(last ? { finishReason: "STOP" } : {}) }],
      ...(last ? { usageMetadata } : {}),
      modelVersion: model,
      responseId,
    };
  });
}

const geminiSse = (data) => `data: ${JSON.stringify(data)}\r\n\r\n`;

const sse = (name, data) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function startScriptedModelServer(opts = {}) {
  const host = opts.host || "127.0.0.1";
  const requests = [];
  const openSockets = new Set();
  let script = opts.script || { turns: [] };
  let turnIndex = 0; // index into script.turns
  let usedOfStep = 0; // how many requests the current step has answered (for "times")
  let mainCount = 0;
  let sideCount = 0;
  const logStream = opts.logFile ? fs.createWriteStream(opts.logFile, { flags: "a" }) : null;
  const quiet = !!opts.quiet;

  /** A `verdict` step is a text answer ending in the judge's JSON line; any other step is as written. */
  function asAnswer(found) {
    const { step } = found;
    if (step.verdict === undefined) return found;
    const { verdict, reason, file, line, text, ...rest } = step;
    const json = JSON.stringify({ verdict, reason, ...(file ? { file } : {}), ...(line ? { line } : {}) });
    return { ...found, step: { ...rest, text: `${text ? `${text}\n\n` : ""}${json}` } };
  }

  function nextMainStep(model) {
    return asAnswer(takeMainStep(model));
  }

  function takeMainStep(model) {
    const turns = script.turns || [];
    while (turnIndex < turns.length) {
      const step = turns[turnIndex];
      if (step.while_model !== undefined) {
        if (model === step.while_model) return { step, index: turnIndex };
        turnIndex++;
        usedOfStep = 0;
        continue;
      }
      const times = step.times ?? 1;
      if (usedOfStep < times) {
        usedOfStep++;
        return { step, index: turnIndex };
      }
      turnIndex++;
      usedOfStep = 0;
    }
    return { step: script.fallback || { text: "Done." }, index: -1 };
  }

  function record(entry) {
    requests.push(entry);
    if (logStream) logStream.write(`${JSON.stringify(entry)}\n`);
    if (!quiet && process.env.SCRIPTED_SERVER_VERBOSE)
      process.stderr.write(`[scripted] ${entry.method} ${entry.path} ${entry.kind || ""} ${entry.answer || ""}\n`);
  }

  function sendJson(res, status, obj, headers = {}) {
    const body = JSON.stringify(obj);
    res.writeHead(status, {
      "content-type": "application/json",
      "request-id": rid("req_"),
      "content-length": Buffer.byteLength(body),
      ...headers,
    });
    res.end(body);
  }

  // The step answering a request, and the placeholder values for it.
  function pickStep(isMain, body, entry) {
    let step;
    let n;
    if (isMain) {
      mainCount++;
      n = mainCount;
      const picked = nextMainStep(body?.model);
      step = picked.step;
      entry.turn = picked.index;
    } else {
      sideCount++;
      n = sideCount;
      step = script.side || { text: "OK" };
    }
    entry.kind = isMain ? "main" : "side";
    return { step, vars: { CWD: script.cwd || findCwd(body), N: n } };
  }

  async function answerMessages(req, res, body, entry) {
    const isMain = script.main_when === "always" || (Array.isArray(body.tools) && body.tools.length > 0);
    const { step, vars } = pickStep(isMain, body, entry);
    if (step.delay_ms) await sleep(step.delay_ms);

    if (step.error) {
      const e = step.error;
      const status = e.status || 500;
      const type =
        e.type ||
        (status === 429
          ? "rate_limit_error"
          : status === 529
            ? "overloaded_error"
            : status === 401
              ? "authentication_error"
              : status === 400
                ? "invalid_request_error"
                : "api_error");
      entry.answer = `error ${status} ${type}`;
      record(entry);
      return sendJson(res, status, { type: "error", error: { type, message: e.message || `scripted ${type}` } }, e.headers || {});
    }
    if (step.drop && !step.after_events) {
      entry.answer = "drop";
      record(entry);
      req.socket.destroy();
      return;
    }

    const usage = {
      ...DEFAULT_USAGE,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      ...(script.usage || {}),
      ...(step.usage || {}),
    };
    const content =
      step.stall || step.drop || step.stream_error
        ? [{ type: "text", text: fill(step.text || "", vars) }]
        : buildContent(step, vars);
    const message = {
      id: rid("msg_"),
      type: "message",
      role: "assistant",
      model: script.model || body.model || "claude-scripted",
      content,
      stop_reason: content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn",
      stop_sequence: null,
      usage,
    };

    if (!body.stream) {
      // The CLI falls back to a non-streaming request when a stream breaks mid-way;
      // failure steps apply to those too.
      if (step.stall) {
        entry.answer = "stall (non-stream)";
        record(entry);
        return; // never answer
      }
      if (step.drop) {
        entry.answer = "drop (non-stream)";
        record(entry);
        req.socket.destroy();
        return;
      }
      if (step.stream_error) {
        const type = step.stream_error.type || "overloaded_error";
        const status = step.stream_error.status || (type === "overloaded_error" ? 529 : type === "rate_limit_error" ? 429 : 500);
        entry.answer = `error ${status} ${type} (non-stream)`;
        record(entry);
        return sendJson(res, status, { type: "error", error: { type, message: step.stream_error.message || "Overloaded" } });
      }
      entry.answer = `json ${message.stop_reason}`;
      entry.response = message;
      record(entry);
      return sendJson(res, 200, message);
    }

    if (step.stall && step.before_headers) {
      entry.answer = "stall before headers";
      record(entry);
      return; // request read, nothing ever written
    }
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      connection: "keep-alive",
      "request-id": rid("req_"),
    });
    res.flushHeaders();
    const events = sseEvents(message);
    if (step.stall) {
      entry.answer = `stall after ${step.after_events || 0} events`;
      record(entry);
      for (const [name, data] of events.slice(0, step.after_events || 0)) res.write(sse(name, data));
      return; // keep the socket open, say nothing more
    }
    if (step.drop) {
      entry.answer = `drop after ${step.after_events} events`;
      record(entry);
      for (const [name, data] of events.slice(0, step.after_events)) res.write(sse(name, data));
      setTimeout(() => req.socket.destroy(), 20);
      return;
    }
    if (step.stream_error) {
      entry.answer = `stream error ${step.stream_error.type}`;
      record(entry);
      res.write(sse("message_start", events[0][1]));
      res.end(
        sse("error", {
          type: "error",
          error: { type: step.stream_error.type || "overloaded_error", message: step.stream_error.message || "Overloaded" },
        }),
      );
      return;
    }
    entry.answer = `stream ${message.stop_reason}`;
    entry.response = message;
    record(entry);
    for (const [name, data] of events) res.write(sse(name, data));
    res.end();
  }

  async function answerGemini(req, res, body, entry, model, method) {
    const isMain =
      script.main_when === "always" ||
      (Array.isArray(body.tools) && body.tools.some((t) => (t.functionDeclarations || []).length > 0));
    const { step, vars } = pickStep(isMain, body, entry);
    if (step.delay_ms) await sleep(step.delay_ms);
    const stream = method === "streamGenerateContent";

    if (step.error) {
      const status = step.error.status || 500;
      entry.answer = `error ${status}`;
      record(entry);
      return sendJson(res, status, geminiError(status, step.error.message), step.error.headers || {});
    }
    if (step.drop && (!step.after_events || !stream)) {
      entry.answer = stream ? "drop" : "drop (non-stream)";
      record(entry);
      req.socket.destroy();
      return;
    }
    if (step.stall && (step.before_headers || !stream)) {
      entry.answer = stream ? "stall before headers" : "stall (non-stream)";
      record(entry);
      return; // request read, nothing ever written
    }
    if (step.stream_error && !stream) {
      const status = step.stream_error.status || 500;
      entry.answer = `error ${status} (non-stream)`;
      record(entry);
      return sendJson(res, status, geminiError(status, step.stream_error.message));
    }
    const usage = { ...DEFAULT_USAGE, ...(script.usage || {}), ...(step.usage || {}) };
    const failing = step.stall || step.drop || step.stream_error;
    const parts = failing
      ? [{ text: fill(step.text || "", vars) }]
      : isMain
        ? geminiParts(step, vars)
        : geminiSideParts(body, script, vars);
    const chunks = geminiChunks(parts, usage, script.model || model);

    if (!stream) {
      const response = { ...chunks.at(-1), candidates: [{ ...chunks.at(-1).candidates[0], content: { role: "model", parts } }] };
      entry.answer = "json";
      entry.response = response;
      record(entry);
      return sendJson(res, 200, response);
    }

    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    res.flushHeaders();
    if (failing) {
      // A stream that breaks off never gets to its finish reason.
      const partial = chunks.map(({ usageMetadata, ...chunk }) => ({
        ...chunk,
        candidates: [{ content: chunk.candidates[0].content, index: 0 }],
      }));
      if (step.stall) {
        entry.answer = `stall after ${step.after_events || 0} events`;
        record(entry);
        for (const chunk of partial.slice(0, step.after_events || 0)) res.write(geminiSse(chunk));
        return; // keep the socket open, say nothing more
      }
      if (step.drop) {
        entry.answer = `drop after ${step.after_events} events`;
        record(entry);
        for (const chunk of partial.slice(0, step.after_events)) res.write(geminiSse(chunk));
        setTimeout(() => req.socket.destroy(), 20);
        return;
      }
      const status = step.stream_error.status || 500;
      entry.answer = `stream error ${status}`;
      record(entry);
      res.write(geminiSse(partial[0]));
      // The API breaks off a stream with a bare JSON error object, not an SSE event; the SDK only
      // recognises it when it arrives as a network chunk of its own.
      await sleep(20);
      res.end(JSON.stringify(geminiError(status, step.stream_error.message)));
      return;
    }
    entry.answer = `stream ${isMain ? parts.map((p) => (p.functionCall ? p.functionCall.name : "text")).join(",") : "side"}`;
    entry.response = chunks;
    record(entry);
    for (const chunk of chunks) res.write(geminiSse(chunk));
    res.end();
  }

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, "http://x");
    const raw = await readBody(req).catch(() => Buffer.alloc(0));
    let body = null;
    if (raw.length) {
      try {
        body = JSON.parse(raw.toString("utf8"));
      } catch {
        body = raw.toString("utf8");
      }
    }
    const entry = {
      ts: new Date().toISOString(),
      method: req.method,
      path: url.pathname,
      query: url.search || undefined,
      headers: req.headers,
      body,
    };

    try {
      // control endpoints
      if (url.pathname === "/__scripted/requests") return sendJson(res, 200, requests);
      if (url.pathname === "/__scripted/tool_results") return sendJson(res, 200, collectToolResults(requests));
      if (url.pathname === "/__scripted/state")
        return sendJson(res, 200, { turnIndex, mainCount, sideCount, requests: requests.length });
      if (url.pathname === "/__scripted/script" && req.method === "POST") {
        script = body || { turns: [] };
        turnIndex = usedOfStep = mainCount = sideCount = 0;
        return sendJson(res, 200, { ok: true });
      }
      if (url.pathname === "/__scripted/reset" && req.method === "POST") {
        requests.length = 0;
        turnIndex = usedOfStep = mainCount = sideCount = 0;
        return sendJson(res, 200, { ok: true });
      }

      if (req.method === "POST" && url.pathname === "/v1/messages") return await answerMessages(req, res, body || {}, entry);

      const gemini = req.method === "POST" ? GEMINI_ROUTE.exec(url.pathname) : null;
      if (gemini?.[2] === "countTokens") {
        const n = Math.max(1, Math.ceil(raw.length / 4));
        entry.answer = `countTokens ${n}`;
        record(entry);
        return sendJson(res, 200, { totalTokens: n });
      }
      if (gemini) return await answerGemini(req, res, body || {}, entry, decodeURIComponent(gemini[1]), gemini[2]);

      if (req.method === "POST" && url.pathname === "/v1/messages/count_tokens") {
        const n = Math.max(1, Math.ceil(raw.length / 4));
        entry.answer = `count_tokens ${n}`;
        record(entry);
        return sendJson(res, 200, { input_tokens: n });
      }
      if (req.method === "GET" && (url.pathname === "/v1/models" || url.pathname.startsWith("/v1/models/"))) {
        const models = (script.models || ["claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5"]).map((id) => ({
          type: "model",
          id,
          display_name: id,
          created_at: "2025-01-01T00:00:00Z",
        }));
        entry.answer = "models";
        record(entry);
        if (url.pathname !== "/v1/models") {
          const id = decodeURIComponent(url.pathname.slice("/v1/models/".length));
          return sendJson(res, 200, { type: "model", id, display_name: id, created_at: "2025-01-01T00:00:00Z" });
        }
        return sendJson(res, 200, {
          data: models,
          has_more: false,
          first_id: models[0]?.id ?? null,
          last_id: models.at(-1)?.id ?? null,
        });
      }
      if (req.method === "HEAD" || (req.method === "GET" && url.pathname === "/")) {
        entry.answer = "root";
        record(entry);
        return sendJson(res, 200, { ok: true });
      }
      entry.answer = "404";
      record(entry);
      return sendJson(res, 404, {
        type: "error",
        error: { type: "not_found_error", message: `scripted server: no route ${req.method} ${url.pathname}` },
      });
    } catch (err) {
      entry.answer = `500 ${err?.message}`;
      record(entry);
      if (!res.headersSent)
        sendJson(res, 500, { type: "error", error: { type: "api_error", message: String(err?.message || err) } });
      else res.destroy();
    }
  });
  server.on("connection", (s) => {
    openSockets.add(s);
    s.on("close", () => openSockets.delete(s));
  });
  server.keepAliveTimeout = 1000;

  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, host, resolve);
  });
  const port = server.address().port;

  return {
    port,
    url: `http://${host}:${port}`,
    requests,
    mainRequests: () => requests.filter((r) => r.kind === "main"),
    toolResults: () => collectToolResults(requests),
    state: () => ({ turnIndex, mainCount, sideCount }),
    setScript(s) {
      script = s;
      turnIndex = usedOfStep = mainCount = sideCount = 0;
    },
    close() {
      for (const s of openSockets) s.destroy();
      return new Promise((r) => server.close(() => (logStream ? logStream.end(r) : r())));
    },
  };
}

// ── command-line entry ──────────────────────────────────────────────────────
if (import.meta.url === pathToFileURL(process.argv[1] || "").href) {
  const args = process.argv.slice(2);
  const opt = (name, dflt) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : dflt;
  };
  const scriptPath = opt("--script");
  const script = scriptPath ? JSON.parse(fs.readFileSync(scriptPath, "utf8")) : { turns: [] };
  const srv = await startScriptedModelServer({
    script,
    port: Number(opt("--port", "0")),
    host: opt("--host", "127.0.0.1"),
    logFile: opt("--log"),
  });
  const portFile = opt("--port-file");
  if (portFile) {
    // Renamed into place whole, so a reader never sees an empty file.
    fs.writeFileSync(`${portFile}.tmp`, String(srv.port));
    fs.renameSync(`${portFile}.tmp`, portFile);
  }
  process.stdout.write(`LISTENING ${srv.port}\n`);
  const stop = async () => {
    await srv.close();
    process.exit(0);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
