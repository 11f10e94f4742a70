/**
 * Python's `str.strip()` and `float()` as the calculator's parsing uses them. JavaScript's trim() uses a slightly
 * different whitespace set (U+001C–U+001F and U+0085 are Python whitespace, U+FEFF is not).
 */

import { pyFloat } from "../../core/index.js";

const WS = "\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const EDGE_WS = new RegExp(`^[${WS}]+|[${WS}]+$`, "g");

/** Python `str.strip()`. */
export const pyStrip = (s: string): string => s.replace(EDGE_WS, "");

/** Python `float(text)`, or null where Python raises ValueError. */
export function pythonFloat(text: string): number | null {
  const stripped = pyStrip(text);
  // What trim() would still remove (U+FEFF) is not whitespace to Python: float() rejects it.
  return stripped.trim() === stripped ? pyFloat(stripped) : null;
}
