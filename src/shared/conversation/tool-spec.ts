/** A tool the model may call; `parameters` is a JSON Schema object. */
export interface ToolSpec {
  name: string;
  description?: string;
  parameters: Record<string, unknown>;
}
