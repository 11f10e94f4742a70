/**
 * The model policy's engine: it drives the decoder one forward pass at a time (transformers.js's `model.forward`
 * with cache tensors of its own) instead of `generate()`, so that
 * - each sample keeps its KV cache between turns (`kv-cache.ts`): a turn runs only the tokens its cache does not
 *   cover (the longest common prefix is reused), and the cache is freed when the sample ends or evicted, least
 *   recently used first, under a memory budget;
 * - generation requests made at the same time (a sync batch's rows, async's per-sample turns, a fork's rollout beside
 *   the main one) share one running batch: a request is prefilled on its own cache, joins the batch between decode
 *   steps and leaves it when it stops; rows with different cached lengths are left-padded in one step;
 * - each row draws from its own seeded generator, so its tokens do not depend on what else is in the batch.
 *
 * On CPU and WASM the caches are typed arrays; on WebGPU the present tensors stay on the GPU (`gpu-buffer`), and the
 * moves between the running batch and the samples' caches are GPU copies (`cache-ops.ts`). GPU buffers are disposed
 * when a cache is replaced, evicted or dropped.
 *
 * Append mode (CPU and WASM caches, a decoder with `new_key_values.*` outputs: the built-in models): a decode step
 * fetches only the logits and its own token's keys and values, and writes them into the batch's cache buffers, which
 * have room for more positions than are used (masked out). Fetching `present` instead copies the whole cache out of
 * onnxruntime at every step, about 90% of a step's time at long contexts (bench:model-rollout).
 *
 * The engine runs the decoder's onnxruntime session itself (`session.run` with the outputs it needs), one pass at
 * a time, rather than through transformers.js's `model.forward`, which fetches every output.
 */

import type * as Transformers from "@huggingface/transformers";
import { abortError, type Rng } from "../../core/index.js";
import { logSoftmax, sampleToken, stepStats, stopsAt, type HookTokenizer, type SamplingSettings, type StepStats } from "./processors.js";
import { cpuCacheOps, cpuView, gpuCacheOps, type CacheOps, type GpuDeviceLike, type TensorView } from "./cache-ops.js";
import { assembleBatch, extract as extractRows, cacheBytes, commonPrefix, copyInto, growCapacity, SampleCacheStore, writePosition, type CacheArray, type CacheLayout } from "./kv-cache.js";

type Tensor = Transformers.Tensor;
type Model = Transformers.PreTrainedModel;

export interface EngineRuntime {
  Tensor: typeof Transformers.Tensor;
}

/** One row's generation: a prompt, its limits, its sampling. */
export interface DecodeRequest {
  /** The sample's cache key (kept between its turns); null: nothing is kept. */
  key: string | null;
  promptIds: readonly number[];
  maxNew: number;
  /** Stop strings (the one that stops the row is kept in its tokens). */
  stops: readonly string[];
  greedy: boolean;
  sampling: SamplingSettings;
  rng: Rng;
  /** Generate through EOS (benchmarks). */
  ignoreEos: boolean;
  /** Alternatives per token to report with `onToken` (0: no step statistics are computed). */
  topK: number;
  onToken?: (tokenId: number, step: StepStats | null) => void;
  signal?: AbortSignal;
  /** The generation call the row belongs to (a sync batch's rows are one call; async makes one per sample turn). */
  call?: object;
  /**
   * Rows that may share their prompts' common prefix (default: the call). Rows of one group should arrive together,
   * so that they are admitted in their order and what is shared is the same in every run.
   */
  shareGroup?: object;
}

export interface DecodeResult {
  tokens: number[];
  /** The log-probability of each generated token under the raw distribution. */
  logprobs: number[];
  truncated: boolean;
  /** Prompt tokens run through the model, and prompt tokens served from the kept cache. */
  prefilled: number;
  reused: number;
}

export interface EngineOptions {
  /** Bytes of kept caches (not counting the running batch) before the least recently used are evicted. */
  cacheBudgetBytes?: number;
  /** The most prompt tokens one forward pass prefills (longer prompts go in chunks). */
  prefillChunk?: number;
  /**
   * onnxruntime's WebGPU device, where the model runs on WebGPU: cache moves are then GPU copies. Without it, GPU
   * caches are never moved (each row is stepped on its own).
   */
  gpuDevice?: () => GpuDeviceLike | null;
  /**
   * Append mode where the decoder offers it (default true); false: every decode step fetches the whole `present`
   * cache, as hub models and WebGPU do (tests and benchmarks compare the two).
   */
  appendMode?: boolean;
  /**
   * Append mode, a running batch of several calls' rows (async's per-sample turns): the most padding every row gets
   * at a rebuild beyond the longest row, so that a sample's next turn (its context longer by the reply and the
   * observation) still fits a free row, written there in place, rather than rebuilding the batch (a copy of every
   * row's cache). The padding given is the largest growth between a sample's turns seen lately, at most this.
   * Default `DEFAULT_JOIN_HEADROOM`; 0: only turns no longer than the batch's longest row join in place.
   */
  joinHeadroom?: number;
}

