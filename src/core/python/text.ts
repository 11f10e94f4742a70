/**
 * Python's string rules where the environments depend on them. JavaScript's trim() and split(/\s+/) use a
 * slightly different whitespace set than Python's str.strip()/str.split() (U+001C–U+001F and U+0085 are Python
 * whitespace, U+FEFF is not), and Python indexes strings by code point, not by UTF-16 unit.
 */

const SPACE = "\\t\\n\\v\\f\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
// str.isspace() also holds for the ASCII information separators, which float() and int() do not skip.
const SEPARATORS = "\\x1c-\\x1f";
const EDGE_WHITESPACE = new RegExp(`^[${SPACE}${SEPARATORS}]+|[${SPACE}${SEPARATORS}]+$`, "g");
const RUN_OF_WHITESPACE = new RegExp(`[${SPACE}${SEPARATORS}]+`);
const EDGE_NUMBER_SPACE = new RegExp(`^[${SPACE}]+|[${SPACE}]+$`, "g");

/** Python `str.strip()`. */
export const pyStrip = (s: string): string => s.replace(EDGE_WHITESPACE, "");

/** Python `str.split()` with no separator: runs of whitespace, no empty parts. */
export function pySplit(s: string): string[] {
  const stripped = pyStrip(s);
  return stripped === "" ? [] : stripped.split(RUN_OF_WHITESPACE);
}

/**
 * What Python's `float()` and `int()` skip around a number: `str.strip()`'s whitespace less U+001C–U+001F
 * (CPython turns only non-ASCII whitespace into spaces before stripping ASCII spaces).
 */
export const pyStripNumber = (s: string): string => s.replace(EDGE_NUMBER_SPACE, "");

/** The code points of Python's `text.lower()`, for `find`/`rfind` indices that apply to the original text. */
export function lowerCodePoints(text: string): string[] {
  // Per character, as Python's lower() maps each code point (a few map to two, e.g. 'İ').
  return Array.from(text).flatMap((ch) => Array.from(ch.toLowerCase()));
}

/** Python `str.find(needle, from)` on code points: the first index, or -1. */
export function findCodePoints(hay: readonly string[], needle: readonly string[], from = 0): number {
  for (let i = Math.max(0, from); i + needle.length <= hay.length; i++) {
    if (needle.every((ch, k) => hay[i + k] === ch)) return i;
  }
  return -1;
}

/** Python `str.rfind(needle)` on code points: the last index, or -1. */
export function rfindCodePoints(hay: readonly string[], needle: readonly string[]): number {
  for (let i = hay.length - needle.length; i >= 0; i--) {
    if (needle.every((ch, k) => hay[i + k] === ch)) return i;
  }
  return -1;
}
