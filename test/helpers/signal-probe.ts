/**
 * Test-only `--import` hook (via NODE_OPTIONS): writes a marker line to stderr the first time the
 * program adds a SIGTERM listener, so early-signals.test.ts can send the signal at the earliest
 * moment the CLI could handle it, synchronized on that event instead of a timer.
 */
const marker = "@@sigterm-listener@@\n";
const original = process.on.bind(process);
let announced = false;
process.on = ((event: string | symbol, listener: (...args: unknown[]) => void) => {
  const result = original(event, listener);
  if (event === "SIGTERM" && !announced) {
    announced = true;
    process.stderr.write(marker);
  }
  return result;
}) as typeof process.on;
