// `npm run build:embedded` on macOS (injected platform and file check): AppleClang has no OpenMP.
import assert from "node:assert/strict";
import { test } from "node:test";
import { openMpSetup } from "../../scripts/openmp-on-macos.js";

test("build:embedded on macOS: refuses clearly without libomp, points CMake at Homebrew's with it; nothing needed elsewhere", () => {
  const none = openMpSetup("darwin", () => false);
  assert.equal(none.ok, false);
  assert.match(none.ok ? "" : none.reason, /^macOS: Apple's compiler has no OpenMP.*`brew install libomp`/);
  assert.deepEqual(openMpSetup("darwin", (file) => file === "/usr/local/opt/libomp/include/omp.h"), { ok: true, root: "/usr/local/opt/libomp" });
  assert.deepEqual(openMpSetup("linux", () => false), { ok: true, root: null });
});
