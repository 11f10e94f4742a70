import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { applyHunks, diffSequences, diffText, lineColumn, mergeHunks, splitByRanges, type DiffHunk } from "./diff.js";

function lcsLength(a: string, b: string): number {
  const row = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    let diag = 0;
    for (let j = 1; j <= b.length; j++) {
      const up = row[j]!;
      row[j] = a[i - 1] === b[j - 1] ? diag + 1 : Math.max(row[j]!, row[j - 1]!);
      diag = up;
    }
  }
  return row[b.length]!;
}

const edits = (hunks: readonly DiffHunk[]) => hunks.reduce((n, h) => n + (h.aEnd - h.aStart) + (h.bEnd - h.bStart), 0);

function expectWellFormed(a: string, b: string, hunks: readonly DiffHunk[]) {
  let pa = 0;
  let pb = 0;
  for (const h of hunks) {
    expect(h.aStart).toBeGreaterThanOrEqual(pa);
    expect(h.bStart).toBeGreaterThanOrEqual(pb);
    expect(h.aEnd).toBeGreaterThanOrEqual(h.aStart);
    expect(h.bEnd).toBeGreaterThanOrEqual(h.bStart);
    expect(h.aEnd - h.aStart + (h.bEnd - h.bStart)).toBeGreaterThan(0);
    pa = h.aEnd;
    pb = h.bEnd;
  }
  expect(pa).toBeLessThanOrEqual(a.length);
  expect(pb).toBeLessThanOrEqual(b.length);
  expect(applyHunks(a, b, hunks)).toBe(b);
}

describe("diffSequences (Myers)", () => {
  it("finds the classic example's shortest script", () => {
    const hunks = diffSequences("ABCABBA", "CBABAC", 100)!;
    expect(edits(hunks)).toBe(5);
    expectWellFormed("ABCABBA", "CBABAC", hunks);
  });

  it("handles empty sides", () => {
    expect(diffSequences("", "", 10)).toEqual([]);
    expect(diffSequences("abc", "", 10)).toEqual([{ aStart: 0, aEnd: 3, bStart: 0, bEnd: 0 }]);
    expect(diffSequences("", "ab", 10)).toEqual([{ aStart: 0, aEnd: 0, bStart: 0, bEnd: 2 }]);
  });

  it("gives up past the edit cap", () => {
    expect(diffSequences("aaaa", "bbbb", 3)).toBeNull();
    expect(diffSequences("aaaa", "bbbb", 8)).not.toBeNull();
  });

  it("diffs a window of each side", () => {
    const hunks = diffSequences("xxabcxx", "yabdy", 10, 2, 5, 1, 4)!;
    expect(hunks).toEqual([{ aStart: 4, aEnd: 5, bStart: 3, bEnd: 4 }]);
  });

  it("is minimal and correct on random strings", () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom("a", "b", "c"), maxLength: 24 }), fc.string({ unit: fc.constantFrom("a", "b", "c"), maxLength: 24 }), (a, b) => {
        const hunks = diffSequences(a, b, 1000)!;
        expectWellFormed(a, b, hunks);
        expect(edits(hunks)).toBe(a.length + b.length - 2 * lcsLength(a, b));
      }),
      { numRuns: 500 },
    );
  });
});

describe("diffText", () => {
  it("says equal texts are equal", () => {
    expect(diffText("same\ntext", "same\ntext")).toEqual({ equal: true, hunks: [], coarse: false });
  });

  it("finds an insertion", () => {
    const d = diffText("<|im_start|>user\nhi<|im_end|>\n", "<|im_start|>user\n<|im_start|>user\nhi<|im_end|>\n");
    expect(d.equal).toBe(false);
    expect(d.hunks).toHaveLength(1);
    const h = d.hunks[0]!;
    expect(h.aEnd - h.aStart).toBe(0);
    expect(h.bEnd - h.bStart).toBe("<|im_start|>user\n".length);
  });

  it("finds a replacement inside a line", () => {
    const a = "line one\nthe value is 41\nline three\n";
    const b = "line one\nthe value is 42\nline three\n";
    expect(diffText(a, b).hunks).toEqual([{ aStart: 23, aEnd: 24, bStart: 23, bEnd: 24 }]);
  });

  it("finds differences on several lines", () => {
    const a = "a\nb\nc\nd\ne\n";
    const b = "a\nB\nc\nd\nE\nf\n";
    const d = diffText(a, b);
    expectWellFormed(a, b, d.hunks);
    expect(d.hunks.map((h) => a.slice(h.aStart, h.aEnd))).toEqual(["b", "e"]);
  });

  it("envelope text around an observation", () => {
    const template = "<|im_start|>user\n<tool_response>\nok\n</tool_response><|im_end|>\n<|im_start|>assistant\n";
    const tokens = "<|im_end|><|im_start|>user\n<tool_response>\nok\n</tool_response><|im_end|>\n<|im_start|>assistant\n";
    const d = diffText(template, tokens);
    expectWellFormed(template, tokens, d.hunks);
    // The shortest script inserts the ten characters of "<|im_end|>" (aligned after the shared "<|im_").
    expect(edits(d.hunks)).toBe("<|im_end|>".length);
  });

  it("reports a very different pair coarsely: the line edits stop at maxLineEdits", () => {
    const a = Array.from({ length: 3000 }, (_, i) => `a${i}\n`).join("");
    const b = Array.from({ length: 3000 }, (_, i) => `b${i}\n`).join("");
    const d = diffText(a, b, { maxLineEdits: 500 });
    expect(d.coarse).toBe(true);
    expectWellFormed(a, b, d.hunks);
  });

  it("diffs long texts with a few changes exactly, within the default edit budget", () => {
    const base = Array.from({ length: 5000 }, (_, i) => `token ${i} of a long log\n`).join("");
    const changed = base.replace("token 100 ", "token 1oo ").replace("token 4000 of", "token 4000 in");
    const d = diffText(base, changed);
    expect(d.coarse).toBe(false);
    expect(d.hunks).toHaveLength(2);
    expectWellFormed(base, changed, d.hunks);
  });

  it("is correct on random multi-line texts", () => {
    const text = fc.string({ unit: fc.constantFrom("a", "b", "\n", "<", "|"), maxLength: 40 });
    fc.assert(
      fc.property(text, text, (a, b) => {
        const d = diffText(a, b);
        expect(d.equal).toBe(a === b);
        expectWellFormed(a, b, d.hunks);
      }),
      { numRuns: 500 },
    );
  });
});

