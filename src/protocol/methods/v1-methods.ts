import type { SessionRunner } from "../../agent/session-runner.js";
import type { MethodDefinition, MethodTable } from "../method.js";
import type { StdioControl } from "../stdio-server.js";
import { cancelMethod } from "./cancel.js";
import { chatMethod } from "./chat.js";
import { doctorMethod } from "./doctor.js";
import { initializeMethod } from "./initialize.js";
import { pingMethod } from "./ping.js";
import { planMethod } from "./plan.js";
import { shutdownMethod } from "./shutdown.js";
import { warmUpMethod } from "./warm-up.js";

/** What the v1 methods need from the runtime (the composition root provides it). */
export interface V1Services {
  server: { name: string; version: string };
  maxLineBytes: number;
  runDoctor(signal: AbortSignal): Promise<unknown>;
  runPlan(params: { model?: string }, signal: AbortSignal): Promise<unknown>;
  /** Throws config_missing / config_invalid when there is no valid config. */
  sessionRunner(): SessionRunner;
}

/** The v1 method table. New methods (plan, chat, cancel) are added here and nowhere else. */
export function createV1Methods(services: V1Services, control: StdioControl): MethodTable {
  const table = new Map<string, MethodDefinition<never>>();
  table.set("initialize", initializeMethod({ server: services.server, methods: () => [...table.keys()], maxLineBytes: services.maxLineBytes }));
  table.set("ping", pingMethod);
  table.set("doctor", doctorMethod((signal) => services.runDoctor(signal)));
  table.set("plan", planMethod((params, signal) => services.runPlan(params, signal)));
  table.set("chat", chatMethod(() => services.sessionRunner()));
  table.set("cancel", cancelMethod(control));
  table.set("warm_up", warmUpMethod(() => services.sessionRunner()));
  table.set("shutdown", shutdownMethod(control));
  return table;
}
