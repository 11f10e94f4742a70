/**
 * Binning a run's samples for the overview's histograms: integer fields (turns) get one bin per integer (or
 * integer-width bins when the range is wide), the rest equal-width bins; NaN / null / missing are counted apart.
 * Each bin carries the filter expression that selects it, so clicking a bar sets a filter the user can read.
 */

export interface HistogramBin {
  lo: number;
  /** Exclusive, except the last bin's, which is inclusive. */
  hi: number;
  count: number;
  last: boolean;
}

export interface Histogram {
  field: string;
  bins: HistogramBin[];
  /** Values that are not finite numbers (NaN, null, missing). */
  missing: number;
  integer: boolean;
}

export function binValues(field: string, values: readonly unknown[], options: { integer?: boolean; bins?: number } = {}): Histogram {
  const numbers: number[] = [];
  let missing = 0;
  for (const v of values) {
    if (typeof v === "number" && Number.isFinite(v)) numbers.push(v);
    else missing++;
  }
  const integer = options.integer ?? false;
  if (numbers.length === 0) return { field, bins: [], missing, integer };
  let min = Infinity;
  let max = -Infinity;
  for (const v of numbers) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const wanted = options.bins ?? 10;
  let width: number;
  let count: number;
  if (integer) {
    min = Math.floor(min);
    width = Math.max(1, Math.ceil((Math.floor(max) - min + 1) / wanted));
    count = Math.max(1, Math.ceil((Math.floor(max) - min + 1) / width));
  } else if (min === max) {
    width = 1;
    count = 1;
  } else {
    width = (max - min) / wanted;
    count = wanted;
  }
  // The edges are the very numbers the bars' filters print: the outer ones exact, the inner ones rounded to be read
  // (never out of order). A value is counted in the bin whose filter keeps it, by the filter's own comparisons.
  const edges = Array.from({ length: count + 1 }, (_, i) => (integer || i === 0 ? min + i * width : i === count ? max : readable(min + i * width)));
  for (let i = 1; i < count; i++) edges[i] = Math.min(edges[count]!, Math.max(edges[i - 1]!, edges[i]!));
  const bins: HistogramBin[] = Array.from({ length: count }, (_, i) => ({ lo: edges[i]!, hi: edges[i + 1]!, count: 0, last: i === count - 1 }));
  for (const v of numbers) {
    let i = count - 1;
    while (i > 0 && v < edges[i]!) i--;
    bins[i]!.count++;
  }
  return { field, bins, missing, integer };
}

/** The filter expression that selects a bin's samples: the bin's edges as numbers that read back exactly. */
export function binExpression(h: Pick<Histogram, "field" | "integer">, bin: HistogramBin): string {
  if (h.integer && bin.hi - bin.lo === 1) return `${h.field} == ${bin.lo}`;
  if (bin.last) return `${h.field} >= ${String(bin.lo)} and ${h.field} <= ${String(bin.hi)}`;
  return `${h.field} >= ${String(bin.lo)} and ${h.field} < ${String(bin.hi)}`;
}

/** Enough digits to keep bin edges apart, few enough to read. */
function readable(v: number): number {
  return Number(v.toPrecision(10));
}
