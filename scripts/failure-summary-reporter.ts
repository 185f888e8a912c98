// A node:test reporter that prints nothing while the tests run and, at the end, every failed test
// with its file, its error and the first lines of its stack. run-tests.ts adds it after the TAP
// reporter so that a failure is named in the last lines of a long CI log (CI keeps the tail).
import type { TestEvent } from "node:test/reporters";

interface Failure {
  name: string;
  file: string;
  detail: string;
}

const MAX_DETAIL_LINES = 30;

function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // node:test wraps the test's own error as `cause` of an ERR_TEST_FAILURE.
  const inner = error.cause instanceof Error ? error.cause : error;
  const text = inner.stack ?? `${inner.name}: ${inner.message}`;
  return text.split("\n").slice(0, MAX_DETAIL_LINES).join("\n");
}

export default async function* failureSummary(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const failures: Failure[] = [];
  for await (const event of source) {
    if (event.type !== "test:fail") continue;
    const data = event.data as { name: string; file?: string; details: { error: unknown; type?: string } };
    // A suite fails when a test inside it fails; the test itself is the one worth naming.
    if (data.details.type === "suite") continue;
    failures.push({ name: data.name, file: data.file ?? "(unknown file)", detail: describeError(data.details.error) });
  }
  if (failures.length === 0) return;
  yield `\n# ---- ${failures.length} failed test(s) ----\n`;
  for (const failure of failures) {
    yield `# FAILED: ${failure.name}\n#   in ${failure.file}\n`;
    yield `${failure.detail.replace(/^/gm, "#     ")}\n`;
  }
}
