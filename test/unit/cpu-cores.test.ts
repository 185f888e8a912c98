// `threads: auto`: physical performance cores per platform (injected), and plan and launch alike:
// a llama-server plan uses the very figure the launch computes (physicalCores), an embedded plan
// node-llama-cpp's (which the embedded engine uses).
import assert from "node:assert/strict";
import os from "node:os";
import { test } from "node:test";
import { llamaServerAutoThreads } from "../../src/engine/auto-threads.js";
import { physicalCores } from "../../src/engine/cpu-cores.js";
import { resolveThreads } from "../../src/engine/plan/decide-plan.js";
import { probeHardware } from "../../src/engine/plan/hardware.js";
import type { HardwareSnapshot } from "../../src/engine/plan/plan-types.js";

const logical = Math.max(1, os.availableParallelism());

test("macOS: the performance cores (perflevel0), else the physical ones, else the logical count", () => {
  const asked: string[] = [];
  const m2Pro = (name: string): string | null => (asked.push(name), ({ "hw.perflevel0.physicalcpu": "8", "hw.physicalcpu": "12" } as Record<string, string>)[name] ?? null);
  assert.equal(physicalCores("darwin", m2Pro), 8);
  assert.deepEqual(asked, ["hw.perflevel0.physicalcpu"]);
  assert.equal(physicalCores("darwin", (name) => (name === "hw.physicalcpu" ? "4" : null)), 4);
  assert.equal(physicalCores("darwin", () => null), logical);
});

test("Linux: unique (physical id, core id) pairs: hyper-threads and sockets counted right", () => {
  const cpu = (physical: number, core: number): string => `processor\t: x\nphysical id\t: ${physical}\ncore id\t\t: ${core}\n`;
  // 2 sockets x 2 cores x 2 threads
  const info = [0, 0, 1, 1].flatMap((socket, i) => [cpu(socket, i % 2), cpu(socket, i % 2)]).join("\n");
  assert.equal(physicalCores("linux", () => null, () => info), 4);
  assert.equal(physicalCores("linux", () => null, () => "processor : 0\n"), logical, "no core ids (ARM): the logical count");
});

test("Windows: half the logical cores (llama.cpp's own fallback), at least 1", () => {
  assert.equal(physicalCores("win32"), Math.max(1, Math.floor(logical / 2)));
});

test("plan and launch alike: a llama-server plan counts what its launch counts; an embedded plan node-llama-cpp's figure", async () => {
  const hardware = await probeHardware(null);
  assert.equal(hardware.cpu.serverCores, physicalCores());
  // The llama-server driver launches it with llamaServerAutoThreads(physicalCores()).
  assert.equal(resolveThreads("auto", hardware, [], "llama.models.x", "llama-server"), llamaServerAutoThreads(physicalCores()));
  const hybrid: HardwareSnapshot = { ...hardware, cpu: { logicalCores: 16, mathCores: 4, serverCores: 6 } };
  assert.equal(resolveThreads("auto", hybrid, [], "k", "llama-server"), 6);
  assert.equal(resolveThreads("auto", hybrid, [], "k", "embedded"), 3);
});
