import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export interface PackageInfo {
  name: string;
  version: string;
}

/** dist/src/shared/version.js and src/shared/version.ts both sit three levels below the root. */
const PACKAGE_JSON = fileURLToPath(new URL("../../../package.json", import.meta.url));

/** Read once by the composition root and passed down; never cached in module state. */
export function readPackageInfo(): PackageInfo {
  const parsed = JSON.parse(readFileSync(PACKAGE_JSON, "utf8")) as Partial<PackageInfo>;
  return { name: parsed.name ?? "local-ai-core", version: parsed.version ?? "0.0.0" };
}
