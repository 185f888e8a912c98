import { z, type ZodType } from "zod";

/** One named definition of a generated JSON Schema document. */
export type SchemaDefinitions = ReadonlyArray<readonly [name: string, schema: ZodType]>;

export interface SchemaDocumentSpec {
  /** e.g. `urn:local-ai-core:schema:v1`. */
  id: string;
  title: string;
  description: string;
  definitions: SchemaDefinitions;
  /** The definition the document as a whole validates (a message of the protocol). */
  root: string;
}

const JSON_SCHEMA_2020_12 = "https://json-schema.org/draft/2020-12/schema";

/**
 * A draft 2020-12 document from zod schemas: every definition under `$defs` by name, and a zod
 * schema used by several definitions is written once and referenced (`$ref`). Request params are
 * described as a sender may write them (`io: "input"`: a param with a default is optional);
 * results and events have no defaults, so that is also exactly what the server writes.
 */
export function jsonSchemaDocument(spec: SchemaDocumentSpec): Record<string, unknown> {
  const registry = z.registry<{ id: string }>();
  const owner = new Map<ZodType, string>();
  const aliases = new Map<string, string>();
  for (const [name, schema] of spec.definitions) {
    const first = owner.get(schema);
    if (first !== undefined) {
      aliases.set(name, first);
      continue;
    }
    owner.set(schema, name);
    registry.add(schema, { id: name });
  }
  const generated = z.toJSONSchema(registry, { target: "draft-2020-12", io: "input", unrepresentable: "any", uri: (id) => `#/$defs/${pointer(id)}` }) as {
    schemas: Record<string, Record<string, unknown>>;
  };
  const defs: Record<string, unknown> = {};
  for (const [name] of spec.definitions) {
    const alias = aliases.get(name);
    if (alias !== undefined) {
      defs[name] = { $ref: `#/$defs/${pointer(alias)}` };
      continue;
    }
    const { $schema: _schema, $id: _id, ...body } = generated.schemas[name] ?? {};
    defs[name] = body;
  }
  if (!(spec.root in defs)) throw new Error(`schema document ${spec.id}: no definition named ${spec.root}`);
  return { $schema: JSON_SCHEMA_2020_12, $id: spec.id, title: spec.title, description: spec.description, $ref: `#/$defs/${pointer(spec.root)}`, $defs: defs };
}

/** A definition name as a JSON Pointer token (`$/cancelRequest` has a slash). */
const pointer = (name: string): string => name.replaceAll("~", "~0").replaceAll("/", "~1");

/**
 * The options of a union discriminated on `event`, each with the envelope fields in front
 * (`{id, type: "event", event, ...}`). Throws for anything else: a method's `events` must be one.
 */
export function withEnvelope(events: ZodType, envelope: Record<string, ZodType>, where: string): ZodType[] {
  if (!(events instanceof z.ZodDiscriminatedUnion)) throw new Error(`${where}: events must be a z.discriminatedUnion on "event"`);
  return events.options.map((option) => {
    if (!(option instanceof z.ZodObject)) throw new Error(`${where}: every event must be a z.object`);
    return z.strictObject({ ...envelope, ...option.shape });
  });
}

/** A union of schemas as JSON Schema `anyOf` (several may match: identical answers of two methods). */
export function anyOf(schemas: readonly ZodType[]): ZodType {
  if (schemas.length === 0) return z.never();
  if (schemas.length === 1) return schemas[0] as ZodType;
  return z.union(schemas as [ZodType, ZodType, ...ZodType[]]);
}
