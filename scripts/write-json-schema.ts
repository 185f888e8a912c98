import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { allJsonSchemas } from "./json-schemas.js";

/**
 * `npm run build` step: writes the protocol's JSON Schema documents to schema/ (shipped in the
 * package, listed in docs/protocol.md), generated from the zod schemas the servers validate with.
 */
const root = fileURLToPath(new URL("../../", import.meta.url));
const dir = path.join(root, "schema");
await mkdir(dir, { recursive: true });
const documents = await allJsonSchemas();
for (const [file, document] of Object.entries(documents)) await writeFile(path.join(dir, file), `${JSON.stringify(document, null, 2)}\n`);
process.stderr.write(`wrote ${Object.keys(documents).join(", ")} to ${dir}\n`);
