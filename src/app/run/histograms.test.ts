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
});
