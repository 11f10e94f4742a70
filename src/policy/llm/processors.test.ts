import { describe, expect, it } from "vitest";
import { byteLevelTokenizer, Rng } from "../../core/index.js";
import { logSoftmax, sampleToken, stepStats, stopsAt } from "./processors.js";

/** Brute force: entropy as a plain sum, and a full sort of the vocabulary (what stepStats must equal). */
function bruteForce(lps: readonly number[], k: number) {
  const entropy = -lps.reduce((s, lp) => (lp > -Infinity ? s + Math.exp(lp) * lp : s), 0);
  const order = lps
    .map((logprob, tokenId) => ({ tokenId, logprob }))
    .filter((t) => t.logprob > -Infinity)
    .sort((a, b) => b.logprob - a.logprob || a.tokenId - b.tokenId);
  return { entropy, top: order.slice(0, k) };
}

/** Log-softmax in float64 (the float32 one's reference). */
function logSoftmax64(logits: readonly number[]): number[] {
  const max = Math.max(...logits.filter((x) => x > -Infinity));
  const z = logits.reduce((s, x) => s + Math.exp(x - max), 0);
  return logits.map((x) => x - max - Math.log(z));
}

const logits = [0.3, -1.2, 2.5, 0.3, -Infinity, 1.7, -0.4, 2.5, -3, 0.9, 0.3];

describe("stepStats: entropy and top alternatives in one pass", () => {
  it("equals a brute-force softmax, entropy and sort on a hand-made row", () => {
    const row = logSoftmax(Float32Array.from(logits));
    const got = stepStats(row, 5);
    // The brute force runs on the same float32 log-probabilities, so ids and values agree exactly.
    const want = bruteForce(Array.from(row), 5);
    expect(got.top).toEqual(want.top);
    expect(got.entropy).toBeCloseTo(want.entropy, 10);
    // And against the float64 softmax of the raw logits, to float32 precision.
    expect(got.entropy).toBeCloseTo(bruteForce(logSoftmax64(logits), 5).entropy, 5);
    expect(got.top.map((t) => t.tokenId)).toEqual([2, 7, 5, 9, 0]);
  });

  it("orders ties by the lower id, and leaves out tokens of probability 0", () => {
    const row = Float32Array.from([-1, -Infinity, -1, -2, -Infinity]);
    expect(stepStats(row, 5).top).toEqual([
      { tokenId: 0, logprob: -1 },
      { tokenId: 2, logprob: -1 },
      { tokenId: 3, logprob: -2 },
    ]);
  });

  it("has entropy 0 for a certain token and log(V) for a uniform row", () => {
    expect(stepStats(Float32Array.from([0, -Infinity, -Infinity]), 5).entropy).toBe(0);
    expect(stepStats(logSoftmax(new Float32Array(8)), 5).entropy).toBeCloseTo(Math.log(8), 6);
  });

  it("agrees with the brute force on random rows, and holds the chosen token whenever it is in the top 5", () => {
    const rng = new Rng(7);
    for (let n = 0; n < 200; n++) {
      const raw = Float32Array.from({ length: 3 + Math.floor(rng.next() * 60) }, () => Math.round((rng.next() * 8 - 4) * 4) / 4);
      const row = logSoftmax(raw);
      const got = stepStats(row, 5);
      const want = bruteForce(Array.from(row), 5);
      expect(got.top).toEqual(want.top);
      expect(got.entropy).toBeCloseTo(want.entropy, 9);
      // A token drawn from the row: listed exactly when its log-probability ranks in the top 5.
      const chosen = sampleToken(raw, {}, rng);
      const rank = bruteForce(Array.from(row), raw.length).top.findIndex((t) => t.tokenId === chosen);
      expect(got.top.some((t) => t.tokenId === chosen && t.logprob === row[chosen])).toBe(rank < 5);
      // Greedy's token is always the first alternative.
      expect(got.top[0]!.tokenId).toBe(sampleToken(raw, { temperature: 0 }, rng));
    }
  });

  it("k = 0 lists nothing", () => {
    expect(stepStats(Float32Array.from([0.5, 0.5]), 0).top).toEqual([]);
  });
});

describe("stopsAt: the newest token completes a stop string", () => {
  /** The first token (1-based) whose arrival stopsAt reports, feeding `text`'s byte-level tokens one at a time. */
  const stopsAfter = (text: string, stops: string[]) => {
    const ids = byteLevelTokenizer.encode(text);
    for (let n = 1; n <= ids.length; n++) if (stopsAt(ids.slice(0, n), 0, stops, byteLevelTokenizer)) return n;
    return -1;
  };

  it("stops at the token that completes it, once, ASCII and multi-byte alike", () => {
    expect(stopsAfter("thinking... DONE and more", ["DONE"])).toBe(16);
    // 3 characters, 9 bytes: each byte is a token of the byte-level vocabulary.
    const prefix = new TextEncoder().encode("answer: ").length;
    expect(stopsAfter("answer: 完成了 and more", ["完成了"])).toBe(prefix + 9);
    expect(stopsAfter("ok 🙂🙂🙂 end", ["🙂🙂🙂"])).toBe(3 + 12);
    expect(stopsAfter("no stop here", ["完成了"])).toBe(-1);
  });
});
