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
      if (agents === 0) {
        // Every serve command refuses such a config; doctor must not call it fine.
        return fail(
          ID,
          TITLE,
          `${state.path} (${from}) is valid but has no agents: serve-http and serve-socket refuse to start and every chat fails without one`,
          `add an agent under agents: in ${state.path}, e.g. "agents:\n  assistant:\n    model: ${Object.keys(state.config.llama.models)[0] ?? "default"}" (see config.example.yaml)`,
          { ...data, models, agents },
        );
      }
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
      const file = path.basename(state.path);
      const [first, ...rest] = state.problems.map((problem) => formatProblem(file, problem));
      const more = rest.length > 0 ? ` (and ${rest.length} more problem${rest.length === 1 ? "" : "s"})` : "";
      // A terminal user sees only finding and fix, so the fix names the next few problems too.
      const shown = rest.slice(0, 2).join("; ");
      const hidden = rest.length - 2;
      const also = shown === "" ? "" : ` also ${shown}${hidden > 0 ? `; ${hidden} more in \`local-ai doctor --json\`` : ""};`;
      return fail(
        ID,
        TITLE,
        `${state.path} (${from}) is invalid: ${first ?? "it is invalid"}${more}`,
        `edit ${state.path} and correct the key named above;${also} config.example.yaml shows every key`,
        { ...data, problems: state.problems },
      );
    }
  }
}
