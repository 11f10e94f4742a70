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
  const bins: HistogramBin[] = Array.from({ length: count }, (_, i) => ({
    lo: min + i * width,
    hi: integer ? min + (i + 1) * width : i === count - 1 ? max : min + (i + 1) * width,
    count: 0,
    last: i === count - 1,
  }));
  for (const v of numbers) {
    const i = Math.min(count - 1, Math.floor((v - min) / width));
    bins[i]!.count++;
  }
  return { field, bins, missing, integer };
}

/** The filter expression that selects a bin's samples. */
export function binExpression(h: Pick<Histogram, "field" | "integer">, bin: HistogramBin): string {
  if (h.integer && bin.hi - bin.lo === 1) return `${h.field} == ${bin.lo}`;
  if (bin.last) return `${h.field} >= ${round(bin.lo)} and ${h.field} <= ${round(bin.hi)}`;
  return `${h.field} >= ${round(bin.lo)} and ${h.field} < ${round(bin.hi)}`;
}

/** Enough digits to keep bin edges apart, few enough to read. */
function round(v: number): string {
  return String(Number(v.toPrecision(10)));
}
