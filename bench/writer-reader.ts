/**
 * The far end of the pipe: optionally stalls (does not read) for N ms, then reads stdin to EOF
 * and reports the number of lines it received as one JSON line on stdout.
 */
const stallMs = Number(process.argv[2] ?? "0");
process.stdin.pause();
setTimeout(() => {
  let lines = 0;
  let bytes = 0;
  process.stdin.on("data", (chunk: Buffer) => {
    bytes += chunk.length;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
  });
  process.stdin.on("end", () => process.stdout.write(`${JSON.stringify({ lines, bytes })}\n`));
  process.stdin.resume();
}, stallMs);
