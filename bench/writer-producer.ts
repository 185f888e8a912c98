import { setImmediate as tick, setTimeout as sleep } from "node:timers/promises";
import { pino } from "pino";
import { OutboundWriter } from "../src/protocol/outbound-writer.js";

/**
 * Writes llm_chunk-shaped events to its stdout (a pipe to writer-reader) either through the
 * OutboundWriter or with one naive process.stdout.write per event, the way a model streams
 * tokens: bursts with the event loop turning in between. Reports its figures on stderr.
 */
/** writer: best-effort events (drops when full); writer-lossless: waits for room instead (throughput). */
const mode = process.argv[2] as "writer" | "writer-lossless" | "naive";
const events = Number(process.argv[3] ?? "200000");
const burst = Number(process.argv[4] ?? "64");
const pauseMs = Number(process.argv[5] ?? "0");

const writer = mode !== "naive" ? new OutboundWriter(process.stdout, { maxMessages: 1024, logger: pino({ level: "silent" }) }) : null;
let peakRss = process.memoryUsage().rss;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 10);

const cpuStart = process.cpuUsage();
const started = process.hrtime.bigint();
let offered = 0;
let dropped = 0;
for (let sent = 0; sent < events; ) {
  for (let i = 0; i < burst && sent < events; i++, sent++) {
    const line = `{"id":"chat-1","type":"event","event":"llm_chunk","step":0,"delta":"token ${sent} "}\n`;
    offered++;
    if (writer) {
      if (writer.offer(line)) continue;
      if (mode === "writer-lossless") await writer.push(line);
      else dropped++;
    } else {
      process.stdout.write(line);
    }
  }
  if (pauseMs > 0) await sleep(pauseMs);
  else await tick();
}
const produced = process.hrtime.bigint();
if (writer) {
  await writer.close(60_000);
} else {
  await new Promise<void>((resolve) => process.stdout.write("", () => resolve()));
}
const flushed = process.hrtime.bigint();
const cpu = process.cpuUsage(cpuStart);
peakRss = Math.max(peakRss, process.memoryUsage().rss);
clearInterval(sampler);
process.stderr.write(
  `${JSON.stringify({
    mode,
    offered,
    dropped,
    produce_ms: Number(produced - started) / 1e6,
    total_ms: Number(flushed - started) / 1e6,
    cpu_ms: (cpu.user + cpu.system) / 1000,
    peak_rss_mb: Math.round((peakRss / 1024 / 1024) * 10) / 10,
    batches: writer?.stats.batches ?? offered,
  })}\n`,
);
process.stdout.end();
