/**
 * Test-only `--import` hook (via NODE_OPTIONS, with `--expose-gc`): on SIGUSR2 the process runs a
 * full garbage collection and writes one pino-shaped line to stderr, `{"level":30,"msg":"gc-probe",
 * "seq":n,"heap_used":…,"external":…,"array_buffers":…,"rss":…}`. The soak test reads the process's
 * memory after a collection this way, so the GC sawtooth is out of its figures.
 */
const collect = (globalThis as { gc?: () => void }).gc;
let seq = 0;
process.on("SIGUSR2", () => {
  if (collect === undefined) throw new Error("gc-probe-hook needs --expose-gc");
  collect();
  const { heapUsed, external, arrayBuffers, rss } = process.memoryUsage();
  seq += 1;
  process.stderr.write(`${JSON.stringify({ level: 30, time: Date.now(), pid: process.pid, msg: "gc-probe", seq, heap_used: heapUsed, external, array_buffers: arrayBuffers, rss })}\n`);
});