export const DEFAULT_CACHE_BUDGET_BYTES = 1024 * 1024 * 1024;
export const DEFAULT_JOIN_HEADROOM = 512;
/** How many of the latest turns' context growths the join headroom looks at. */
const GROWTH_WINDOW = 32;
const DEFAULT_PREFILL_CHUNK = 512;
/** Another sample's prefix is copied only when it saves at least this many tokens over the sample's own cache. */
const MIN_SHARED_PREFIX = 16;

interface Row {
  req: DecodeRequest;
  resolve: (result: DecodeResult) => void;
  reject: (error: unknown) => void;
  generated: number[];
  logprobs: number[];
  truncated: boolean;
  done: boolean;
  /** The tokens the row's cache covers (the prompt, then each generated token once it was fed back). */
  covered: number[];
  prefilled: number;
  reused: number;
}

interface SampleCache {
  tokens: number[];
  tensors: Tensor[];
}

/**
 * Rows stepped together: row `i` holds its cache at positions `[pads[i], seq)` of `past`, whose tensors have `cap`
 * positions (`cap` > `seq` only in append mode: room for the next steps); null rows have left (append mode moves
 * the last row into such a row and the batch shrinks instead).
 */
interface Batch {
  rows: (Row | null)[];
  /**
   * Append mode: the typed arrays behind `past`, with room for `rowsAllocated` rows; `past` views the first
   * `rows.length` of them (the batch dimension is the outermost), so rows join and leave without a rebuild.
   */
  buffers: CacheArray[] | null;
  rowsAllocated: number;
  past: Tensor[];
  seq: number;
  cap: number;
  pads: number[];
}

/** The most positions a batch's buffers grow by at once (append mode): its rows' remaining tokens, at most this. */
const MAX_CAPACITY_STEP = 256;

/** Why the engine cannot drive a model (it then runs on transformers.js's `generate`); null: it can. */
export function engineUnsupported(model: Model): string | null {
  const session = (model as unknown as { sessions?: Record<string, OrtSession> }).sessions?.model;
  if (!session) return "the model has no single decoder session";
  if (session.inputNames.includes("use_cache_branch")) return "merged decoders (use_cache_branch) are driven by generate()";
  try {
    cacheLayout(session);
    return null;
  } catch (e) {
    return (e as Error).message;
  }
}

interface OrtSession {
  inputNames: string[];
  outputNames?: string[];
  inputMetadata: { name: string; shape?: readonly (number | string)[]; type?: string; isTensor?: boolean }[];
  run?(feeds: Record<string, unknown>, fetches: string[]): Promise<Record<string, unknown>>;
}

/** The output that answers a cache input: `past_key_values.{l}.key` → `present.{l}.key` (or `new_key_values.{l}.key`). */
const outputName = (cacheName: string, prefix: "present" | "new_key_values") => cacheName.replace(/^past_key_values/, prefix);

function cacheLayout(session: OrtSession): CacheLayout {
  const metas = session.inputMetadata.filter((m) => m.name.startsWith("past_"));
  if (metas.length === 0) throw new Error("the decoder has no past_key_values inputs");
  const names: string[] = [];
  const heads: number[] = [];
  const dims: number[] = [];
  let type: CacheLayout["type"] | null = null;
  for (const meta of metas) {
    if (!/^past_key_values\.\d+\.(key|value)$/.test(meta.name)) throw new Error(`cache input '${meta.name}' is not a key/value cache`);
    const shape = meta.shape ?? [];
    const [, h, , d] = shape;
    if (shape.length !== 4 || typeof h !== "number" || typeof d !== "number") {
      throw new Error(`cache input '${meta.name}' has shape [${shape.join(", ")}], not [batch, heads, seq, dim] with fixed heads and dim`);
    }
    const t = meta.type === "float16" ? "float16" : meta.type === "float32" ? "float32" : null;
    if (!t || (type && t !== type)) throw new Error(`cache input '${meta.name}' is ${meta.type ?? "of no known type"}`);
    type = t;
    names.push(meta.name);
    heads.push(h);
    dims.push(d);
  }
  return { names, type: type!, heads, dims };
}

