import { describe, expect, it } from "vitest";
import { formatNumber, histogramBins, meanByIndex, niceStep, niceTicks } from "./bins.js";

describe("histogramBins", () => {
  it("is empty without finite values", () => {
    expect(histogramBins([])).toEqual([]);
    expect(histogramBins([Number.NaN, Infinity])).toEqual([]);
  });

  it("puts equal values in one bin", () => {
    expect(histogramBins([2, 2, 2])).toEqual([{ x0: 2, x1: 2, count: 3, label: "2" }]);
  });

  it("gives integers one bin each when the range fits, empty bins included", () => {
    const bins = histogramBins([1, 3, 3, 4, 1, 1], 10);
    expect(bins.map((b) => [b.label, b.count])).toEqual([
      ["1", 3],
      ["2", 0],
      ["3", 2],
      ["4", 1],
    ]);
  });

  it("uses equal nice-width bins otherwise, aligned on the step, the last one closed", () => {
    const bins = histogramBins([0, 0.1, 0.25, 0.5, 0.99, 1], 4);
    expect(bins.map((b) => [b.x0, b.x1])).toEqual([
      [0, 0.5],
      [0.5, 1],
    ]);
    expect(bins.map((b) => b.count)).toEqual([3, 3]);
    expect(bins[0]!.label).toBe("0–0.5");
  });

  it("never makes more bins than asked for, and counts every value once", () => {
    const values = Array.from({ length: 1000 }, (_, i) => Math.sin(i) * 37.3 - 3);
    for (const maxBins of [1, 3, 7, 16, 20]) {
      const bins = histogramBins(values, maxBins);
      expect(bins.length).toBeLessThanOrEqual(maxBins);
      expect(bins.reduce((n, b) => n + b.count, 0)).toBe(1000);
      for (let i = 1; i < bins.length; i++) expect(bins[i]!.x0).toBe(bins[i - 1]!.x1);
      expect(bins[0]!.x0).toBeLessThanOrEqual(Math.min(...values));
      expect(bins.at(-1)!.x1).toBeGreaterThanOrEqual(Math.max(...values));
    }
  });

  it("bins a wide integer range like real numbers", () => {
    const bins = histogramBins([0, 100, 250], 5);
    expect(bins.length).toBeLessThanOrEqual(5);
    expect(bins.reduce((n, b) => n + b.count, 0)).toBe(3);
  });

  it("handles negative rewards", () => {
    const bins = histogramBins([-1.5, -0.5, 1], 10);
    expect(bins[0]!.x0).toBeLessThanOrEqual(-1.5);
    expect(bins.reduce((n, b) => n + b.count, 0)).toBe(3);
  });
});

describe("meanByIndex", () => {
  it("averages each index over the rows that have it, skipping nulls", () => {
    expect(meanByIndex([[10, 20, 30], [20, null], [30]])).toEqual([
      { index: 0, mean: 20, count: 3 },
      { index: 1, mean: 20, count: 1 },
      { index: 2, mean: 30, count: 1 },
    ]);
    expect(meanByIndex([])).toEqual([]);
    expect(meanByIndex([[null, 4]])).toEqual([
      { index: 0, mean: 0, count: 0 },
      { index: 1, mean: 4, count: 1 },
    ]);
  });
});

describe("ticks and numbers", () => {
  it("picks 1, 2 or 5 times a power of ten", () => {
    expect(niceStep(10, 5)).toBe(2);
    expect(niceStep(0.7, 5)).toBe(0.2);
    expect(niceStep(1000, 4)).toBe(500);
    expect(niceStep(0, 4)).toBe(1);
  });

  it("ticks from 0 to at least the maximum, without float noise", () => {
    expect(niceTicks(9, 5)).toEqual([0, 2, 4, 6, 8, 10]);
    expect(niceTicks(0.3, 3)).toEqual([0, 0.1, 0.2, 0.3]);
    expect(niceTicks(0)).toEqual([0]);
  });

  it("formats numbers briefly", () => {
    expect(formatNumber(3)).toBe("3");
    expect(formatNumber(0.123456)).toBe("0.1235");
    expect(formatNumber(2 / 3, 6)).toBe("0.666667");
    expect(formatNumber(Number.NaN)).toBe("NaN");
    expect(formatNumber(1e-7)).toBe("1.000e-7");
  });
});
