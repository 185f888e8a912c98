import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pino } from "pino";
import type { AgentEvent, ApprovalCallback } from "../../src/agent/events.js";
import { SessionRunner } from "../../src/agent/session-runner.js";
import type { TurnRequest } from "../../src/agent/turn-request.js";
import type { SessionTurnOutcome } from "../../src/agent/turn-outcome.js";
import { parseConfigText } from "../../src/config/load-config.js";
import type { Config } from "../../src/config/schema.js";
import type { Engine } from "../../src/engine/engine.js";
import { createStore, type Store } from "../../src/store/create-store.js";
import type { ToolProvider } from "../../src/tools/tool-types.js";
import type { MetricsRecorder } from "../../src/shared/metrics-recorder.js";

export interface TurnExtras {
  askApproval?: ApprovalCallback;
  /** Called for each event as it is emitted (synchronize on events, not timers). */
  onEvent?: (event: AgentEvent) => void;
}

export interface Harness {
  runner: SessionRunner;
  store: Store;
  config: Config;
  dataDir: string;
  /** Runs a turn and collects its events. */
  turn: (request: TurnRequest, signal?: AbortSignal, extra?: TurnExtras) => Promise<{ result: SessionTurnOutcome; events: AgentEvent[] }>;
  events: AgentEvent[];
}

/** A SessionRunner over a real on-disk store in a temp folder, with the given engine and tools (and where it reports metrics). */
export async function agentHarness(engine: Engine, tools: ToolProvider, appYaml = "", dataDir?: string, metrics?: MetricsRecorder): Promise<Harness> {
  const dir = dataDir ?? (await mkdtemp(path.join(tmpdir(), "local-ai-agent-")));
  const parsed = parseConfigText(
    `app:\n  data_dir: ${JSON.stringify(dir)}\n${appYaml}llama:\n  models:\n    default:\n      path: /unused.gguf\nagents:\n  assistant:\n    temperature: 0\n    system_prompt: Be helpful.\n`,
    {},
    "/",
  );
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  const store = createStore(dir);
  const runner = new SessionRunner({ config: parsed.config, engineFor: async () => engine, tools, store: store.sessions, memory: store.memory, logger: pino({ level: "silent" }), ...(metrics ? { metrics } : {}) });
  const events: AgentEvent[] = [];
  return {
    runner,
    store,
    config: parsed.config,
    dataDir: dir,
    events,
    turn: async (request, signal, extra) => {
      const mine: AgentEvent[] = [];
      const result = await runner.runTurn(request, {
        signal: signal ?? new AbortController().signal,
        emit: (event) => {
          mine.push(event);
          events.push(event);
          extra?.onEvent?.(event);
        },
        askApproval: extra?.askApproval,
      });
      return { result, events: mine };
    },
  };
}

/** `event` names with their step, e.g. "llm_start@0", for order assertions. */
export function eventTrail(events: readonly AgentEvent[]): string[] {
  return events.map((event) => ("step" in event ? `${event.event}@${event.step}` : event.event));
}