export class DecodeEngine {
  readonly layout: CacheLayout;
  private readonly store: SampleCacheStore<SampleCache>;
  private readonly prefillChunk: number;
  private readonly hasPositions: boolean;
  private pending: Row[] = [];
  private batches: Batch[] = [];
  private running: Promise<void> | null = null;
  /** Set once a forward pass answers with GPU-resident present tensors. */
  private onGpu = false;
  /** How caches are moved: typed-array copies until the first forward pass shows GPU caches. */
  private ops: CacheOps;
  /** False on the GPU without a device to copy with: rows are then never batched or cut. */
  private canMove = true;
  /** Counters, and milliseconds spent in prefill passes, decode passes and cache copies (for benchmarks). */
  readonly stats = {
    forwardPasses: 0,
    decodeSteps: 0,
    appendSteps: 0,
    stepRows: 0,
    merges: 0,
    /** Rows that joined the running batch in a free row, written in place (append mode), rather than by a merge. */
    joinsInPlace: 0,
    prefilled: 0,
    reused: 0,
    sharedPrefixes: 0,
    prefillMs: 0,
    decodeMs: 0,
    copyMs: 0,
  };

  private readonly gpuDevice: () => GpuDeviceLike | null;
  private readonly session: OrtSession;
  /** The decoder answers `new_key_values.*`: decode steps may fetch them alone once the caches are known to be on the CPU. */
  private readonly hasNewOutputs: boolean;
  private readonly joinHeadroom: number;
  /** The most rows a batch has had since the engine was last idle: a rebuild allocates rows for that many. */
  private peakRows = 0;
  /** Key prefixes released for good (disposed policies'): a row of theirs still running keeps nothing when it ends. */
  private readonly closedPrefixes = new Set<string>();
  /** The latest turns' growth over their sample's kept cache (prompt tokens it did not cover), newest last. */
  private readonly growths: number[] = [];

  constructor(
    private readonly runtime: EngineRuntime,
    private readonly model: Model,
    private readonly tokenizer: HookTokenizer,
    options: EngineOptions = {},
  ) {
    const session = (model as unknown as { sessions: Record<string, OrtSession> }).sessions.model!;
    this.session = session;
    this.layout = cacheLayout(session);
    this.hasNewOutputs =
      options.appendMode !== false && this.layout.names.every((name) => session.outputNames?.includes(outputName(name, "new_key_values")) ?? false);
    this.hasPositions = session.inputNames.includes("position_ids");
    this.joinHeadroom = options.joinHeadroom ?? DEFAULT_JOIN_HEADROOM;
    this.prefillChunk = options.prefillChunk ?? DEFAULT_PREFILL_CHUNK;
    this.ops = cpuCacheOps(this.layout, runtime.Tensor);
    this.gpuDevice = options.gpuDevice ?? (() => null);
    this.store = new SampleCacheStore<SampleCache>(
      (c) => cacheBytes(this.layout, c.tokens.length),
      (c) => disposeAll(c.tensors),
      options.cacheBudgetBytes ?? DEFAULT_CACHE_BUDGET_BYTES,
    );
  }

  /**
   * Where the caches live: typed arrays (`cpu`), GPU buffers moved with GPU copies (`gpu`), or GPU buffers that are
   * never moved because no device to copy with was given (`gpu-unmoved`: each row is stepped on its own).
   */
  get cacheHome(): "cpu" | "gpu" | "gpu-unmoved" {
    if (!this.onGpu) return "cpu";
    return this.canMove ? "gpu" : "gpu-unmoved";
  }

  /** Kept caches: how many, their bytes, how many were evicted. */
  get cacheStats(): { kept: number; bytes: number; evictions: number } {
    return { kept: this.store.size, bytes: this.store.keptBytes, evictions: this.store.evictions };
  }

  set cacheBudgetBytes(bytes: number) {
    this.store.budgetBytes = bytes;
  }

  submit(req: DecodeRequest): Promise<DecodeResult> {
    return new Promise((resolve, reject) => {
      this.pending.push({ req, resolve, reject, generated: [], logprobs: [], truncated: false, done: false, covered: [], prefilled: 0, reused: 0 });
      this.kick();
    });
  }

