/**
 * Per-sample KV caches for the decode engine (`decode-engine.ts`): the key/value tensors of the tokens a sample's
 * context has already been run through, kept between its turns so that a turn runs only its new tokens.
 *
 * Every cache input of an HF-style decoder export (`past_key_values.{l}.key|value`) is `[batch, heads, seq, dim]`;
 * a batch row is `heads` contiguous runs of `seq × dim` values. The copies here move runs of positions between
 * such tensors: out of a running batch into one sample's cache, and from caches into a new, left-padded batch.
 */

/** A typed array of a cache tensor's elements (float32, or float16 as Uint16/Float16 storage). */
export type CacheArray = Float32Array | Uint16Array;

/** The layout shared by every cache tensor of a model: its names, element type, heads and head size per name. */
export interface CacheLayout {
  names: readonly string[];
  type: "float32" | "float16";
  heads: readonly number[];
  dims: readonly number[];
}

/** Positions `[start, start + length)` of row `row` of tensors `data` (each `[*, heads, seq, dim]`). */
export interface CacheView {
  data: readonly CacheArray[];
  row: number;
  seq: number;
  start: number;
  length: number;
}

export function emptyArray(layout: CacheLayout, size: number): CacheArray {
  return layout.type === "float16" ? new Uint16Array(size) : new Float32Array(size);
}

/** Bytes a cache of `tokens` positions takes. */
export function cacheBytes(layout: CacheLayout, tokens: number): number {
  const perToken = layout.names.reduce((sum, _, i) => sum + layout.heads[i]! * layout.dims[i]!, 0);
  return perToken * tokens * (layout.type === "float16" ? 2 : 4);
}

/**
 * Copies `source` into row `row` of new tensors of `seq` positions, at positions `[at, at + source.length)`; the
 * rest of `target` is left as it is (zeros, for padding).
 */
export function copyInto(layout: CacheLayout, source: CacheView, target: CacheArray[], row: number, seq: number, at: number): void {
  layout.names.forEach((_, n) => {
    const heads = layout.heads[n]!;
    const dim = layout.dims[n]!;
    const from = source.data[n]!;
    const to = target[n]!;
    for (let h = 0; h < heads; h++) {
      const src = ((source.row * heads + h) * source.seq + source.start) * dim;
      const dst = ((row * heads + h) * seq + at) * dim;
      to.set(from.subarray(src, src + source.length * dim), dst);
    }
  });
}

/** A view as tensors of its own (`[1, heads, length, dim]`): the data itself when it already is one. */
export function extract(layout: CacheLayout, view: CacheView): CacheArray[] {
  if (view.row === 0 && view.start === 0 && view.length === view.seq && view.data.every((d, n) => d.length === cacheSize(layout, n, 1, view.seq))) {
    return [...view.data];
  }
  const out = layout.names.map((_, n) => emptyArray(layout, cacheSize(layout, n, 1, view.length)));
  copyInto(layout, view, out, 0, view.length, 0);
  return out;
}

/**
 * Rows `views` as one batch, each left-padded to the longest plus `headroom` (`seq` positions): row `i` holds its
 * positions at `[seq − length, seq)`; the buffers have `room` more positions after `seq` (append mode's next steps)
 * and `rowsAllocated` rows (rows past the views' are zeros, for rows that join later). Returns the arrays, `seq`,
 * the capacity and each row's padding.
 */
export function assembleBatch(
  layout: CacheLayout,
  views: readonly CacheView[],
  { headroom = 0, room = 0, rowsAllocated = views.length }: { headroom?: number; room?: number; rowsAllocated?: number } = {},
): { data: CacheArray[]; seq: number; cap: number; pads: number[] } {
  const seq = Math.max(0, ...views.map((v) => v.length)) + headroom;
  const cap = seq + room;
  const data = layout.names.map((_, n) => emptyArray(layout, cacheSize(layout, n, Math.max(rowsAllocated, views.length), cap)));
  const pads = views.map((view, row) => {
    const pad = seq - view.length;
    copyInto(layout, view, data, row, cap, pad);
    return pad;
  });
  return { data, seq, cap, pads };
}

