import { CODEX_MISSING_MESSAGE, findCodexBinary } from "./codex-binary.js";
import { loopbackNetnsUnavailable, NETNS_UNAVAILABLE_MESSAGE } from "./loopback-netns.js";

/**
 * Whether the slow Codex long-prompt proofs run here: only when selected (`npm run test:stress`,
 * or LOCAL_AI_CODEX_LONG_PROMPT=1), with the Codex binary installed and a loopback-only network
 * namespace to run it in; a selected run that cannot go says why on stderr (never silently).
 */
export function codexLongPromptGate(): { codexBinary: string | null; skip: string | false } {
  const selected = process.env.LOCAL_AI_STRESS === "1" || process.env.LOCAL_AI_CODEX_LONG_PROMPT === "1";
  const codexBinary = selected ? findCodexBinary() : null;
  if (selected && codexBinary === null) process.stderr.write(CODEX_MISSING_MESSAGE);
  const netnsProblem = codexBinary === null ? null : loopbackNetnsUnavailable();
  if (netnsProblem !== null) process.stderr.write(NETNS_UNAVAILABLE_MESSAGE(netnsProblem));
  const skip = !selected
    ? "slow (Codex's ~17.6 k-token prompt on one thread): npm run test:stress, or LOCAL_AI_CODEX_LONG_PROMPT=1"
    : codexBinary === null
      ? "Codex CLI not installed: npm run install:codex"
      : netnsProblem !== null
        ? `no loopback-only network namespace: ${netnsProblem}`
        : false;
  return { codexBinary, skip };
}