  /** Frees the kept caches of these keys (their samples ended). */
  release(keys: readonly string[]): void {
    for (const key of keys) this.store.delete(key);
  }

  /**
   * Frees every kept cache whose key starts with `prefix` (a policy's rollout is over), and those of its rows still
   * running when they end (a call its caller rejected or stopped reading): none is kept after.
   */
  releasePrefix(prefix: string): void {
    this.closedPrefixes.add(prefix);
    this.store.deletePrefix(prefix);
  }

  private kick(): void {
    if (this.running) return;
    this.running = this.loop()
      .catch((e) => this.failAll(e))
      .finally(() => {
        this.running = null;
        if (this.pending.length > 0) this.kick();
      });
  }

  private async loop(): Promise<void> {
    // The requests made in the same tick (a sync batch's rows) arrive before the first pass.
    await Promise.resolve();
    while (this.pending.length > 0 || this.batches.length > 0) {
      await this.admit();
      this.merge();
      await this.step();
    }
    this.peakRows = 0;
  }

  /** Prefills every waiting request on its sample's cache; those not done at their first token join as batches. */
  private async admit(): Promise<void> {
    for (const row of this.pending.splice(0)) {
      if (row.req.signal?.aborted) {
        row.reject(abortError("generation cancelled"));
        continue;
      }
      try {
        await this.prefill(row);
      } catch (e) {
        row.reject(e);
      }
    }
  }

  private async prefill(row: Row): Promise<void> {
    const { req } = row;
    const prompt = req.promptIds;
    const kept = req.key === null ? null : this.store.take(req.key);
    if (req.maxNew <= 0 || prompt.length === 0) {
      if (kept) this.store.put(req.key!, kept);
      return this.finish(row);
    }
    // At least the prompt's last token is run: its logits give the first new token.
    let reuse = kept ? Math.min(commonPrefix(kept.tokens, prompt), prompt.length - 1) : 0;
    let past: Tensor[];
    const shared = this.canMove ? this.sharedPrefix(row, reuse) : null;
    if (shared) {
      // An earlier row of the call covers more of this prompt: its positions are copied.
      if (kept) disposeAll(kept.tensors);
      reuse = shared.length;
      // A copy always: the view is that row's live cache, and `past` is disposed once the prefill has used it.
      past = this.ops.extract(shared, true);
      this.stats.sharedPrefixes += 1;
    } else if (kept && reuse > 0 && (reuse === kept.tokens.length || this.canMove)) {
      past = this.ops.extract({ tensors: kept.tensors, row: 0, seq: kept.tokens.length, start: 0, length: reuse });
      if (past[0] !== kept.tensors[0]) disposeAll(kept.tensors);
    } else {
      if (kept) disposeAll(kept.tensors);
      reuse = 0;
      past = this.emptyCache(1);
    }
    if (kept) this.noteGrowth(prompt.length - kept.tokens.length);
    row.covered = prompt.slice(0, reuse);
    row.reused = reuse;
    row.prefilled = prompt.length - reuse;
    let logits: Float32Array | null = null;
    const started = performance.now();
    try {
      for (let at = reuse; at < prompt.length; at += this.prefillChunk) {
        const chunk = prompt.slice(at, at + this.prefillChunk);
        const out = await this.forward([[...chunk]], [ones(at + chunk.length)], [range(at, chunk.length)], past, at);
        disposeAll(past);
        past = out.present;
        logits = out.lastLogits[0]!;
        row.covered.push(...chunk);
      }
    } catch (e) {
      disposeAll(past);
      throw e;
    }
    this.stats.prefillMs += performance.now() - started;
    this.stats.prefilled += row.prefilled;
    this.stats.reused += row.reused;
    try {
      this.accept(row, logits!);
    } catch (e) {
      // The token callback (the caller's code) threw: the row ends here, its cache with it.
      disposeAll(past);
      throw e;
    }
    if (row.done) {
      this.keep(row, past);
      return this.finish(row);
    }
    const buffers = this.appendMode() ? arraysOf(past) : null;
    this.batches.push({ rows: [row], past, seq: row.covered.length, cap: row.covered.length, pads: [0], buffers, rowsAllocated: 1 });
  }

