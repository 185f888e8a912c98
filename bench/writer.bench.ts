import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { ratio, reportRatios } from "./bench-results.js";

/**
 * bench:writer — events/s through the OutboundWriter into a pipe read by a child process, against
 * a naive process.stdout.write per event, in the same run; then both again with a reader that
 * stalls for 2 s: peak RSS, dropped vs delivered. Prints the ratios. See docs/benchmarks.md.
 */
const producer = fileURLToPath(new URL("./writer-producer.js", import.meta.url));
const reader = fileURLToPath(new URL("./writer-reader.js", import.meta.url));

interface Run {
  mode: string;
  offered: number;
  dropped: number;
  produce_ms: number;
  total_ms: number;
  cpu_ms: number;
  peak_rss_mb: number;
  batches: number;
  delivered: number;
}

function run(mode: "writer" | "writer-lossless" | "naive", events: number, burst: number, pauseMs: number, stallMs: number): Promise<Run> {
  const node = JSON.stringify(process.execPath);
  const command = `${node} ${JSON.stringify(producer)} ${mode} ${events} ${burst} ${pauseMs} | ${node} ${JSON.stringify(reader)} ${stallMs}`;
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-o", "pipefail", "-c", command], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    child.on("exit", (code) => {
      try {
        if (code !== 0) throw new Error(`exit ${code}: ${err}`);
        const stats = JSON.parse(err.trim().split("\n").pop() ?? "{}") as Omit<Run, "delivered">;
        const received = JSON.parse(out.trim()) as { lines: number };
        resolve({ ...stats, delivered: received.lines });
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

const events = Number(process.env.BENCH_EVENTS ?? "200000");
const rounds = Number(process.env.BENCH_ROUNDS ?? "3");
const rate = (r: Run): number => r.delivered / (r.total_ms / 1000);

const writerRates: number[] = [];
const naiveRates: number[] = [];
const writerCpu: number[] = [];
const naiveCpu: number[] = [];
// Interleaved rounds so machine noise hits both sides alike.
for (let round = 0; round < rounds; round++) {
  // Lossless so both sides deliver every event and the ratio compares like with like.
  const naive = await run("naive", events, 64, 0, 0);
  const writer = await run("writer-lossless", events, 64, 0, 0);
  naiveRates.push(rate(naive));
  writerRates.push(rate(writer));
  naiveCpu.push((naive.cpu_ms * 1000) / naive.delivered);
  writerCpu.push((writer.cpu_ms * 1000) / writer.delivered);
  process.stdout.write(
    `round ${round + 1}: naive ${Math.round(rate(naive))} ev/s, ${naiveCpu.at(-1)?.toFixed(2)} us CPU/event (${naive.batches} writes); writer ${Math.round(rate(writer))} ev/s, ${writerCpu.at(-1)?.toFixed(2)} us CPU/event (${writer.batches} writes)\n`,
  );
}
const throughputRatio = median(writerRates) / median(naiveRates);
const cpuRatio = median(naiveCpu) / median(writerCpu);
process.stdout.write(`\nthroughput: writer ${Math.round(median(writerRates))} ev/s vs naive ${Math.round(median(naiveRates))} ev/s -> ratio ${throughputRatio.toFixed(2)}x\n`);
process.stdout.write(`CPU per event: naive ${median(naiveCpu).toFixed(2)} us vs writer ${median(writerCpu).toFixed(2)} us -> writer is ${cpuRatio.toFixed(2)}x cheaper\n\n`);

// Stalled reader: ~3 s of streaming (bursts of 100 every 1 ms) while the reader sleeps 2 s.
const stalledEvents = Number(process.env.BENCH_STALL_EVENTS ?? "300000");
const naiveStalled = await run("naive", stalledEvents, 100, 1, 2000);
const writerStalled = await run("writer", stalledEvents, 100, 1, 2000);
const writerFree = await run("writer", stalledEvents, 100, 1, 0);
for (const [name, r] of [["naive, stalled 2 s", naiveStalled], ["writer, stalled 2 s", writerStalled], ["writer, no stall", writerFree]] as const) {
  process.stdout.write(`${name.padEnd(20)} peak RSS ${r.peak_rss_mb.toFixed(1)} MB, delivered ${r.delivered}, dropped ${r.dropped}\n`);
}
process.stdout.write(
  `\nstalled reader: naive peak RSS / writer peak RSS = ${(naiveStalled.peak_rss_mb / writerStalled.peak_rss_mb).toFixed(2)}x; writer stalled vs unstalled RSS = ${(writerStalled.peak_rss_mb / writerFree.peak_rss_mb).toFixed(2)}x\n`,
);
process.stdout.write(`${JSON.stringify({ throughput_ratio: throughputRatio, cpu_ratio: cpuRatio, writer_ev_s: median(writerRates), naive_ev_s: median(naiveRates), naiveStalled, writerStalled, writerFree })}\n`);
reportRatios("writer", [
  ratio("throughput, writer / naive write per event", throughputRatio, { atLeast: 1 }),
  ratio("CPU per event, naive / writer", cpuRatio, { atLeast: 1 }),
  ratio("peak RSS with a stalled reader, naive / writer", naiveStalled.peak_rss_mb / writerStalled.peak_rss_mb),
]);
