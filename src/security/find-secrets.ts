import { MIN_SECRET_LENGTH } from "./held-secrets.ts";
import { SECRET_SHAPES } from "./secret-shapes.ts";

// One matcher for every place Lisa looks for secrets: the text it publishes (redacted) and the
// objects it pushes (refused). A held value is found as it is, cut across lines, reversed, in base64
// (each alignment, both alphabets), in hex or percent-encoded; a secret shape as it is, reversed,
// percent-encoded, or inside a base64 or hex run that decodes to one.

/** What one held value looks like in each form Lisa looks for. */
interface Needles {
  plain: string;
  reversed: string;
  base64: string[];
  hex: string;
}

export const HELD_KIND = "a secret Lisa holds (a key, a token or one of its own credentials)";

/** One secret found: where in the text (UTF-16 offsets) and what kind, for a refusal that never shows the value. */
export interface SecretFound {
  start: number;
  end: number;
  kind: string;
}

const cache = new Map<string, Needles>();

/** The forms of `secret` (its UTF-8 bytes, or its latin1 bytes when `bytes`: an object read one character per byte). */
function needlesOf(secret: string, bytes: boolean): Needles {
  const key = `${bytes ? "b" : "t"}${secret}`;
  const known = cache.get(key);
  if (known) return known;
  const utf8 = Buffer.from(secret, "utf8");
  const plain = bytes ? utf8.toString("latin1") : secret;
  const base64: string[] = [];
  // The secret's bytes may start at any offset of a larger blob, so at three alignments against
  // base64's groups of three; the characters that also encode the bytes around it differ, the inner ones do not.
  for (let shift = 0; shift < 3; shift++) {
    const encoded = Buffer.concat([Buffer.alloc(shift), utf8]).toString("base64");
    const inner = encoded.slice(Math.ceil(shift / 3) * 4, Math.floor((shift + utf8.length) / 3) * 4);
    if (inner.length >= MIN_SECRET_LENGTH) base64.push(inner, inner.replaceAll("+", "-").replaceAll("/", "_"));
  }
  const needles = { plain, reversed: reverse(plain), base64, hex: utf8.toString("hex") };
  if (cache.size > 10_000) cache.clear();
  cache.set(key, needles);
  return needles;
}

/** `text` backwards, code unit by code unit (secrets and shapes are ASCII). */
function reverse(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: a one-byte string reverses as bytes
  if (!/[^\u0000-\u00ff]/.test(text)) return Buffer.from(text, "latin1").reverse().toString("latin1");
  const units = new Uint16Array(text.length);
  for (let i = 0; i < text.length; i++) units[i] = text.charCodeAt(text.length - 1 - i);
  return new TextDecoder("utf-16le").decode(units);
}

/** A text derived from another, with the offset in the original of each of its characters (when spans are wanted). */
interface View {
  text: string;
  at: Int32Array | undefined;
}

const isSpace = (text: string, i: number) => {
  const code = text.charCodeAt(i);
  return code === 32 || (code >= 9 && code <= 13) || (code > 127 && /\s/.test(text.charAt(i)));
};

/** `text` without whitespace: a secret cut into lines is whole here. */
function squeezed(text: string, spans: boolean): View {
  const out = text.replace(/\s+/g, "");
  if (!spans) return { text: out, at: undefined };
  const at = new Int32Array(out.length);
  for (let i = 0, n = 0; i < text.length; i++) if (!isSpace(text, i)) at[n++] = i;
  return { text: out, at };
}

/** `text` with each `%XX` as the character of that byte. */
function percentDecoded(text: string, spans: boolean): View {
  const at: number[] = [];
  let out = "";
  const pattern = /%([0-9a-f]{2})|[^%]+|%/gi;
  for (const match of text.matchAll(pattern)) {
    const start = match.index;
    if (match[1]) {
      out += String.fromCharCode(Number.parseInt(match[1], 16));
      if (spans) at.push(start);
    } else {
      out += match[0];
      if (spans) for (let i = 0; i < match[0].length; i++) at.push(start + i);
    }
  }
  // A decoded byte stands for the three characters of its `%XX`: its span ends after them.
  return { text: out, at: spans ? Int32Array.from(at) : undefined };
}

/** Maps `[start, end)` of a view back to the original text; without a map, the view's own offsets. */
function mapped(view: View, start: number, end: number, original: string): [number, number] {
  if (!view.at) return [start, end];
  const first = view.at[start] ?? 0;
  const last = view.at[end - 1] ?? first;
  const tail = original[last] === "%" && /^%[0-9a-f]{2}/i.test(original.slice(last, last + 3)) ? 3 : 1;
  return [first, last + tail];
}

function* occurrences(haystack: string, needle: string): Generator<number> {
  if (!needle) return;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + 1)) yield at;
}

/** Held values at least this long are looked for with whitespace removed too. */
const SQUEEZED_MIN = 20;

/** Runs that may be base64 (either alphabet) or hex, long enough to hold a secret worth the name. */
const BASE64_RUN = /[A-Za-z0-9+/_-]{16,}={0,2}/g;
const HEX_RUN = /[0-9a-fA-F]{16,}/g;