  /**
   * The longest prefix of `row`'s prompt that the cache of an earlier row of the same share group covers (a sync
   * batch's shared system prompt, a GRPO group's prompt, an async rollout's first turns), when it saves at least
   * `MIN_SHARED_PREFIX` tokens over the row's own reuse. Only rows of one group, which arrive together: they are
   * admitted in their order, so what is shared, and the counts, are the same in every run (rows of other calls come
   * and go with the timing of the environments).
   */
  private sharedPrefix(row: Row, own: number): TensorView | null {
    const prompt = row.req.promptIds;
    let best: TensorView | null = null;
    for (const batch of this.batches) {
      batch.rows.forEach((other, i) => {
        const group = row.req.shareGroup ?? row.req.call;
        if (!other || group === undefined || (other.req.shareGroup ?? other.req.call) !== group) return;
        const length = Math.min(commonPrefix(other.covered, prompt), prompt.length - 1);
        if (length >= own + MIN_SHARED_PREFIX && length > (best?.length ?? 0)) {
          best = { tensors: batch.past, row: i, seq: batch.cap, start: batch.pads[i]!, length };
        }
      });
    }
    return best;
  }

  /**
   * The batches (and rows that left) become one batch, left-padded. In append mode a new one-row batch (a request
   * just prefilled) first takes an unused row of the largest batch when its cache fits before that batch's next
   * position (`joinInPlace`); a rebuild allocates rows for the engine's peak, pads every row for the samples' next
   * turns where the rows came from several calls (`joinHeadroom`), and leaves room for the next steps.
   */
  private merge(): void {
    if (!this.canMove) return;
    if (this.appendMode()) this.joinInPlace();
    const live = this.batches.flatMap((b) => b.rows.filter((r) => r !== null)).length;
    const dead = this.batches.reduce((n, b) => n + b.rows.filter((r) => r === null).length, 0);
    // Rows that left are still computed until the batch is rebuilt (append mode drops them at once: `compact`):
    // rebuilt when they are half of it.
    if (live === 0 || (this.batches.length <= 1 && dead * 2 < live + dead)) return;
    const started = performance.now();
    const rows: Row[] = [];
    const views: TensorView[] = [];
    for (const batch of this.batches) {
      batch.rows.forEach((row, i) => {
        if (!row) return;
        rows.push(row);
        views.push(viewOf(batch, i));
      });
    }
    // Rows of several calls (async's turns, a fork beside a run): their samples' next turns come back one by one,
    // and should fit the batch (`joinHeadroom`).
    const mixed = new Set(rows.map((row) => row.req.call ?? row)).size > 1;
    this.peakRows = Math.max(this.peakRows, rows.length);
    let batch: Batch;
    if (this.appendMode()) {
      const space = { headroom: mixed ? this.headroom() : 0, room: this.roomFor(rows), rowsAllocated: this.peakRows };
      const { data, seq, cap, pads } = assembleBatch(this.layout, views.map(cpuView), space);
      batch = { rows, past: [], seq, cap, pads, buffers: data, rowsAllocated: this.peakRows };
      this.viewRows(batch);
    } else {
      const { tensors, seq, pads } = this.ops.assemble(views);
      batch = { rows, past: tensors, seq, cap: seq, pads, buffers: null, rowsAllocated: rows.length };
    }
    for (const old of this.batches) disposeAll(old.past);
    this.batches = [batch];
    this.stats.merges += 1;
    this.stats.copyMs += performance.now() - started;
  }

  /**
   * Each one-row batch whose cache is no longer than the largest batch's used positions moves into a row the
   * largest batch has allocated but not used, right-aligned at its next position: the row's padding is the rest,
   * masked like any padding. Positions are given per row, and keys carry their rotation, so where a row's cache
   * sits in the buffer does not matter.
   */
  private joinInPlace(): void {
    if (this.batches.length < 2) return;
    const main = this.batches.reduce((a, b) => (b.rows.length > a.rows.length ? b : a));
    if (!main.buffers) return;
    for (const batch of [...this.batches]) {
      if (batch === main || batch.rows.length !== 1 || !batch.rows[0] || !batch.buffers) continue;
      if (main.rows.length >= main.rowsAllocated) break;
      const length = batch.seq - batch.pads[0]!;
      if (length > main.seq) continue;
      const started = performance.now();
      const at = main.rows.length;
      copyInto(this.layout, { data: batch.buffers, row: 0, seq: batch.cap, start: batch.pads[0]!, length }, main.buffers, at, main.cap, main.seq - length);
      main.rows.push(batch.rows[0]);
      main.pads.push(main.seq - length);
      this.viewRows(main);
      this.batches = this.batches.filter((b) => b !== batch);
      this.stats.joinsInPlace += 1;
      this.stats.copyMs += performance.now() - started;
    }
  }

