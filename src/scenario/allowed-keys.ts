/**
 * The keys a strict object of a zod schema allows at a path of the checked value, for "unknown key" errors that say
 * what was expected. zod's `unrecognized_keys` issue names the keys it refused, not the ones it takes, so the schema
 * is walked along the path: through objects, arrays, records, wrappers (optional, default, pipe, lazy), and
 * unions, where the value's own discriminator (`policy.kind`) picks the option.
 */

import type { z } from "zod";

interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  valueType?: z.ZodType;
  innerType?: z.ZodType;
  in?: z.ZodType;
  getter?: () => z.ZodType;
  options?: z.ZodType[];
  discriminator?: string;
  values?: unknown[];
}

const defOf = (schema: unknown): Def | undefined => (schema as { _zod?: { def?: Def } } | undefined)?._zod?.def;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** The union option `value` belongs to: by its discriminator, else the one object option there is. */
function unionOption(def: Def, value: unknown): z.ZodType | undefined {
  const options = def.options ?? [];
  if (def.discriminator && isRecord(value)) {
    const tag = value[def.discriminator];
    return options.find((o) => defOf(defOf(o)?.shape?.[def.discriminator!])?.values?.includes(tag));
  }
  const objects = options.filter((o) => defOf(o)?.type === "object");
  return objects.length === 1 ? objects[0] : undefined;
}

/** The keys the object at `path` of `value` may have under `schema`, or null when the walk cannot tell. */
export function allowedKeys(schema: z.ZodType, value: unknown, path: readonly PropertyKey[]): string[] | null {
  let at: z.ZodType | undefined = schema;
  let here = value;
  let i = 0;
  // Bounded: each wrapper is passed once per level; a schema never nests wrappers without end.
  for (let guard = 0; guard < 1000 && at; guard++) {
    const def = defOf(at);
    if (!def) return null;
    const step = (next: z.ZodType | undefined) => {
      here = (here as Record<PropertyKey, unknown> | undefined)?.[path[i]!];
      i += 1;
      at = next;
    };
    switch (def.type) {
      case "optional":
      case "nullable":
      case "default":
      case "prefault":
      case "readonly":
      case "catch":
        at = def.innerType;
        break;
      case "pipe":
        at = def.in;
        break;
      case "lazy":
        at = def.getter?.();
        break;
      case "union":
        at = unionOption(def, here);
        break;
      case "object":
        if (i === path.length) return Object.keys(def.shape ?? {});
        step(def.shape?.[String(path[i])]);
        break;
      case "array":
        if (i === path.length) return null;
        step(def.element);
        break;
      case "record":
        if (i === path.length) return null;
        step(def.valueType);
        break;
      default:
        return null;
    }
  }
  return null;
}

/** `path: unknown key`, with the keys allowed there when the schema says (`(expected one of: kind, responses)`). */
export function unknownKeyProblem(field: string, schema: z.ZodType, value: unknown, objectPath: readonly PropertyKey[]): string {
  const keys = allowedKeys(schema, value, objectPath);
  return keys && keys.length > 0 ? `${field}: unknown key (expected one of: ${keys.join(", ")})` : `${field}: unknown key`;
}
