import path from "node:path";
import type { ConfigSource, ConfigState } from "../../config/load-config.js";
import { formatProblem } from "../../config/config-problem.js";
import type { CheckResult } from "../doctor-report.js";
import { fail, ok } from "../check-result.js";

const ID = "config";
const TITLE = "Config";

const SOURCE_WORDS: Record<ConfigSource, string> = {
  flag: "from --config",
  env: "from LOCAL_AI_CONFIG",
  default: "default ./config.yaml",
};

export async function checkConfig(state: ConfigState): Promise<CheckResult> {
  const from = SOURCE_WORDS[state.source];
  const data = { path: state.path, source: state.source };
  switch (state.status) {
    case "loaded": {
      const models = Object.keys(state.config.llama.models).length;
      const agents = Object.keys(state.config.agents).length;
      return ok(ID, TITLE, `${state.path} (${from}) is valid: ${models} model${models === 1 ? "" : "s"}, ${agents} agent${agents === 1 ? "" : "s"}`, data);
    }
    case "missing":
      return fail(
        ID,
        TITLE,
        `no config file at ${state.path} (${from})`,
        "create config.yaml from config.example.yaml or pass --config FILE (or set LOCAL_AI_CONFIG)",
        data,
      );
    case "invalid": {
      const [first] = state.problems;
      const more = state.problems.length - 1;
      const what = first === undefined ? "it is invalid" : formatProblem(path.basename(state.path), first);
      return fail(
        ID,
        TITLE,
        `${state.path} (${from}) is invalid: ${what}${more > 0 ? ` (and ${more} more problem${more === 1 ? "" : "s"})` : ""}`,
        `edit ${state.path} to fix ${state.problems.length === 1 ? "the key named above" : "each key listed in data.problems (`local-ai doctor --json`)"}; config.example.yaml shows every key`,
        { ...data, problems: state.problems },
      );
    }
  }
}
