/**
 * Python `repr` and `json.dumps` for the JSON values the protocol quotes in its messages (conformance-adapter.md
 * rule 5) and re-serialises (`arguments_json`, the chat template's `tojson`).
 *
 * JSON cannot tell `1` from `1.0` (decision 12): integral numbers print as Python ints.
 */

import { pyFloatRepr } from "./numbers.js";
import { pyEntries } from "./ordered-json.js";

/** Marks an array to be shown as a Python tuple. */
export class PyTuple {
  constructor(readonly items: readonly unknown[]) {}
}

export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "number") return Number.isInteger(value) ? integerText(value) : pyFloatRepr(value);
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "string") return pyStrRepr(value);
  if (value instanceof PyTuple) {
    const inner = value.items.map(pyRepr).join(", ");
    return value.items.length === 1 ? `(${inner},)` : `(${inner})`;
  }
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(", ")}]`;
  if (typeof value === "object") {
    const entries = pyEntries(value).map(([k, v]) => `${pyStrRepr(k)}: ${pyRepr(v)}`);
    return `{${entries.join(", ")}}`;
  }
  return String(value);
}

export function pyStrRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (ch === "\\") out += "\\\\";
    else if (ch === quote) out += `\\${quote}`;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else if (code >= 0x80 && !isPrintable(ch)) {
      out += code <= 0xff ? `\\x${hex(code, 2)}` : code <= 0xffff ? `\\u${hex(code, 4)}` : `\\U${hex(code, 8)}`;
    } else out += ch;
  }
  return out + quote;
}

const hex = (code: number, width: number) => code.toString(16).padStart(width, "0");
// Python's str.isprintable(): not in the Unicode categories Cc, Cf, Cs, Co, Cn, Zl, Zp, Zs (space excepted).
const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;
const isPrintable = (ch: string) => !NON_PRINTABLE.test(ch);

/** Python `json.dumps(value, ensure_ascii=False)`: separators ", " and ": ", insertion order, raw non-ASCII. */
export function pyJsonDumps(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (value === true) return "true";
  if (value === false) return "false";
  if (typeof value === "number") {
    if (Number.isNaN(value)) return "NaN";
    if (!Number.isFinite(value)) return value > 0 ? "Infinity" : "-Infinity";
    return Number.isInteger(value) ? integerText(value) : pyFloatRepr(value);
  }
  if (typeof value === "string") return pyJsonString(value);
  if (Array.isArray(value)) return `[${value.map(pyJsonDumps).join(", ")}]`;
  if (typeof value === "object") {
    const entries = pyEntries(value).map(([k, v]) => `${pyJsonString(k)}: ${pyJsonDumps(v)}`);
    return `{${entries.join(", ")}}`;
  }
  throw new TypeError(`Object of type ${typeof value} is not JSON serializable`);
}

/**
 * A string as Python's `json.dumps(…, ensure_ascii=False)` writes it: `"`, `\\` and the control characters escaped
 * (`\n`, `\u001b`), everything else raw, a lone surrogate too (`JSON.stringify` escapes that one).
 */
function pyJsonString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    const code = s.charCodeAt(i);
    const named = JSON_ESCAPES[ch];
    if (named !== undefined) out += named;
    else if (code < 0x20) out += `\\u${hex(code, 4)}`;
    else out += ch;
  }
  return `${out}"`;
}

const JSON_ESCAPES: Record<string, string> = { '"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f" };

function integerText(n: number): string {
  return Math.abs(n) < 1e21 ? String(n) : BigInt(n).toString();
}
