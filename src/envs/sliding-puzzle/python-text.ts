/**
 * The few Python string rules the puzzle's parsing depends on. JavaScript's trim() and split(/\s+/) use a
 * slightly different whitespace set than Python's str.strip()/str.split() (U+001C–U+001F and U+0085 are Python
 * whitespace, U+FEFF is not), and Python indexes strings by code point, not by UTF-16 unit.
 */

import { pyInt } from "../../core/index.js";

const WS = "\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const EDGE_WS = new RegExp(`^[${WS}]+|[${WS}]+$`, "g");
const RUN_WS = new RegExp(`[${WS}]+`);

/** Python `str.strip()`. */
export const pyStrip = (s: string): string => s.replace(EDGE_WS, "");

/** Python `str.split()` with no separator: runs of whitespace, no empty parts. */
export const pySplit = (s: string): string[] => {
  const stripped = pyStrip(s);
  return stripped === "" ? [] : stripped.split(RUN_WS);
};

/** Python `int(part)` for a part of `str.split()` (so without Python whitespace around it). */
export function pyIntOfPart(part: string): number | null {
  // The core's pyInt trims JavaScript whitespace, which includes U+FEFF: Python's int() rejects it.
  return part.trim() === part ? pyInt(part) : null;
}

/** Python `text.lower().rfind(needle)` / `.find(needle, start)` on code points (needle in lower case). */
export function lowerCodePoints(text: string): string[] {
  // Per character, as Python's lower() maps each code point (a few map to two, e.g. 'İ').
  return Array.from(text).flatMap((ch) => Array.from(ch.toLowerCase()));
}

export function findSeq(hay: readonly string[], needle: readonly string[], from = 0): number {
  for (let i = Math.max(0, from); i + needle.length <= hay.length; i++) {
    if (needle.every((ch, k) => hay[i + k] === ch)) return i;
  }
  return -1;
}

export function rfindSeq(hay: readonly string[], needle: readonly string[]): number {
  for (let i = hay.length - needle.length; i >= 0; i--) {
    if (needle.every((ch, k) => hay[i + k] === ch)) return i;
  }
  return -1;
}
