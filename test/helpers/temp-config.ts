import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

/** A fresh folder with a config.yaml whose data_dir lives inside it. */
export async function tempConfig(extraYaml = ""): Promise<{ dir: string; configPath: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), "local-ai-test-"));
  const configPath = path.join(dir, "config.yaml");
  await writeFile(configPath, `app:\n  data_dir: ./data\n${extraYaml}`);
  return { dir, configPath };
}
