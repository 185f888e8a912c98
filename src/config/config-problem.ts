/** One thing wrong with a config file, precise enough to fix without reading the schema. */
export interface ConfigProblem {
  /** Dotted key path, e.g. `llama.models.default.port`; empty for the whole file. */
  path: string;
  message: string;
  /** The offending value as JSON (truncated), or `undefined` when the key is missing. */
  found?: string;
  /** 1-based line in the YAML file, when the key or its nearest parent can be located. */
  line?: number;
}

export function formatProblem(file: string, problem: ConfigProblem): string {
  const where = problem.line === undefined ? file : `${file}:${problem.line}`;
  const key = problem.path === "" ? "" : `${problem.path}: `;
  const found = problem.found === undefined ? "" : ` (found ${problem.found})`;
  return `${where}: ${key}${problem.message}${found}`;
}

export function describeValue(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  const text = JSON.stringify(value) ?? typeof value;
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
