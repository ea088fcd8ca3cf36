import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/** A fresh folder under the system temp directory, named after what it holds. */
export const tempDir = (prefix: string) => mkdtempSync(path.join(tmpdir(), `lisa-${prefix}-`));