  /**
   * Append mode: the rows that left are filled by the batch's last rows (their caches copied) and the batch shrinks
   * to its live rows, so a step computes no row that left.
   */
  private compact(batch: Batch): void {
    if (!batch.buffers || !batch.rows.includes(null)) return;
    const started = performance.now();
    for (let i = 0; i < batch.rows.length; ) {
      if (batch.rows[i]) {
        i++;
        continue;
      }
      const last = batch.rows.length - 1;
      if (last > i && batch.rows[last]) {
        const pad = batch.pads[last]!;
        copyInto(this.layout, { data: batch.buffers, row: last, seq: batch.cap, start: pad, length: batch.seq - pad }, batch.buffers, i, batch.cap, pad);
        batch.rows[i] = batch.rows[last]!;
        batch.pads[i] = pad;
      }
      batch.rows.pop();
      batch.pads.pop();
    }
    this.viewRows(batch);
    this.stats.copyMs += performance.now() - started;
  }

  /**
   * Row `i`'s cache as tensors of its own. A one-row batch's own tensors when they are exactly its cache (extract
   * then returns them as they are); in append mode a copy unless its buffers are exactly that (a kept cache must not
   * hold on to a batch's buffers).
   */
  private rowCache(batch: Batch, i: number): Tensor[] {
    if (!batch.buffers) return this.ops.extract(viewOf(batch, i));
    const { start, length } = viewOf(batch, i);
    const { Tensor } = this.runtime;
    const data = extractRows(this.layout, { data: batch.buffers, row: i, seq: batch.cap, start, length });
    return data.map((d, n) => new Tensor(this.layout.type, d, [1, this.layout.heads[n]!, length, this.layout.dims[n]!]));
  }

  /** `past` as tensors over the first `rows.length` rows of the batch's buffers. */
  private viewRows(batch: Batch): void {
    const { Tensor } = this.runtime;
    const { type, heads, dims } = this.layout;
    const rows = batch.rows.length;
    batch.past = batch.buffers!.map((d, n) => new Tensor(type, d.subarray(0, rows * heads[n]! * batch.cap * dims[n]!), [rows, heads[n]!, batch.cap, dims[n]!]));
  }

  /** One decode step of every batch: each running row feeds its last token and draws its next. */
  private async step(): Promise<void> {
    for (const batch of [...this.batches]) {
      batch.rows.forEach((row, i) => {
        if (row?.req.signal?.aborted) {
          batch.rows[i] = null;
          row.reject(abortError("generation cancelled"));
        }
      });
      if (batch.rows.every((r) => r === null)) {
        this.drop(batch);
        continue;
      }
      this.compact(batch);
      const append = this.appendMode();
      if (append && batch.cap === batch.seq) this.grow(batch);
      const ids: number[][] = [];
      const masks: number[][] = [];
      const positions: number[][] = [];
      batch.rows.forEach((row, i) => {
        const pad = batch.pads[i]!;
        ids.push([row ? row.generated.at(-1)! : this.tokenizer.padTokenId]);
        // The cache's used positions, its unused room (append mode), then the step's own token.
        masks.push([...zeros(pad), ...ones(batch.seq - pad), ...zeros(batch.cap - batch.seq), 1]);
        positions.push([batch.seq - pad]);
      });
      let out: Awaited<ReturnType<DecodeEngine["forward"]>>;
      const started = performance.now();
      try {
        out = await this.forward(ids, masks, positions, batch.past, batch.cap, append ? "new_key_values" : "present");
        this.stats.decodeMs += performance.now() - started;
      } catch (e) {
        this.drop(batch);
        for (const row of batch.rows) row?.reject(e);
        continue;
      }
      if (append) {
        writePosition(this.layout, batch.buffers!, batch.cap, arraysOf(out.present), batch.rows.length, batch.seq);
        batch.seq += 1;
        this.stats.appendSteps += 1;
      } else {
        disposeAll(batch.past);
        batch.past = out.present;
        batch.seq += 1;
        batch.cap = batch.seq;
      }
      this.stats.decodeSteps += 1;
      this.stats.stepRows += batch.rows.length;
      /** A row kept the batch's own tensors as its cache (a one-row batch's, exactly its cache): not disposed here. */
      let handedOver = false;
      batch.rows.forEach((row, i) => {
        if (!row) return;
        try {
          row.covered.push(row.generated.at(-1)!);
          this.accept(row, out.lastLogits[i]!);
          if (!row.done) return;
          batch.rows[i] = null;
          // A one-row batch's own tensors when they are exactly its cache (extract then returns them as they are).
          const cache = this.rowCache(batch, i);
          if (cache[0] === batch.past[0]) handedOver = true;
          this.keep(row, cache);
          this.finish(row);
        } catch (e) {
          // A throw here (the token callback is the caller's code) ends this row alone; the batch goes on.
          batch.rows[i] = null;
          row.reject(e);
        }
      });
      if (batch.rows.every((r) => r === null)) {
        if (handedOver) this.batches = this.batches.filter((b) => b !== batch);
        else this.drop(batch);
      } else this.compact(batch);
    }
  }

