// Run inside a small disk's namespace (test/process/child-registry.test.ts): records this process
// as a child while the disk has room, fills the disk, then records its parent. Prints this pid.
import { closeSync, openSync, writeSync } from "node:fs";
import path from "node:path";
import { recordChild, recordChildrenIn } from "../../src/process/child-registry.ts";

const [mount = ""] = process.argv.slice(2);
recordChildrenIn(path.join(mount, "children"));
recordChild(process.pid);
const filler = openSync(path.join(mount, "filler"), "w");
try {
  for (;;) writeSync(filler, Buffer.alloc(64 * 1024));
} catch {
  // Full.
}
try {
  for (;;) writeSync(filler, Buffer.alloc(1));
} catch {
  // Full to the last byte.
}
closeSync(filler);
recordChild(process.ppid);
process.stdout.write(JSON.stringify({ pid: process.pid, ppid: process.ppid }));
