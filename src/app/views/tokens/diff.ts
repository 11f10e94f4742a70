/**
 * A character diff of two texts (the chat template's rendering of a log against its decoded tokens): Myers' O(ND)
 * algorithm, run on lines first, then on the words, ChatML markers and single characters of each changed stretch
 * of lines, and each resulting range narrowed to the characters that differ; common prefix and suffix are trimmed
 * first, so the first difference is exact to the character. Edit distances are capped so a very different pair
 * stays fast; a stretch over the cap is reported as one changed range (`coarse`).
 */

/** `a.slice(aStart, aEnd)` was replaced by `b.slice(bStart, bEnd)` (either may be empty). */
export interface DiffHunk {
  aStart: number;
  aEnd: number;
  bStart: number;
  bEnd: number;
}

export interface TextDiff {
  equal: boolean;
  hunks: DiffHunk[];
  /** Some stretch was too different to diff finely and is reported whole. */
  coarse: boolean;
}

export interface DiffOptions {
  /** Most line edits to search (default 2000). */
  maxLineEdits?: number;
  /** Most edits, in words, markers and single characters, to search within one changed stretch of lines (default 1000). */
  maxUnitEdits?: number;
  /** Hunks this close (in equal characters) are merged, to keep highlights readable (default 2). */
  mergeGap?: number;
}

/**
 * Myers' shortest edit script between `a[aFrom, aTo)` and `b[bFrom, bTo)`: the hunks (gaps between matched runs),
 * or null when more than `maxEdits` edits would be needed.
 */
export function diffSequences<T>(
  a: ArrayLike<T>,
  b: ArrayLike<T>,
  maxEdits: number,
  aFrom = 0,
  aTo = a.length,
  bFrom = 0,
  bTo = b.length,
): DiffHunk[] | null {
  const n = aTo - aFrom;
  const m = bTo - bFrom;
  const max = Math.min(n + m, maxEdits);
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let found = -1;
  for (let d = 0; d <= max && found < 0; d++) {
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[aFrom + x] === b[bFrom + y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) found = d;
    }
    trace.push(v.slice(offset - d, offset + d + 1));
  }
  if (found < 0) return null;

  // Walk back from (n, m), collecting the matched runs (snakes).
  const runs: { x: number; y: number; len: number }[] = [];
  let x = n;
  let y = m;
  for (let d = found; d > 0; d--) {
    const prev = trace[d - 1]!;
    const at = (k: number) => prev[k + d - 1]!;
    const k = x - y;
    const down = k === -d || (k !== d && at(k - 1) < at(k + 1));
    const prevK = down ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    const midX = down ? prevX : prevX + 1;
    const midY = midX - k;
    if (x > midX) runs.push({ x: midX, y: midY, len: x - midX });
    x = prevX;
    y = prevY;
  }
  if (x > 0) runs.push({ x: 0, y: 0, len: x });
  runs.reverse();

  const hunks: DiffHunk[] = [];
  let pa = 0;
  let pb = 0;
  for (const run of runs) {
    if (run.x > pa || run.y > pb) hunks.push({ aStart: aFrom + pa, aEnd: aFrom + run.x, bStart: bFrom + pb, bEnd: bFrom + run.y });
    pa = run.x + run.len;
    pb = run.y + run.len;
  }
  if (pa < n || pb < m) hunks.push({ aStart: aFrom + pa, aEnd: aTo, bStart: bFrom + pb, bEnd: bTo });
  return hunks;
}

/** Lines with their line breaks. */
const LINE = /[^\n]*\n|[^\n]+/g;
/** ChatML markers and tags, words, and single other characters: the units a changed stretch is diffed in. */
const UNIT = /<\|[^|<>\s]{1,48}\|>|<\/?[A-Za-z_]{1,32}>|[\p{L}\p{N}_]+|[\s\S]/gu;

/** The pieces of `text[from, to)` as numbers (equal pieces, equal numbers), and where each starts (plus `to`). */
function pieceCodes(text: string, from: number, to: number, pattern: RegExp, codes: Map<string, number>): { ids: number[]; starts: number[] } {
  const ids: number[] = [];
  const starts: number[] = [];
  for (const m of text.slice(from, to).matchAll(pattern)) {
    let id = codes.get(m[0]);
    if (id === undefined) codes.set(m[0], (id = codes.size));
    ids.push(id);
    starts.push(from + m.index);
  }
  starts.push(to);
  return { ids, starts };
}

/** Diffs `a[aS, aE)` against `b[bS, bE)` in pieces, mapping the hunks back to characters; null past the cap. */
function diffPieces(a: string, b: string, aS: number, aE: number, bS: number, bE: number, pattern: RegExp, maxEdits: number): DiffHunk[] | null {
  const codes = new Map<string, number>();
  const pa = pieceCodes(a, aS, aE, pattern, codes);
  const pb = pieceCodes(b, bS, bE, pattern, codes);
  const hunks = diffSequences(pa.ids, pb.ids, maxEdits);
  return hunks && hunks.map((h) => ({ aStart: pa.starts[h.aStart]!, aEnd: pa.starts[h.aEnd]!, bStart: pb.starts[h.bStart]!, bEnd: pb.starts[h.bEnd]! }));
}

