// Run inside a small disk's namespace (test/process/child-registry.test.ts): records this process
// as a child while the disk has room, fills the disk, then records its parent. Prints both pids.
import path from "node:path";
import { recordChild, recordChildrenIn } from "../../src/process/child-registry.ts";
import { fillToLastByte } from "./small-disk.ts";

const [mount = ""] = process.argv.slice(2);
recordChildrenIn(path.join(mount, "children"));
recordChild(process.pid);
fillToLastByte(path.join(mount, "filler"));
recordChild(process.ppid);
process.stdout.write(JSON.stringify({ pid: process.pid, ppid: process.ppid }));