/** What a base64 run decodes to, read from each of its first four characters (it may start mid-group). */
function base64Decodings(run: string): string[] {
  const standard = run.replace(/=+$/, "").replaceAll("-", "+").replaceAll("_", "/");
  return [0, 1, 2, 3].map((skip) => {
    const part = standard.slice(skip);
    return Buffer.from(part.slice(0, part.length - (part.length % 4)), "base64").toString("latin1");
  });
}

function hexDecodings(run: string): string[] {
  return [0, 1].map((skip) => {
    const part = run.slice(skip);
    return Buffer.from(part.slice(0, part.length - (part.length % 2)), "hex").toString("latin1");
  });
}

/** The shapes, each matched once anywhere (no `g` flag, so `test` keeps no state between texts). */
const SHAPE_TESTS = SECRET_SHAPES.map(({ kind, pattern }) => ({
  kind,
  test: new RegExp(pattern.source, pattern.flags.replace("g", "")),
}));

/** Whether decoded bytes hold a held value or a secret shape, and which. */
function kindOfDecoded(decoded: string, needles: readonly Needles[], bytes: readonly Needles[]): string | undefined {
  if (needles.some((n) => decoded.includes(n.plain)) || bytes.some((n) => decoded.includes(n.plain))) return HELD_KIND;
  return SHAPE_TESTS.find(({ test }) => test.test(decoded))?.kind;
}

export interface FindOptions {
  /** The text is an object's bytes, one character per byte (latin1), as the push scan reads them. */
  bytes?: boolean;
  /** Where each secret is (offsets in `text`); without it only which kinds, which costs less on large objects. */
  spans?: boolean;
}

/**
 * Every held value of `known` (8 characters or more) and every secret shape in `text`, in each of
 * the forms above. Nothing is normalized here: callers normalize first (normalizeText).
 */
export function findSecrets(text: string, known: Iterable<string>, options: FindOptions = {}): SecretFound[] {
  const { bytes = false, spans = true } = options;
  if (!text) return [];
  const values = [...new Set(known)].filter((value) => value.length >= MIN_SECRET_LENGTH);
  const needles = values.map((value) => needlesOf(value, bytes));
  // Decoded bytes are latin1; a held value with characters past ASCII is looked for in its UTF-8 bytes too.
  const byteNeedles = bytes ? [] : values.filter((value) => /[^\x20-\x7e]/.test(value)).map((value) => needlesOf(value, true));
  const found: SecretFound[] = [];
  const add = (view: View | undefined, start: number, end: number, kind: string) => {
    const [from, to] = view ? mapped(view, start, end, text) : [start, end];
    found.push({ start: from, end: to, kind });
  };

  const tight = squeezed(text, spans);
  const lowered = tight.text.replace(/[A-F]+/g, (c) => c.toLowerCase());
  for (const n of needles) {
    for (const [form, kind] of [
      [n.plain, HELD_KIND],
      [n.reversed, `${HELD_KIND}, reversed`],
    ] as const) {
      // A long value is found with whitespace removed from both sides (a key cut across lines), which
      // finds it whole too; short ones only as they are: joining words could make one out of prose.
      if (form.length < SQUEEZED_MIN) {
        for (const at of occurrences(text, form)) add(undefined, at, at + form.length, kind);
        continue;
      }
      const tightForm = form.replace(/\s+/g, "");
      for (const at of occurrences(tight.text, tightForm)) add(tight, at, at + tightForm.length, kind);
    }
    for (const form of n.base64)
      for (const at of occurrences(tight.text, form)) add(tight, at, at + form.length, `${HELD_KIND}, base64-encoded`);
    for (const at of occurrences(lowered, n.hex)) add(tight, at, at + n.hex.length, `${HELD_KIND}, hex-encoded`);
  }

  const decoded = text.includes("%") ? percentDecoded(text, spans) : undefined;
  if (decoded)
    for (const n of [...needles, ...byteNeedles])
      for (const at of occurrences(decoded.text, n.plain)) add(decoded, at, at + n.plain.length, `${HELD_KIND}, URL-encoded`);

  const backwards = reverse(text);
  for (const { kind, pattern } of SECRET_SHAPES) {
    for (const match of text.matchAll(pattern)) add(undefined, match.index, match.index + match[0].length, kind);
    for (const match of backwards.matchAll(pattern)) {
      const end = text.length - match.index;
      add(undefined, end - match[0].length, end, `${kind}, reversed`);
    }
    if (decoded)
      for (const match of decoded.text.matchAll(pattern))
        add(decoded, match.index, match.index + match[0].length, `${kind}, URL-encoded`);
  }

  for (const [pattern, decodings, how] of [
    [BASE64_RUN, base64Decodings, "base64-encoded"],
    [HEX_RUN, hexDecodings, "hex-encoded"],
  ] as const) {
    for (const match of text.matchAll(pattern)) {
      const kind = decodings(match[0])
        .map((bytesOfRun) => kindOfDecoded(bytesOfRun, needles, byteNeedles))
        .find(Boolean);
      if (kind) add(undefined, match.index, match.index + match[0].length, `${kind}, ${how}`);
    }
  }
  return found;
}
