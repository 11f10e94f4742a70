/**
 * A columnar batch (`BatchedDataDict`, upstream-rollouts.md §1.5): each key holds one value per sample.
 *
 * Unlike the reference, `selectIndices`, `slice` and `repeatInterleave` never share element objects with the
 * source (decision 1: inputs are never mutated): each returns deep copies of what it selects.
 */

export type Columns = Record<string, unknown[]>;

export class BatchedDataDict {
  constructor(readonly data: Columns) {}

  get size(): number {
    const first = Object.values(this.data)[0];
    return first ? first.length : 0;
  }

  keys(): string[] {
    return Object.keys(this.data);
  }

  get(key: string): unknown[] {
    const column = this.data[key];
    if (!column) throw new Error(`batch has no key '${key}'`);
    return column;
  }

  has(key: string): boolean {
    return Object.prototype.hasOwnProperty.call(this.data, key);
  }

  selectIndices(indices: readonly number[]): BatchedDataDict {
    return this.map((column) => indices.map((i) => structuredClone(column[i])));
  }

  slice(start: number, end: number): BatchedDataDict {
    return this.map((column) => column.slice(start, end).map((v) => structuredClone(v)));
  }

  /** Each sample n times, consecutively (`[a, a, b, b]`), every copy independent. */
  repeatInterleave(n: number): BatchedDataDict {
    return this.map((column) => column.flatMap((v) => Array.from({ length: n }, () => structuredClone(v))));
  }

  /** Concatenates batches; the keys are the sorted union, and a key missing from a non-empty batch is an error. */
  static fromBatches(batches: readonly BatchedDataDict[]): BatchedDataDict {
    const keys = [...new Set(batches.flatMap((b) => b.keys()))].sort();
    const data: Columns = {};
    for (const key of keys) {
      data[key] = batches.flatMap((b) => {
        if (b.size > 0 && !b.has(key)) throw new Error(`batch is missing key '${key}'`);
        return b.has(key) ? b.data[key]! : [];
      });
    }
    return new BatchedDataDict(data);
  }

  /** One plain object per sample. */
  rows(): Record<string, unknown>[] {
    return Array.from({ length: this.size }, (_, i) =>
      Object.fromEntries(this.keys().map((k) => [k, this.data[k]![i]])),
    );
  }

  static fromRows(rows: readonly Record<string, unknown>[]): BatchedDataDict {
    const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))];
    return new BatchedDataDict(Object.fromEntries(keys.map((k) => [k, rows.map((r) => r[k])])));
  }

  private map(fn: (column: unknown[]) => unknown[]): BatchedDataDict {
    return new BatchedDataDict(Object.fromEntries(this.keys().map((k) => [k, fn(this.data[k]!)])));
  }
}
