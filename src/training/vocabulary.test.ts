/**
 * The BPE trainer against the tokenizer that applies its merges: transformers.js, reading the tokenizer.json a trained
 * model's folder gets (`tokenizerJson(merges)`). What the trainer counted must be what the tokenizer cuts, else its
 * merges would be learned from pieces the tokenizer never sees.
 */

import { describe, expect, it } from "vitest";
import { byteLevelTokenizer } from "../core/index.js";
import { ADDED_TOKENS, VOCAB_SIZE } from "../core/tokenizer/byte-level.js";
import { MergesError, parseMerges, preTokenize } from "../policy/builtin-model/merges.js";
import { allowedTokenIds } from "../policy/builtin-model/logit-shaping.js";
import { vocabularyOf, vocabularyTokenizer } from "../cli/training-vocabulary.js";
import { learnMerges } from "./vocabulary.js";

const TEXTS = [
  "<|im_start|>assistant\n<think>first 900 - 17</think>[900, 17, diff]<call: calculator><|im_end|>\n",
  "<|im_start|>assistant\n<think>then 883 * 4</think>[883, 4, prod]<call: calculator><|im_end|>\n",
  '<|im_start|>assistant\n<tool_call>\n{"name": "write_file", "arguments": {"path": "/workspace/out.txt", "content": "16\\n"}}\n</tool_call><|im_end|>\n',
  '<|im_start|>assistant\n<tool_call>\n{"name": "read_file", "arguments": {"path": "/workspace/data/a.txt"}}\n</tool_call><|im_end|>\n',
  "<|im_start|>user\nSolve: (3 + 5) * 2 — naïve café, tabs\tand  two spaces\n\n<|im_end|>\n",
];

const MARKERS = new Set(ADDED_TOKENS.map((t) => t.content));
const MARKER = new RegExp(`(${ADDED_TOKENS.map((t) => t.content.replace(/[|]/g, "\\|")).join("|")})`);

const tokenizerOf = (merges: ReturnType<typeof learnMerges>) => vocabularyTokenizer(vocabularyOf(merges));

describe("learnMerges and the tokenizer that applies them", () => {
  const texts = Array.from({ length: 20 }, () => TEXTS).flat();
  const merges = learnMerges(texts, 200);

  it("learns the most frequent pairs first, never across a marker, and makes the lab's words single tokens", async () => {
    expect(merges.length).toBeGreaterThan(50);
    expect(merges.every(([a, b]) => !(a + b).includes("<|") && !ADDED_TOKENS.some((t) => (a + b).includes(t.content)))).toBe(true);
    const tokenizer = await tokenizerOf(merges);
    for (const word of [" diff", "write", "_file", '"}}', " calculator"]) expect(tokenizer.encode(word)).toHaveLength(1);
    // Digits stay one by one: a number is copied digit by digit.
    expect(tokenizer.encode("[900, 17,").filter((id) => tokenizer.decode([id]).match(/\d\d/))).toEqual([]);
  });

  it("cuts text where the trainer cut it: no token crosses a piece, and decoding gives the text back byte for byte", async () => {
    const tokenizer = await tokenizerOf(merges);
    for (const text of TEXTS) {
      const ids = tokenizer.encode(text);
      expect(tokenizer.decode(ids)).toBe(text);
      expect(ids.length).toBeLessThan(byteLevelTokenizer.encode(text).length);
      // Every piece edge is a token edge (in ASCII text, where a token's text is its bytes).
      if (!/^[\x00-\x7f]*$/.test(text)) continue;
      const edges = new Set<number>();
      let at = 0;
      for (const segment of text.split(MARKER)) {
        if (MARKERS.has(segment)) edges.add((at += segment.length));
        else for (const piece of preTokenize(segment)) edges.add((at += piece.length));
      }
      let end = 0;
      const tokenEdges = new Set(ids.map((id) => (end += tokenizer.decode([id]).length)));
      for (const edge of edges) expect(tokenEdges.has(edge), `a token crosses ${JSON.stringify(text.slice(0, edge))}`).toBe(true);
    }
  });

  it("keeps the bytes' and the markers' ids, and numbers merged tokens from 265", async () => {
    const tokenizer = await tokenizerOf(merges);
    expect(tokenizer.encode("<tool_call>\u007f")).toEqual([...byteLevelTokenizer.encode("<tool_call>\u007f")]);
    const ids = tokenizer.encode(TEXTS[2]!.split("assistant\n")[1]!);
    expect(Math.max(...ids)).toBeGreaterThanOrEqual(VOCAB_SIZE);
    expect(Math.max(...ids)).toBeLessThan(VOCAB_SIZE + merges.length);
    // The logit shaping lets the model emit every merged token of printable bytes, and no other.
    const allowed = new Set(allowedTokenIds(merges));
    expect(ids.every((id) => allowed.has(id))).toBe(true);
    const tab = tokenizer.encode("\t")[0]!;
    expect(allowed.has(tab)).toBe(false);
  });

  it("is deterministic, and stops early when no pair occurs twice", () => {
    expect(learnMerges(texts, 200)).toEqual(merges);
    expect(learnMerges(["abc"], 10)).toEqual([]);
    expect(learnMerges(["abab"], 10)).toEqual([["a", "b"]]);
  });
});

describe("parseMerges", () => {
  it("names the merge that is not a pair, or whose part is no token yet, or that makes a token twice", () => {
    expect(() => parseMerges([["a", "b"], "c d"], "v")).toThrow(new MergesError('v[1]: expected a pair of non-empty strings, got "c d"'));
    expect(() => parseMerges([["ab", "c"]], "v")).toThrow(/v\[0\]: "ab" is neither a byte nor an earlier merge's token/);
    expect(() => parseMerges([["a", "b"], ["a", "b"]], "v")).toThrow(/v\[1\]: "ab" is already a token/);
    expect(parseMerges([["a", "b"], ["ab", "Ġ"]], "v")).toEqual([["a", "b"], ["ab", "Ġ"]]);
  });
});
