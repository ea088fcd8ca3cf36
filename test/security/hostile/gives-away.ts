// Whether published text gives a secret away, decided apart from Lisa's own code: what a reader
// could copy out of it with terminal codes, control and format characters gone and Unicode folded
// (as a browser, a terminal or a paste would), cut across lines, reversed, or in base64 (each of
// three alignments, both alphabets), hex or URL encoding.

// biome-ignore lint/suspicious/noControlCharactersInRegex: terminal codes are what is looked for
const TERMINAL = /\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b[@-_]/g;
const UNSEEN = /[\p{Cc}\p{Cf}]/gu;

/** `text` as a reader sees it: no terminal codes, no control or format characters but line breaks and tabs, NFKC. */
export function asRead(text: string): string {
  return text
    .replace(TERMINAL, "")
    .replace(UNSEEN, (c) => (c === "\n" || c === "\t" ? c : ""))
    .normalize("NFKC");
}

/** The base64 characters that encode only `secret`'s own bytes, at each of the three alignments, in both alphabets. */
function base64Forms(secret: string): string[] {
  const bytes = Buffer.from(secret, "utf8");
  const forms: string[] = [];
  for (let shift = 0; shift < 3; shift++) {
    const encoded = Buffer.concat([Buffer.alloc(shift), bytes]).toString("base64");
    const inner = encoded.slice(Math.ceil(shift / 3) * 4, Math.floor((shift + bytes.length) / 3) * 4);
    forms.push(inner, inner.replaceAll("+", "-").replaceAll("/", "_"));
  }
  return forms;
}

function percentDecoded(text: string): string {
  try {
    return decodeURIComponent(text.replace(/%(?![0-9a-f]{2})/gi, "%25"));
  } catch {
    return text;
  }
}

/** Whether `text` gives `secret` away in any of the forms above. */
export function givesAway(text: string, secret: string): boolean {
  const read = asRead(text);
  // Diff lines start with + or -; a secret cut across lines is read joined.
  const squeezed = read.replace(/^[+-]/gm, "").replace(/\s+/g, "");
  const reversed = [...secret].reverse().join("");
  return (
    [secret, reversed].some((form) => read.includes(form) || squeezed.includes(form)) ||
    base64Forms(secret).some((form) => squeezed.includes(form)) ||
    squeezed.toLowerCase().includes(Buffer.from(secret, "utf8").toString("hex")) ||
    percentDecoded(squeezed).includes(secret)
  );
}