describe("helpers", () => {
  it("mergeHunks joins close hunks", () => {
    const hunks = [
      { aStart: 0, aEnd: 1, bStart: 0, bEnd: 1 },
      { aStart: 3, aEnd: 4, bStart: 3, bEnd: 4 },
      { aStart: 10, aEnd: 11, bStart: 10, bEnd: 10 },
    ];
    expect(mergeHunks(hunks, 2)).toEqual([
      { aStart: 0, aEnd: 4, bStart: 0, bEnd: 4 },
      { aStart: 10, aEnd: 11, bStart: 10, bEnd: 10 },
    ]);
    expect(mergeHunks(hunks, 0)).toEqual(hunks);
  });

  it("lineColumn", () => {
    expect(lineColumn("ab\ncd\nef", 0)).toEqual({ line: 1, column: 1 });
    expect(lineColumn("ab\ncd\nef", 4)).toEqual({ line: 2, column: 2 });
    expect(lineColumn("ab\ncd\nef", 6)).toEqual({ line: 3, column: 1 });
  });

  it("splitByRanges", () => {
    expect(splitByRanges("abcdef", [[1, 2], [4, 4]])).toEqual([
      { start: 0, text: "a", changed: false },
      { start: 1, text: "b", changed: true },
      { start: 2, text: "cd", changed: false },
      { start: 4, text: "", changed: true },
      { start: 4, text: "ef", changed: false },
    ]);
    expect(splitByRanges("", [])).toEqual([]);
  });
});

describe("diffText granularity", () => {
  it("keeps markers and words whole where a character diff would interleave them", () => {
    const a = "x\n<|im_start|>user\n<tool_response>\ntotal 0\n</tool_response><|im_end|>\ny\n";
    const b = "x\ntotal 0\ny\n";
    const d = diffText(a, b);
    expectWellFormed(a, b, d.hunks);
    // One clean deletion before "total 0" and one after; the text "total 0" itself is untouched on both sides.
    expect(d.hunks.map((h) => a.slice(h.aStart, h.aEnd))).toEqual(["<|im_start|>user\n<tool_response>\n", "\n</tool_response><|im_end|>"]);
    expect(d.hunks.every((h) => h.bStart === h.bEnd)).toBe(true);
  });

  it("diffs finely across a blank line the two sides match wrongly on lines alone", () => {
    // A generated message with its envelope (template) against the tokens without it: on lines, the template's blank
    // first line matches the tokens' last, leaving the message's line deleted on one side and inserted on the other.
    const a = "\n</tool_response><|im_end|>\n<|im_start|>assistant\nPb<think>TW<|im_end|>\n<|im_start|>user\n<tool_response>\n<";
    const b = "Pb<think>TW<|im_end|><environment>\n\n";
    const d = diffText(a, b);
    expectWellFormed(a, b, d.hunks);
    // The message's text is equal on both sides: in no hunk.
    for (const h of d.hunks) expect(b.slice(h.bStart, h.bEnd)).not.toContain("Pb<think>TW");
    expect(d.hunks[0]).toMatchObject({ bStart: 0, bEnd: 0 });
  });

  it("narrows a changed word to its differing characters", () => {
    const a = "one\nthe word colour here\nend\n";
    const b = "one\nthe word color here\nend\n";
    const d = diffText(a, b);
    expect(d.hunks).toHaveLength(1);
    expect(a.slice(d.hunks[0]!.aStart, d.hunks[0]!.aEnd)).toBe("u");
  });
});