/** Narrows a hunk by the characters its two sides share at either end (`value41` for `value42` is `1` for `2`). */
function narrow(a: string, b: string, h: DiffHunk): DiffHunk {
  let { aStart, aEnd, bStart, bEnd } = h;
  while (aStart < aEnd && bStart < bEnd && a[aStart] === b[bStart]) {
    aStart++;
    bStart++;
  }
  while (aEnd > aStart && bEnd > bStart && a[aEnd - 1] === b[bEnd - 1]) {
    aEnd--;
    bEnd--;
  }
  return { aStart, aEnd, bStart, bEnd };
}

/** Diffs two texts; see the module comment. */
export function diffText(a: string, b: string, options: DiffOptions = {}): TextDiff {
  if (a === b) return { equal: true, hunks: [], coarse: false };
  const maxLineEdits = options.maxLineEdits ?? 2000;
  const maxUnitEdits = options.maxUnitEdits ?? 1000;
  let coarse = false;

  let start = 0;
  const shorter = Math.min(a.length, b.length);
  while (start < shorter && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }

  let hunks: DiffHunk[];
  if (endA === start || endB === start) {
    hunks = [{ aStart: start, aEnd: endA, bStart: start, bEnd: endB }];
  } else {
    const lineHunks = diffPieces(a, b, start, endA, start, endB, LINE, maxLineEdits);
    if (lineHunks === null) {
      coarse = true;
      hunks = [{ aStart: start, aEnd: endA, bStart: start, bEnd: endB }];
    } else {
      hunks = [];
      for (const h of joinAcrossBlankLines(a, lineHunks)) {
        const both = h.aStart !== h.aEnd && h.bStart !== h.bEnd;
        const fine = both ? diffPieces(a, b, h.aStart, h.aEnd, h.bStart, h.bEnd, UNIT, maxUnitEdits) : null;
        if (both && fine === null) coarse = true;
        for (const x of fine ?? [h]) {
          const n = narrow(a, b, x);
          if (n.aEnd > n.aStart || n.bEnd > n.bStart) hunks.push(n);
        }
      }
    }
  }
  return { equal: false, hunks: mergeHunks(hunks, options.mergeGap ?? 2), coarse };
}

/**
 * Joins line hunks separated only by a few blank lines, so their stretch is diffed finely as one: on lines alone, a
 * blank line one side has twice can match the wrong one, leaving a line deleted on one side and re-inserted on the
 * other (a message whose text is the same on both sides reported as changed).
 */
function joinAcrossBlankLines(a: string, hunks: readonly DiffHunk[]): DiffHunk[] {
  const out: DiffHunk[] = [];
  for (const h of hunks) {
    const last = out.at(-1);
    if (last && h.aStart - last.aEnd <= BLANK_GAP && /^\s*$/.test(a.slice(last.aEnd, h.aStart))) {
      last.aEnd = h.aEnd;
      last.bEnd = h.bEnd;
    } else {
      out.push({ ...h });
    }
  }
  return out;
}

/** The most equal characters (blank lines only) between two line hunks that are diffed finely as one. */
const BLANK_GAP = 4;

/** Joins hunks separated by at most `gap` equal characters. */
export function mergeHunks(hunks: readonly DiffHunk[], gap: number): DiffHunk[] {
  const out: DiffHunk[] = [];
  for (const h of hunks) {
    const last = out.at(-1);
    if (last && h.aStart - last.aEnd <= gap && h.bStart - last.bEnd <= gap) {
      last.aEnd = h.aEnd;
      last.bEnd = h.bEnd;
    } else {
      out.push({ ...h });
    }
  }
  return out;
}

/** Applies a diff's hunks to `a`, taking the replacement text from `b` (a test of a diff's correctness). */
export function applyHunks(a: string, b: string, hunks: readonly DiffHunk[]): string {
  let out = "";
  let pos = 0;
  for (const h of hunks) {
    out += a.slice(pos, h.aStart) + b.slice(h.bStart, h.bEnd);
    pos = h.aEnd;
  }
  return out + a.slice(pos);
}

/** 1-based line and column of an offset. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: offset - lineStart + 1 };
}

export interface TextPart {
  start: number;
  text: string;
  /** Inside one of the ranges. An empty changed part marks where the other side has text this one lacks. */
  changed: boolean;
}

/** Splits a text at sorted, non-overlapping `[start, end)` ranges (empty ranges give empty changed parts). */
export function splitByRanges(text: string, ranges: readonly (readonly [number, number])[]): TextPart[] {
  const parts: TextPart[] = [];
  let pos = 0;
  for (const [s, e] of ranges) {
    if (s > pos) parts.push({ start: pos, text: text.slice(pos, s), changed: false });
    parts.push({ start: s, text: text.slice(s, e), changed: true });
    pos = Math.max(pos, e);
  }
  if (pos < text.length) parts.push({ start: pos, text: text.slice(pos), changed: false });
  return parts;
}
