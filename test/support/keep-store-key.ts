// Run inside a small disk's namespace (test/store/command-mac.test.ts): the store key Lisa keeps in
// the data directory `argv[2]`, or the error that refused it, as JSON.
import { keptStoreKey } from "../../src/store/command-mac.ts";

const [dataDir = ""] = process.argv.slice(2);
try {
  process.stdout.write(JSON.stringify({ key: keptStoreKey(dataDir) }));
} catch (error) {
  process.stdout.write(JSON.stringify({ error: (error as NodeJS.ErrnoException).code ?? (error as Error).message }));
}
