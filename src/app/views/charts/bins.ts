/** Pure helpers for the small charts: histogram bins, per-index means, axis ticks and number formatting. */

export interface Bin {
  /** Inclusive lower edge. */
  x0: number;
  /** Exclusive upper edge (inclusive for the last bin). */
  x1: number;
  count: number;
  /** What the bin holds, in words short enough for an axis ("3", "0.5–1"). */
  label: string;
}

/** A "nice" step (1, 2 or 5 × 10^k) near span / target. */
export function niceStep(span: number, target: number): number {
  if (!(span > 0) || !(target > 0)) return 1;
  const raw = span / target;
  const power = 10 ** Math.floor(Math.log10(raw));
  const f = raw / power;
  const nice = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
  return nice * power;
}

/** Rounds away floating-point noise from a multiple of a step (0.30000000000000004 → 0.3). */
const clean = (x: number) => Number.parseFloat(x.toPrecision(12));

/** Ticks from 0 to at least `max`, about `target` of them, at a nice step. */
export function niceTicks(max: number, target = 5): number[] {
  if (!(max > 0)) return [0];
  const step = niceStep(max, target);
  const ticks: number[] = [];
  for (let i = 0; ; i++) {
    const v = clean(i * step);
    ticks.push(v);
    if (v >= max) break;
  }
  return ticks;
}

/** Short text for a number: integers as they are, others with up to `digits` significant digits. */
export function formatNumber(x: number, digits = 4): string {
  if (Number.isNaN(x)) return "NaN";
  if (!Number.isFinite(x)) return x > 0 ? "∞" : "−∞";
  if (Number.isInteger(x)) return String(x);
  const abs = Math.abs(x);
  if (abs >= 1e6 || abs < 1e-4) return x.toExponential(digits - 1);
  return String(Number.parseFloat(x.toPrecision(digits)));
}

/**
 * Bins values for a histogram with at most `maxBins` bins. Non-finite values are left out.
 * - all values equal: one bin holding them all;
 * - integers over a range that fits: one bin per integer (label "k");
 * - otherwise equal-width bins at a nice step, aligned on multiples of it (label "a–b"); the last bin includes
 *   its upper edge.
 */
export function histogramBins(values: readonly number[], maxBins = 20): Bin[] {
  const xs = values.filter(Number.isFinite);
  if (xs.length === 0) return [];
  let lo = xs[0]!;
  let hi = xs[0]!;
  for (const x of xs) {
    if (x < lo) lo = x;
    if (x > hi) hi = x;
  }
  if (lo === hi) return [{ x0: lo, x1: hi, count: xs.length, label: formatNumber(lo) }];
  const bins = Math.max(1, Math.floor(maxBins));
  if (xs.every(Number.isInteger) && hi - lo + 1 <= bins) {
    const out: Bin[] = [];
    for (let k = lo; k <= hi; k++) out.push({ x0: k, x1: k + 1, count: 0, label: String(k) });
    for (const x of xs) out[x - lo]!.count += 1;
    return out;
  }
  let step = niceStep(hi - lo, bins);
  let start = Math.floor(lo / step) * step;
  // Alignment can need more bins than asked for: widen the step a little, else give up on nice edges.
  for (let tries = 0; Math.ceil(clean((hi - start) / step)) > bins; tries++) {
    if (tries < 3) {
      step = niceStep(step * 1.5, 1);
      start = Math.floor(lo / step) * step;
    } else {
      step = (hi - lo) / bins;
      start = lo;
      break;
    }
  }
  const n = Math.max(1, Math.ceil(clean((hi - start) / step)));
  const out: Bin[] = [];
  for (let i = 0; i < n; i++) {
    // Edges without float noise, yet never inside the data's range at its ends.
    const x0 = i === 0 ? Math.min(clean(start), lo) : clean(start + i * step);
    const x1 = i === n - 1 ? Math.max(clean(start + (i + 1) * step), hi) : clean(start + (i + 1) * step);
    out.push({ x0, x1, count: 0, label: `${formatNumber(x0)}–${formatNumber(x1)}` });
  }
  for (const x of xs) {
    const i = Math.min(n - 1, Math.max(0, Math.floor(clean((x - start) / step))));
    out[i]!.count += 1;
  }
  return out;
}

export interface IndexMean {
  index: number;
  mean: number;
  /** How many rows had a value at this index. */
  count: number;
}

/** The mean of the values at each index over rows of different lengths (row k's i-th value counts for index i). */
export function meanByIndex(rows: readonly (readonly (number | null)[])[]): IndexMean[] {
  const sums: number[] = [];
  const counts: number[] = [];
  for (const row of rows) {
    row.forEach((v, i) => {
      if (v === null || !Number.isFinite(v)) return;
      sums[i] = (sums[i] ?? 0) + v;
      counts[i] = (counts[i] ?? 0) + 1;
    });
  }
  const out: IndexMean[] = [];
  for (let i = 0; i < sums.length; i++) {
    const count = counts[i] ?? 0;
    out.push({ index: i, mean: count ? sums[i]! / count : 0, count });
  }
  return out;
}
