/**
 * The derived library's tool-argument validator (fork-additions.md §3.1), to the letter (decision 10): its subset
 * (`type`, `enum`, `properties`, `required`, `items`), its messages, and Python equality in `enum`.
 * A general JSON-schema library would disagree on exactly those points.
 */

import { LabError } from "../errors.js";
import { pyRepr } from "../python/repr.js";

export class SchemaError extends LabError {
  override name = "SchemaError";
  override readonly code = "invalid_tool_schema";
}

type JsonObject = Record<string, unknown>;

const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);

const TYPE_CHECKS: Record<string, (v: unknown) => boolean> = {
  object: isObject,
  array: Array.isArray,
  string: (v) => typeof v === "string",
  boolean: (v) => typeof v === "boolean",
  null: (v) => v === null,
  // JSON cannot carry Python's 1.0-versus-1 distinction (decision 12): an integral number is an integer.
  integer: (v) => typeof v === "number" && Number.isInteger(v),
  number: (v) => typeof v === "number",
};

/** Python `_pytype_name`. */
export function jsonTypeName(v: unknown): string {
  if (typeof v === "boolean") return "boolean";
  if (isObject(v)) return "object";
  if (Array.isArray(v)) return "array";
  if (v === null || v === undefined) return "null";
  if (typeof v === "string") return "string";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

/** Python `==` between JSON values: `True == 1`, `1.0 == 1`, deep for lists and dicts. */
export function pyEquals(a: unknown, b: unknown): boolean {
  const num = (v: unknown) => (typeof v === "boolean" ? Number(v) : v);
  const x = num(a);
  const y = num(b);
  if (typeof x === "number" && typeof y === "number") return x === y;
  if (Array.isArray(x) && Array.isArray(y)) return x.length === y.length && x.every((v, i) => pyEquals(v, y[i]));
  if (isObject(x) && isObject(y)) {
    const keys = Object.keys(x);
    return keys.length === Object.keys(y).length && keys.every((k) => Object.hasOwn(y, k) && pyEquals(x[k], y[k]));
  }
  return x === y;
}

export function validateAgainstSchema(value: unknown, schema: unknown, path = "$"): string[] {
  const errors: string[] = [];
  const s = (isObject(schema) ? schema : {}) as JsonObject;
  const t = s.type;
  // Python's `schema.get("type")`: a null type is no type.
  const typed = "type" in s && t !== null;
  if (typed) {
    if (typeof t !== "string") throw new SchemaError(`${path}: 'type' must be a string, got ${pyRepr(t)}`);
    // Own keys only: a schema's "constructor" or "toString" is an unsupported type, not Object's method.
    const check = Object.hasOwn(TYPE_CHECKS, t) ? TYPE_CHECKS[t] : undefined;
    if (!check) throw new SchemaError(`unsupported JSON-schema type: ${pyRepr(t)}`);
    if (!check(value)) return [`${path}: expected ${t}, got ${jsonTypeName(value)}`];
  }
  if ("enum" in s) {
    if (!Array.isArray(s.enum)) throw new SchemaError(`${path}: 'enum' must be a list`);
    if (!s.enum.some((option) => pyEquals(value, option))) {
      errors.push(`${path}: ${pyRepr(value)} is not one of ${pyRepr(s.enum)}`);
    }
  }
  if (t === "object" || (!typed && isObject(value))) {
    const obj = value as JsonObject;
    // Present but null is not a list (Python's `schema.get("required", [])` gives None).
    const required = "required" in s ? s.required : [];
    if (!Array.isArray(required)) throw new SchemaError(`${path}: 'required' must be a list`);
    for (const key of required) {
      // A decoded JSON object's keys are strings: `1` is never one of them, as in Python.
      if (typeof key !== "string" || !Object.prototype.hasOwnProperty.call(obj, key)) {
        errors.push(`${path}: missing required property ${pyRepr(key)}`);
      }
    }
    const properties = "properties" in s ? s.properties : {};
    if (!isObject(properties)) throw new SchemaError(`${path}: 'properties' must be an object`);
    for (const [key, child] of Object.entries(properties)) {
      if (Object.prototype.hasOwnProperty.call(obj, key)) {
        errors.push(...validateAgainstSchema(obj[key], child, `${path}.${key}`));
      }
    }
  }
  if (t === "array" || (!typed && Array.isArray(value))) {
    if (s.items !== undefined && s.items !== null) {
      if (!isObject(s.items)) throw new SchemaError(`${path}: 'items' must be a schema object`);
      (value as unknown[]).forEach((item, i) => errors.push(...validateAgainstSchema(item, s.items, `${path}[${i}]`)));
    }
  }
  return errors;
}

export function validateArguments(args: unknown, parametersSchema: unknown): string[] {
  if (!isObject(args)) return [`$: expected object arguments, got ${jsonTypeName(args)}`];
  return validateAgainstSchema(args, parametersSchema, "$");
}