  /** Records the row's next token from its logits (log-probability first, under the raw distribution) and its stop. */
  private accept(row: Row, logits: Float32Array): void {
    const { req } = row;
    const logprobs = logSoftmax(logits);
    const step = req.topK > 0 ? stepStats(logprobs, req.topK) : null;
    const token = req.greedy ? argmax(logits) : sampleToken(logits, req.sampling, req.rng);
    row.generated.push(token);
    row.logprobs.push(logprobs[token]!);
    req.onToken?.(token, step);
    if ((this.tokenizer.endTokenIds.has(token) && !req.ignoreEos) || stopsAt(row.generated, 0, [...req.stops], this.tokenizer)) {
      row.done = true;
    } else if (row.generated.length >= req.maxNew) {
      row.done = true;
      row.truncated = true;
    }
  }

  private finish(row: Row): void {
    row.done = true;
    row.resolve({ tokens: row.generated, logprobs: row.logprobs, truncated: row.truncated, prefilled: row.prefilled, reused: row.reused });
  }

  /** Keeps the row's cache (what it covers: its prompt and every generated token but the last) for its next turn. */
  private keep(row: Row, tensors: Tensor[]): void {
    const key = row.req.key;
    if (key === null || row.req.signal?.aborted || [...this.closedPrefixes].some((p) => key.startsWith(p))) disposeAll(tensors);
    else this.store.put(key, { tokens: row.covered, tensors });
  }

  /** The loop itself failed (a bug, not one request's error): every request in it fails, none is left pending. */
  private failAll(error: unknown): void {
    for (const batch of [...this.batches]) {
      this.drop(batch);
      for (const row of batch.rows) row?.reject(error);
    }
    for (const row of this.pending.splice(0)) row.reject(error);
  }

  private drop(batch: Batch): void {
    disposeAll(batch.past);
    this.batches = this.batches.filter((b) => b !== batch);
  }

  /**
   * One forward pass. `cacheOutputs`: which cache outputs to fetch, `present` (the whole cache, past and new) or
   * `new_key_values` (the new positions alone, append mode); they are returned as `present` either way.
   */
  private async forward(ids: number[][], masks: number[][], positions: number[][], past: Tensor[], pastSeq: number, cacheOutputs: "present" | "new_key_values" = "present") {
    const { Tensor } = this.runtime;
    const B = ids.length;
    const S = ids[0]!.length;
    const int64 = (rows: number[][], width: number) => new Tensor("int64", BigInt64Array.from(rows.flat(), BigInt), [B, width]);
    const feeds: Record<string, Tensor> = {
      input_ids: int64(ids, S),
      attention_mask: int64(masks, pastSeq + S),
      num_logits_to_keep: new Tensor("int64", BigInt64Array.from([1n]), []),
      ...Object.fromEntries(this.layout.names.map((name, n) => [name, past[n]!])),
    };
    if (this.hasPositions) feeds.position_ids = int64(positions, S);
    const names = this.layout.names.map((name) => outputName(name, cacheOutputs));
    const outputs = await this.run(feeds, ["logits", ...names]);
    this.stats.forwardPasses += 1;
    const present = names.map((name) => {
      const out = outputs[name];
      if (!out) throw new Error(`the decoder gave no '${name}' output`);
      return out;
    });
    if (!this.onGpu && present.some((t) => t.location === "gpu-buffer")) {
      this.onGpu = true;
      const device = this.gpuDevice();
      if (device) this.ops = gpuCacheOps(this.layout, this.runtime.Tensor, device);
      else this.canMove = false;
    }
    // fp16 exports may answer fp16 logits: the sampling arithmetic is float32.
    const logits = outputs.logits!.to("float32");
    const [, positionsOut, vocab] = logits.dims as [number, number, number];
    const data = logits.data as Float32Array;
    // The last position of each row (left padding puts every row's newest token there).
    const lastLogits = Array.from({ length: B }, (_, b) => data.slice((b * positionsOut + positionsOut - 1) * vocab, (b * positionsOut + positionsOut) * vocab));
    return { present, lastLogits };
  }

