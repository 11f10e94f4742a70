/**
 * Reading a config dict as the reference's Python does: `cfg.get(key, default)` gives a key's value even when it is
 * None (null), and `float(…)` / `int(…)` of None, a list or a dict raise instead of becoming 0 (`Number(null)`).
 * Scenario files cannot carry such values (their schema refuses them); callers of the core's API can.
 */

/** `d.get(key, fallback)`: the value of an own key, null included; `fallback` when the key is absent. */
export function pyGet(d: object | null | undefined, key: string, fallback: unknown): unknown {
  if (!d || !Object.prototype.hasOwnProperty.call(d, key)) return fallback;
  const value = (d as Record<string, unknown>)[key];
  return value === undefined ? fallback : value;
}

const pyTypeName = (value: unknown): string =>
  value === null || value === undefined ? "NoneType" : Array.isArray(value) ? "list" : typeof value === "object" ? "dict" : typeof value;

const DIGITS = String.raw`\d(?:_?\d)*`;
const FLOAT_TEXT = new RegExp(String.raw`^[+-]?(?:${DIGITS}(?:\.(?:${DIGITS})?)?|\.${DIGITS})(?:e[+-]?${DIGITS})?$`);

/** Python's `float(value)` for a config value. */
export function pyFloat(value: unknown): number {
  if (typeof value === "number") return value;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "string") {
    const text = value.trim().toLowerCase();
    const special: Record<string, number> = { nan: NaN, "+nan": NaN, "-nan": NaN, inf: Infinity, "+inf": Infinity, "-inf": -Infinity, infinity: Infinity, "+infinity": Infinity, "-infinity": -Infinity };
    if (Object.hasOwn(special, text)) return special[text]!;
    // Python's float literal: an underscore only between two digits.
    if (!FLOAT_TEXT.test(text)) throw new Error(`ValueError: could not convert string to float: ${JSON.stringify(value)}`);
    return Number(text.replaceAll("_", ""));
  }
  throw new Error(`TypeError: float() argument must be a string or a real number, not '${pyTypeName(value)}'`);
}

/** Python's `int(value)` for a config value (a float is cut toward zero). */
export function pyInt(value: unknown): number {
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new Error(`${Number.isNaN(value) ? "ValueError: cannot convert float NaN" : "OverflowError: cannot convert float infinity"} to integer`);
    return Math.trunc(value);
  }
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "string" && /^\s*[+-]?\d+(_\d+)*\s*$/.test(value)) return Number(value.trim().replaceAll("_", ""));
  if (typeof value === "string") throw new Error(`ValueError: invalid literal for int() with base 10: ${JSON.stringify(value)}`);
  throw new Error(`TypeError: int() argument must be a string, a bytes-like object or a real number, not '${pyTypeName(value)}'`);
}
