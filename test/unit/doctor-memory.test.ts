// doctor's free memory comes from node-llama-cpp's RAM state (which counts memory the OS hands back
// at once, unlike os.freemem() on macOS), the OS's figure only when that cannot be read.
import assert from "node:assert/strict";
import { test } from "node:test";
import { checkSystem, probeWithRamState, readSystemProbe } from "../../src/diagnostics/checks/system.js";

const GiB = 1024 ** 3;

test("node-llama-cpp's RAM state replaces os.freemem(): no false low-memory warning", async () => {
  const osSays = { ...readSystemProbe(), totalMemBytes: 16 * GiB, freeMemBytes: 1 * GiB };
  const probe = await probeWithRamState(osSays, () => Promise.resolve({ total: 16 * GiB, free: 9 * GiB, used: 7 * GiB }));
  const memory = (await checkSystem(probe))[2];
  assert.equal(memory?.status, "ok");
  assert.equal(memory?.finding, "9.0 GiB free of 16.0 GiB");
  assert.deepEqual(memory?.data, { total_bytes: 16 * GiB, free_bytes: 9 * GiB, source: "node-llama-cpp" });
});

test("node-llama-cpp failing to load: the OS's figures, said so", async () => {
  const osSays = { ...readSystemProbe(), totalMemBytes: 16 * GiB, freeMemBytes: 1 * GiB };
  const probe = await probeWithRamState(osSays, () => Promise.reject(new Error("no binary")));
  const memory = (await checkSystem(probe))[2];
  assert.equal(memory?.status, "warn");
  assert.deepEqual(memory?.data, { total_bytes: 16 * GiB, free_bytes: 1 * GiB, source: "os" });
});
