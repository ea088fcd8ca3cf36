import { CONFIG_PATH } from "../../src/config/parse-config.ts";
import { Store } from "../../src/store/store.ts";

/**
 * Writes bench/app's `.github/lisa.yml` (label `lisa`) into the store as a worker's read of it would,
 * now: as deployed, where `lisa web` alone never calls GitHub and a worker has read the config.
 */
export async function workerReadConfig(databaseUrl: string, installationId: number): Promise<void> {
  const store = new Store(databaseUrl);
  const file = { installation_id: installationId, owner: "bench", repo: "app", path: CONFIG_PATH };
  await store.configFiles.save({ ...file, etag: null, content: "label: lisa\n", label: "lisa", validated_at: Date.now() });
  await store.close();
}