/**
 * A batch's tensors (`[batch, heads, seq, dim]`, of which positions `[0, filled)` are used) copied into tensors of
 * `capacity` positions (and `rowsAllocated` rows, at least `batch`), each row's used positions at the same place;
 * the rest zeros.
 */
export function growCapacity(
  layout: CacheLayout,
  data: readonly CacheArray[],
  batch: number,
  seq: number,
  filled: number,
  capacity: number,
  rowsAllocated = batch,
): CacheArray[] {
  if (capacity < filled) throw new RangeError(`a capacity of ${capacity} positions cannot hold ${filled}`);
  const out = layout.names.map((_, n) => emptyArray(layout, cacheSize(layout, n, Math.max(batch, rowsAllocated), capacity)));
  for (let row = 0; row < batch; row++) copyInto(layout, { data, row, seq, start: 0, length: filled }, out, row, capacity, 0);
  return out;
}

/**
 * Writes one step's keys and values (`fresh`, each `[batch, heads, 1, dim]`) into position `at` of every row of
 * `data` (each `[batch, heads, capacity, dim]`).
 */
export function writePosition(layout: CacheLayout, data: readonly CacheArray[], capacity: number, fresh: readonly CacheArray[], batch: number, at: number): void {
  for (let row = 0; row < batch; row++) copyInto(layout, { data: fresh, row, seq: 1, start: 0, length: 1 }, data as CacheArray[], row, capacity, at);
}

export function cacheSize(layout: CacheLayout, n: number, batch: number, seq: number): number {
  return batch * layout.heads[n]! * seq * layout.dims[n]!;
}

/** How many leading tokens `a` and `b` share. */
export function commonPrefix(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/**
 * The kept caches, by key (a policy's sample), under a memory budget: least recently used first out. A cache taken
 * for a turn leaves the store until that turn gives it back, so a running sample's cache is never evicted. `release`
 * frees what an evicted or dropped cache holds (GPU buffers on WebGPU).
 */
export class SampleCacheStore<C extends { tokens: number[] }> {
  private readonly entries = new Map<string, { cache: C; bytes: number }>();
  private bytes = 0;
  evictions = 0;

  constructor(
    private readonly sizeOf: (cache: C) => number,
    private readonly release: (cache: C) => void,
    public budgetBytes: number,
  ) {}

  get keptBytes(): number {
    return this.bytes;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Takes `key`'s cache out of the store (the caller gives it back with `put` when its turn is over). */
  take(key: string): C | null {
    const entry = this.entries.get(key);
    if (!entry) return null;
    this.entries.delete(key);
    this.bytes -= entry.bytes;
    return entry.cache;
  }

  /** Keeps `cache` as `key`'s (the newest), evicting the least recently used others while over the budget. */
  put(key: string, cache: C): void {
    this.delete(key);
    const bytes = this.sizeOf(cache);
    if (bytes > this.budgetBytes) {
      this.release(cache);
      this.evictions += 1;
      return;
    }
    this.entries.set(key, { cache, bytes });
    this.bytes += bytes;
    for (const [old, entry] of this.entries) {
      if (this.bytes <= this.budgetBytes) break;
      this.drop(old, entry);
      this.evictions += 1;
    }
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (entry) this.drop(key, entry);
  }

  /** Drops every cache whose key starts with `prefix` (a policy's, when its rollout is over). */
  deletePrefix(prefix: string): void {
    for (const key of [...this.entries.keys()]) if (key.startsWith(prefix)) this.delete(key);
  }

  private drop(key: string, entry: { cache: C; bytes: number }): void {
    this.entries.delete(key);
    this.bytes -= entry.bytes;
    this.release(entry.cache);
  }
}
