import { after } from "node:test";
import type { CliProcess } from "./cli-process.js";
import type { AgentUpstream } from "./openai-agent-upstream.js";

/**
 * The CLI processes and scripted upstreams a test file starts, ended after its last test: a failed
 * assertion leaves its CLI running, and the test file would then never exit.
 */
export function endedAfterAll(): { procs: CliProcess[]; upstreams: AgentUpstream[] } {
  const started: { procs: CliProcess[]; upstreams: AgentUpstream[] } = { procs: [], upstreams: [] };
  after(async () => {
    for (const proc of started.procs) if (proc.child.exitCode === null) proc.child.kill("SIGKILL");
    await Promise.all(started.upstreams.map((upstream) => upstream.close()));
  });
  return started;
}