  /**
   * Runs the decoder's session with the outputs named (`session.run` with fetches), or through transformers.js's
   * `model.forward` (every output) where the session takes an input the engine does not feed.
   */
  private async run(feeds: Record<string, Tensor>, fetches: string[]): Promise<Record<string, Tensor>> {
    const session = this.session;
    if (session.run && session.inputNames.every((name) => name in feeds)) {
      const ortFeeds = Object.fromEntries(session.inputNames.map((name) => [name, (feeds[name] as unknown as { ort_tensor: unknown }).ort_tensor]));
      const out = await session.run(ortFeeds, fetches);
      const { Tensor } = this.runtime;
      return Object.fromEntries(Object.entries(out).map(([name, t]) => [name, new Tensor(t as ConstructorParameters<typeof Tensor>[0] as never)]));
    }
    const { num_logits_to_keep, input_ids, attention_mask, position_ids, ...past } = feeds;
    const forward = (this.model as unknown as { forward(f: Record<string, unknown>): Promise<Record<string, Tensor>> }).forward.bind(this.model);
    return forward({ input_ids, attention_mask, num_logits_to_keep, ...(position_ids ? { position_ids } : {}), past_key_values: past });
  }

  /** Whether decode steps append their own keys and values to cache buffers kept here (typed arrays only). */
  private appendMode(): boolean {
    return this.hasNewOutputs && !this.onGpu && this.session.run !== undefined;
  }

  private noteGrowth(tokens: number): void {
    this.growths.push(Math.max(0, tokens));
    if (this.growths.length > GROWTH_WINDOW) this.growths.shift();
  }

  /** Padding for the samples' next turns at a rebuild: the largest recent growth, at most `joinHeadroom`. */
  private headroom(): number {
    return Math.min(this.joinHeadroom, Math.max(0, ...this.growths));
  }

  /** Positions for `rows`' remaining tokens, at most `MAX_CAPACITY_STEP`. */
  private roomFor(rows: readonly (Row | null)[]): number {
    const remaining = Math.max(1, ...rows.map((row) => (row ? row.req.maxNew - row.generated.length : 0)));
    return Math.min(remaining, MAX_CAPACITY_STEP);
  }

  /** Room in `batch`'s buffers for its rows' remaining tokens (at most `MAX_CAPACITY_STEP` more positions). */
  private grow(batch: Batch): void {
    const cap = batch.seq + this.roomFor(batch.rows);
    const started = performance.now();
    batch.buffers = growCapacity(this.layout, batch.buffers!, batch.rows.length, batch.cap, batch.seq, cap, batch.rowsAllocated);
    batch.cap = cap;
    this.viewRows(batch);
    this.stats.copyMs += performance.now() - started;
  }

  private emptyCache(batch: number): Tensor[] {
    const { Tensor } = this.runtime;
    const { type, heads, dims } = this.layout;
    return this.layout.names.map((_, n) => new Tensor(type, type === "float16" ? new Uint16Array(0) : new Float32Array(0), [batch, heads[n]!, 0, dims[n]!]));
  }

}

function viewOf(batch: Batch, row: number): TensorView {
  return { tensors: batch.past, row, seq: batch.cap, start: batch.pads[row]!, length: batch.seq - batch.pads[row]! };
}

/** The typed arrays of CPU cache tensors. */
function arraysOf(tensors: readonly Tensor[]): CacheArray[] {
  return tensors.map((t) => t.data as CacheArray);
}

function zeros(n: number): number[] {
  return new Array<number>(n).fill(0);
}

function disposeAll(tensors: readonly Tensor[]): void {
  for (const t of tensors) if (t.location === "gpu-buffer") t.dispose();
}

function ones(n: number): number[] {
  return new Array<number>(n).fill(1);
}

function range(from: number, n: number): number[] {
  return Array.from({ length: n }, (_, i) => from + i);
}

function argmax(row: Float32Array): number {
  let best = 0;
  for (let i = 1; i < row.length; i++) if (row[i]! > row[best]!) best = i;
  return best;
}
