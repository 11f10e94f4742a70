/** Small checks of a dump's JSON values the importers share. */

export type Obj = Record<string, unknown>;

export const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
/** A list of token ids (non-negative integers). */
export const isTokenRow = (v: unknown): v is number[] => Array.isArray(v) && v.every((x) => Number.isInteger(x) && (x as number) >= 0);
export const isNumberRow = (v: unknown): v is number[] => Array.isArray(v) && v.every((x) => typeof x === "number");

/** `o` without `keys`. */
export function omit(o: Obj, keys: readonly string[]): Obj {
  const out: Obj = {};
  for (const [k, v] of Object.entries(o)) if (!keys.includes(k)) out[k] = v;
  return out;
}
