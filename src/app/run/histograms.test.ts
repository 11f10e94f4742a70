import { describe, expect, it } from "vitest";
import { binExpression, binValues } from "./histograms.js";
import { compileFilter } from "./sample-filter.js";
import type { SampleView } from "./run-model.js";

describe("binValues", () => {
  it("gives equal-width bins and counts NaN / null apart", () => {
    const h = binValues("reward", [0, 0.25, 0.5, 0.75, 1, NaN, null, undefined], { bins: 4 });
    expect(h.bins.map((b) => [b.lo, b.hi, b.count])).toEqual([
      [0, 0.25, 1],
      [0.25, 0.5, 1],
      [0.5, 0.75, 1],
      [0.75, 1, 2],
    ]);
    expect(h.missing).toBe(3);
  });

  it("gives integer fields one bin per integer", () => {
    const h = binValues("turns", [1, 1, 2, 4], { integer: true });
    expect(h.bins.map((b) => [b.lo, b.count])).toEqual([
      [1, 2],
      [2, 1],
      [3, 0],
      [4, 1],
    ]);
    expect(binExpression(h, h.bins[0]!)).toBe("turns == 1");
  });

  it("widens integer bins over a wide range and keeps one bin for a single value", () => {
    const wide = binValues("turns", [0, 99], { integer: true, bins: 10 });
    expect(wide.bins).toHaveLength(10);
    expect(wide.bins[0]!.hi - wide.bins[0]!.lo).toBe(10);
    const flat = binValues("reward", [2, 2, 2]);
    expect(flat.bins).toEqual([{ lo: 2, hi: 2, count: 3, last: true }]);
  });

  it("writes expressions that select exactly the bin's samples", () => {
    const rewards = [0, 0.1, 0.33, 0.5, 0.9, 1];
    const h = binValues("reward", rewards, { bins: 3 });
    const samples = rewards.map((r, n) => ({ sample: n, totalReward: r, messages: [], turns: [] }) as unknown as SampleView);
    for (const bin of h.bins) {
      const c = compileFilter(binExpression(h, bin));
      if (!("test" in c) || !c.test) throw new Error("did not compile");
      expect(samples.filter(c.test).length).toBe(bin.count);
    }
  });

  it("counts each value in the bar whose filter keeps it: values on edges, repeating decimals, a flat run, random ones", () => {
    const agree = (rewards: number[], bins?: number) => {
      const h = binValues("reward", rewards, bins ? { bins } : {});
      const samples = rewards.map((r, n) => ({ sample: n, totalReward: r, messages: [], turns: [] }) as unknown as SampleView);
      const kept = h.bins.map((bin) => {
        const c = compileFilter(binExpression(h, bin));
        if (!("test" in c) || !c.test) throw new Error("did not compile");
        return samples.filter(c.test).length;
      });
      expect(kept).toEqual(h.bins.map((b) => b.count));
      expect(kept.reduce((a, b) => a + b, 0)).toBe(rewards.length);
      return h.bins.map((b) => b.count);
    };
    // Tenths sit on the edges: floating-point division put 0.3 and 0.7 into the bins below (2, 0, …).
    expect(agree([0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1])).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 1, 2]);
    // Edges rounded for reading shut a bin's own values out: one bar of two thirds, its filter kept none.
    expect(agree([1 / 3, 1 / 3])).toEqual([2]);
    agree([0, 1 / 3]);
    let seed = 7;
    const next = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 3 - 1;
    for (let k = 0; k < 50; k++) agree(Array.from({ length: 40 }, next), 1 + (k % 12));
  });
});
