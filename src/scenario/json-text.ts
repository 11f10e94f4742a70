/**
 * Where a JSON text goes wrong, as line and column. `JSON.parse`'s messages differ between engines (Node 20 names a
 * character offset or nothing at all, newer Chromium a line and column), so the position comes from a small scanner
 * of our own, run only after `JSON.parse` failed: it walks the grammar iteratively (no recursion, so any nesting
 * depth is fine) in time linear in the text. `parseJsonText` reads a file's JSON with those positions.
 */

import { textOf, Utf8Error } from "./utf8.js";

export interface JsonTextPosition {
  /** UTF-16 offset of the first character that cannot be part of valid JSON (the text's length: it ended early). */
  offset: number;
  /** 1-based. */
  line: number;
  /** 1-based, in UTF-16 code units from the start of the line. */
  column: number;
}

const isWs = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (c: number) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);

/** The offset of the first error in `text` as JSON, or null when it is valid JSON. */
export function jsonErrorOffset(text: string): number | null {
  const n = text.length;
  let i = 0;
  const stack: number[] = []; // 0x7b '{' or 0x5b '['
  const skip = () => {
    while (i < n && isWs(text.charCodeAt(i))) i++;
  };
  /** Scans a string starting at its opening quote; returns false at an error (i is at it). */
  const scanString = (): boolean => {
    i++; // opening quote
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return true;
      }
      if (c < 0x20) return false;
      if (c === 0x5c) {
        const e = text.charCodeAt(i + 1);
        if (e === 0x75) {
          for (let k = 2; k < 6; k++) {
            if (i + k >= n) {
              i = n;
              return false;
            }
            if (!isHex(text.charCodeAt(i + k))) {
              i += k;
              return false;
            }
          }
          i += 6;
          continue;
        }
        if (i + 1 >= n) {
          i = n;
          return false;
        }
        if (!'"\\/bfnrt'.includes(text[i + 1]!)) {
          i += 1;
          return false;
        }
        i += 2;
        continue;
      }
      i++;
    }
    return false;
  };
  const digits = (): boolean => {
    const start = i;
    while (i < n && isDigit(text.charCodeAt(i))) i++;
    return i > start;
  };
  const scanNumber = (): boolean => {
    if (text.charCodeAt(i) === 0x2d) i++;
    if (text.charCodeAt(i) === 0x30) i++;
    else if (!digits()) return false;
    if (text.charCodeAt(i) === 0x2e) {
      i++;
      if (!digits()) return false;
    }
    const e = text.charCodeAt(i);
    if (e === 0x65 || e === 0x45) {
      i++;
      const s = text.charCodeAt(i);
      if (s === 0x2b || s === 0x2d) i++;
      if (!digits()) return false;
    }
    return true;
  };
  const scanWord = (word: string): boolean => {
    for (let k = 0; k < word.length; k++, i++) if (text[i] !== word[k]) return false;
    return true;
  };

  // States: expecting a value; after a value (inside a container or at the top).
  let expectValue = true;
  skip();
  for (;;) {
    if (expectValue) {
      skip();
      if (i >= n) return n;
      const c = text.charCodeAt(i);
      if (c === 0x7b || c === 0x5b) {
        stack.push(c);
        i++;
        skip();
        if (text.charCodeAt(i) === (c === 0x7b ? 0x7d : 0x5d)) {
          stack.pop();
          i++;
          expectValue = false;
          continue;
        }
        if (c === 0x7b && !scanKey()) return i;
        continue;
      }
      let ok: boolean;
      if (c === 0x22) ok = scanString();
      else if (c === 0x2d || isDigit(c)) ok = scanNumber();
      else if (c === 0x74) ok = scanWord("true");
      else if (c === 0x66) ok = scanWord("false");
      else if (c === 0x6e) ok = scanWord("null");
      else ok = false;
      if (!ok) return Math.min(i, n);
      expectValue = false;
      continue;
    }
    skip();
    const top = stack.at(-1);
    if (top === undefined) return i >= n ? null : i;
    if (i >= n) return n;
    const c = text.charCodeAt(i);
    if (c === 0x2c) {
      i++;
      if (top === 0x7b) {
        skip();
        if (!scanKey()) return Math.min(i, n);
      }
      expectValue = true;
      continue;
    }
    if (c === (top === 0x7b ? 0x7d : 0x5d)) {
      stack.pop();
      i++;
      continue;
    }
    return i;
  }

  /** At a key: `"key" :` then a value is expected. */
  function scanKey(): boolean {
    if (i >= n || text.charCodeAt(i) !== 0x22) return false;
    if (!scanString()) return false;
    skip();
    if (i >= n || text.charCodeAt(i) !== 0x3a) return false;
    i++;
    expectValue = true;
    return true;
  }
}

/** Line and column (1-based) of a UTF-16 offset in `text`. */
export function positionAt(text: string, offset: number): JsonTextPosition {
  let line = 1;
  let lineStart = 0;
  for (let k = text.indexOf("\n"); k !== -1 && k < offset; k = text.indexOf("\n", k + 1)) {
    line++;
    lineStart = k + 1;
  }
  return { offset, line, column: offset - lineStart + 1 };
}

/** Where `text` stops being valid JSON, or null when it is valid. */
export function locateJsonError(text: string): JsonTextPosition | null {
  const offset = jsonErrorOffset(text);
  return offset === null ? null : positionAt(text, offset);
}

/**
 * `JSON.parse(text)`'s failure in words with its place: `not valid JSON at line 3, column 14: Expected ',' or '}'
 * …`. The engine's own message says what went wrong; a position it gives is dropped (ours replaces it).
 */
export function describeJsonError(text: string, error: unknown): string {
  const what = jsonErrorWhat(error);
  const where = locateJsonError(text);
  if (!where) return `not valid JSON: ${what}`;
  const end = where.offset >= text.length ? " (the text ends early)" : "";
  return `not valid JSON at line ${where.line}, column ${where.column}${end}: ${what}`;
}

/**
 * What `JSON.parse` said went wrong, without the place (engines differ there) and without the copy of the text some
 * engines quote (`Unexpected token ']', "{"a": [1,]}" is not valid JSON` → `Unexpected token ']'`).
 */
export function jsonErrorWhat(error: unknown): string {
  const raw = error instanceof Error ? error.message : String(error);
  return raw
    .replace(/\s*(?:in JSON )?at position \d+(?: \(line \d+ column \d+\))?$/, "")
    .replace(/\s*\(line \d+ column \d+\)$/, "")
    .replace(/^(Unexpected token '[\s\S]{1,2}'), [\s\S]*is not valid JSON$/, "$1");
}

/**
 * The JSON value of a file's text or bytes (a scenario, a suite): bytes are decoded as strict UTF-8 and a leading
 * byte-order mark is dropped (editors on Windows write one: no JSON, but no mistake either). What is wrong is given
 * to `fail` as one problem prefixed with `source` (bytes that are not UTF-8 naming the byte, a syntax error its line
 * and column), and the error it returns is thrown.
 */
export function parseJsonText(input: string | Uint8Array, source: string, fail: (problem: string) => Error): unknown {
  let text: string;
  try {
    text = textOf(input);
  } catch (e) {
    if (e instanceof Utf8Error) throw fail(`${source}: ${e.message}`);
    throw e;
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw fail(`${source}: ${describeJsonError(text, e)}`);
  }
}
