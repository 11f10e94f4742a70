/**
 * `structuredClone` with a fast path for plain data. Environment metadata crosses into and out of every `step` as a
 * copy (decision 1), twice per sample and turn; it is nearly always JSON-like (plain objects, arrays, primitives),
 * which a direct copy makes several times faster than the structured-clone serializer. Anything else (a Date, a
 * Map, a class instance, a typed array, a function, a symbol, a sparse array, an object reached twice or a cycle, an
 * own `__proto__` key) sends the whole value to `structuredClone`, so the result (or the error) is the one
 * `structuredClone` gives, with one exception: an array's named (non-index) properties are left out, as JSON leaves
 * them out (finding them would mean listing every index as a string key, the largest cost of the copy). (A Proxy,
 * which `structuredClone` rejects, is read through.)
 */

const FALLBACK: unique symbol = Symbol("fallback");

export function cloneData<T>(value: T): T {
  if (value === null || typeof value !== "object") {
    return typeof value === "function" || typeof value === "symbol" ? structuredClone(value) : value;
  }
  const copied = copy(value, new Set<object>());
  return copied === FALLBACK ? structuredClone(value) : (copied as T);
}

function copy(value: unknown, seen: Set<object>): unknown {
  if (value === null) return null;
  const type = typeof value;
  if (type === "function" || type === "symbol") return FALLBACK;
  if (type !== "object") return value;
  const object = value as object;
  if (seen.has(object)) return FALLBACK; // shared or cyclic: structuredClone keeps the sharing
  seen.add(object);
  const proto = Object.getPrototypeOf(object);
  if (Array.isArray(object)) {
    if (proto !== Array.prototype) return FALLBACK;
    const out = new Array<unknown>(object.length);
    for (let i = 0; i < object.length; i++) {
      const item = object[i];
      if (typeof item !== "object" || item === null) {
        // A primitive is copied here (most members are); a hole (structuredClone keeps it) and a function or
        // symbol (it fails) go to structuredClone.
        if (item === undefined ? !(i in object) : typeof item === "function" || typeof item === "symbol") return FALLBACK;
        out[i] = item;
        continue;
      }
      const v = copy(item, seen);
      if (v === FALLBACK) return FALLBACK;
      out[i] = v;
    }
    return out;
  }
  if (proto !== Object.prototype && proto !== null) return FALLBACK;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(object)) {
    if (key === "__proto__") return FALLBACK;
    const item = (object as Record<string, unknown>)[key];
    if (typeof item !== "object" || item === null) {
      if (typeof item === "function" || typeof item === "symbol") return FALLBACK;
      out[key] = item;
      continue;
    }
    const v = copy(item, seen);
    if (v === FALLBACK) return FALLBACK;
    out[key] = v;
  }
  return out;
}
