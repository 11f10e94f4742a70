/**
 * The hooks the model policy puts into transformers.js's `generate` (logits processors, a stopping criterion, a
 * streamer), and the sampling arithmetic they use. The classes extend transformers.js's own base classes, which
 * the entries (`node.ts`, `worker.ts`) pass in as the runtime, so they are made once per policy by
 * `generationHooks` rather than imported.
 */

import type * as Transformers from "@huggingface/transformers";
import type { GenerateOptions, Rng, TokenizerInterface, TokenStepDetail } from "../../core/index.js";

export type TransformersRuntime = Pick<typeof Transformers, "Tensor" | "LogitsProcessor" | "StoppingCriteria" | "BaseStreamer">;

export interface SamplingSettings {
  /** 1 = the raw distribution. Ignored when greedy. */
  temperature?: number;
  /** 0 = no top-k cut. */
  top_k?: number;
  /** 1 = no nucleus cut. */
  top_p?: number;
  seed?: number;
}

/** One row of a batched generation, as the hooks update it. */
export interface RowState {
  sampleId: number;
  turn: number;
  promptIds: number[];
  maxNew: number;
  stops: string[];
  /** Generated tokens kept, once the row is done; null while running. */
  keep: number | null;
  truncated: boolean;
  logprobs: number[];
  rng: Rng;
  /** The current step's entropy and top alternatives, when the recorder is asked for them (streaming); else null. */
  step?: StepStats | null;
}

/** The alternatives a streaming model policy reports per generated token (`TokenStepDetail.top`). */
export const DETAIL_TOP_K = 5;

/** What the hooks need of the tokenizer: its EOS, decoding (stop strings) and one token's text (streaming). */
export interface HookTokenizer extends TokenizerInterface {
  tokenText(id: number): string;
  /** The tokens that end a generation (./model-tokenizer.ts `endTokenIds`). */
  readonly endTokenIds: ReadonlySet<number>;
}

/** The four hook classes over the given transformers.js runtime and tokenizer. */
export function generationHooks(runtime: TransformersRuntime, tokenizer: HookTokenizer) {
  const { LogitsProcessor, StoppingCriteria, BaseStreamer } = runtime;

  /**
   * Records log-softmax of the raw logits; resolves each step's chosen token on the next call. With `topK` > 0 it
   * also sets each row's `step` (entropy and top alternatives of the same distribution) before the token is drawn,
   * so the streamer can report them with the token.
   */
  class LogprobRecorder extends LogitsProcessor {
    private pending: Float32Array[] | null = null;
    constructor(
      private readonly rows: RowState[],
      private readonly topK = 0,
    ) {
      super();
    }
    override _call(inputIds: bigint[][], logits: Transformers.Tensor): Transformers.Tensor {
      this.resolve(inputIds);
      const data = logits.data as Float32Array;
      const vocab = logits.dims.at(-1)!;
      this.pending = this.rows.map((row, b) => {
        const lp = logSoftmax(data.subarray(b * vocab, (b + 1) * vocab));
        // Rows already done are still computed by the batch: their statistics are nobody's.
        if (this.topK > 0) row.step = row.keep === null ? stepStats(lp, this.topK) : null;
        return lp;
      });
      return logits;
    }
    finish(sequences: bigint[][]): void {
      this.resolve(sequences);
    }
    private resolve(ids: bigint[][]): void {
      if (!this.pending) return;
      this.pending.forEach((row, b) => this.rows[b]!.logprobs.push(row[Number(ids[b]!.at(-1))]!));
      this.pending = null;
    }
  }

  /** Temperature, top-k and top-p, then one seeded draw per row: every other token is masked out. */
  class SeededSampler extends LogitsProcessor {
    constructor(
      private readonly rows: RowState[],
      private readonly settings: SamplingSettings,
    ) {
      super();
    }
    override _call(_inputIds: bigint[][], logits: Transformers.Tensor): Transformers.Tensor {
      const data = logits.data as Float32Array;
      const vocab = logits.dims.at(-1)!;
      this.rows.forEach((row, b) => {
        const slice = data.subarray(b * vocab, (b + 1) * vocab);
        const chosen = sampleToken(slice, this.settings, row.rng);
        slice.fill(-Infinity);
        slice[chosen] = 0;
      });
      return logits;
    }
  }

  /** Marks each row done at its EOS, its first stop string (kept) or its own token limit. */
  class RowStopper extends StoppingCriteria {
    constructor(
      private readonly rows: RowState[],
      private readonly promptWidth: number,
      private readonly signal: AbortSignal | undefined,
      private readonly ignoreEos: boolean,
    ) {
      super();
    }
    override _call(inputIds: number[][] | bigint[][]): boolean[] {
      if (this.signal?.aborted) return this.rows.map(() => true);
      return this.rows.map((row, b) => {
        if (row.keep !== null) return true;
        const all = inputIds[b] as (number | bigint)[];
        const n = all.length - this.promptWidth;
        const last = Number(all[all.length - 1]);
        if ((tokenizer.endTokenIds.has(last) && !this.ignoreEos) || stopsAt(all, this.promptWidth, row.stops, tokenizer)) {
          row.keep = n;
        } else if (n >= row.maxNew) {
          row.keep = row.maxNew;
          row.truncated = true;
        }
        return row.keep !== null;
      });
    }
  }

  /** Streams each running row's new token as text. */
  class RowStreamer extends BaseStreamer {
    private promptSeen = false;
    private readonly streamed: number[];
    constructor(
      private readonly rows: RowState[],
      private readonly onToken: NonNullable<GenerateOptions["onToken"]>,
    ) {
      super();
      this.streamed = rows.map(() => 0);
    }
    override put(value: bigint[][]): void {
      if (!this.promptSeen) {
        this.promptSeen = true;
        return;
      }
      value.forEach(([id], b) => {
        const row = this.rows[b]!;
        // A row marked done keeps receiving tokens until the whole batch is done: those are not its output.
        if (row.keep !== null || this.streamed[b]! >= row.maxNew) return;
        this.streamed[b]! += 1;
        const step = row.step;
        this.onToken(b, Number(id), tokenizer.tokenText(Number(id)), step ? stepDetail(step) : undefined);
      });
    }
    override end(): void {}
  }

  /** A step's statistics as the core's `TokenStepDetail`: the alternatives with their texts. */
  const stepDetail = (step: StepStats): TokenStepDetail => ({
    entropy: step.entropy,
    top: step.top.map((t) => ({ ...t, text: tokenizer.tokenText(t.tokenId) })),
  });

  return { LogprobRecorder, SeededSampler, RowStopper, RowStreamer };
}

export type GenerationHooks = ReturnType<typeof generationHooks>;

const utf8 = new TextEncoder();
const utf8Length = (text: string): number => utf8.encode(text).length;

/** Whether the newest generated token completed one of the stop strings (only the tail is decoded). */
export function stopsAt(all: (number | bigint)[], promptWidth: number, stops: string[], tokenizer: TokenizerInterface): boolean {
  if (stops.length === 0) return false;
  // Every token carries at least one byte of text, so a stop string spans at most its UTF-8 length in tokens (one
  // token a byte with a byte-level vocabulary: "完成" is 6 of them, though 2 UTF-16 units).
  const window = Math.max(...stops.map(utf8Length)) + 4;
  const ids = all.slice(Math.max(promptWidth, all.length - window)).map(Number);
  const tail = tokenizer.decode(ids);
  const before = tokenizer.decode(ids.slice(0, -1));
  return stops.some((s) => tail.includes(s) && !before.includes(s));
}

/** A step's distribution summed up: its entropy and its most likely tokens. */
export interface StepStats {
  /** −Σ p log p in nats, accumulated in float64. */
  entropy: number;
  /** The `k` largest log-probabilities, largest first (ties: lower id first); tokens of probability 0 are left out. */
  top: { tokenId: number; logprob: number }[];
}

/**
 * The entropy and the top `k` of a row of log-probabilities, in one linear pass: the top is kept in a sorted list
 * of `k`, so the vocabulary is never sorted (a step costs O(V·k) at worst, O(V) in practice).
 */
export function stepStats(logprobs: ArrayLike<number>, k: number): StepStats {
  let entropy = 0;
  const ids: number[] = [];
  const lps: number[] = [];
  for (let i = 0; i < logprobs.length; i++) {
    const lp = logprobs[i]!;
    if (!(lp > -Infinity)) continue; // probability 0 (or NaN): adds nothing, is no alternative
    const p = Math.exp(lp);
    if (p > 0) entropy -= p * lp;
    if (ids.length === k && !(lp > lps[k - 1]!)) continue;
    let j = ids.length === k ? k - 1 : ids.length;
    // Strictly smaller ones move down: an equal one seen earlier (a lower id) stays ahead.
    while (j > 0 && lps[j - 1]! < lp) {
      ids[j] = ids[j - 1]!;
      lps[j] = lps[j - 1]!;
      j--;
    }
    ids[j] = i;
    lps[j] = lp;
  }
  return { entropy, top: ids.map((tokenId, j) => ({ tokenId, logprob: lps[j]! })) };
}

export function logSoftmax(row: Float32Array): Float32Array {
  let max = -Infinity;
  for (const x of row) if (x > max) max = x;
  let sum = 0;
  for (const x of row) sum += Math.exp(x - max);
  const logZ = max + Math.log(sum);
  const out = new Float32Array(row.length);
  for (let i = 0; i < row.length; i++) out[i] = row[i]! - logZ;
  return out;
}

/** One draw from the tempered, top-k and top-p filtered distribution of a row of logits. */
export function sampleToken(logits: Float32Array, settings: SamplingSettings, rng: Rng): number {
  const temperature = settings.temperature ?? 1;
  if (temperature <= 0) return argmax(logits);
  let order = descendingOrder(logits);
  if (settings.top_k && settings.top_k > 0 && settings.top_k < order.length) {
    // Every token tied with the k-th is kept, as HF's and vLLM's top-k keep them: a cut inside a tie would give equal
    // logits unequal chances (fp16 logits tie often).
    let k = settings.top_k;
    const kth = logits[order[k - 1]!]!;
    while (k < order.length && logits[order[k]!]! === kth) k++;
    order = order.subarray(0, k);
  }
  const weights = new Float64Array(order.length);
  const max = logits[order[0]!]!;
  // The difference first, then the temperature: a tiny temperature sends it to -Infinity (weight 0), never to NaN.
  for (let i = 0; i < order.length; i++) weights[i] = Math.exp((logits[order[i]!]! - max) / temperature);
  let total = 0;
  for (const w of weights) total += w;
  const topP = settings.top_p ?? 1;
  let kept = order.length;
  if (topP < 1) {
    let mass = 0;
    for (let i = 0; i < order.length; i++) {
      mass += weights[i]! / total;
      if (mass >= topP) {
        kept = i + 1;
        break;
      }
    }
  }
  let keptTotal = 0;
  for (let i = 0; i < kept; i++) keptTotal += weights[i]!;
  let u = rng.next() * keptTotal;
  for (let i = 0; i < kept; i++) {
    u -= weights[i]!;
    if (u < 0) return order[i]!;
  }
  return order[kept - 1]!;
}

const INDEX_BITS = 2 ** 21;

/**
 * The finite logits' indices, most likely first, equal logits by index: sorted as one Float64Array of keys (the
 * engine's native numeric sort) rather than with a comparator, which took ~300 ms for Qwen3's 151,936 tokens per
 * row and step. A key is the logit's float32 bits made monotonic and reversed, times 2^21, plus the index: exact in a
 * float64 (32 + 21 bits), so the order is exactly the comparator's `logits[b] - logits[a] || a - b`.
 */
export function descendingOrder(logits: Float32Array): Int32Array {
  if (logits.length > INDEX_BITS) throw new RangeError(`a row of ${logits.length} logits is more than this sampler orders (${INDEX_BITS})`);
  const bits = new Uint32Array(1);
  const float = new Float32Array(bits.buffer);
  const keys = new Float64Array(logits.length);
  let n = 0;
  for (let i = 0; i < logits.length; i++) {
    const x = logits[i]!;
    if (!Number.isFinite(x)) continue;
    float[0] = x === 0 ? 0 : x; // -0 ties with +0, as the comparator has it
    const b = bits[0]!;
    // Monotonic in the float's value: negatives have all bits flipped, positives the sign bit set.
    const ordered = b & 0x80000000 ? ~b >>> 0 : (b | 0x80000000) >>> 0;
    keys[n++] = (0xffffffff - ordered) * INDEX_BITS + i;
  }
  const sorted = keys.subarray(0, n).sort();
  const order = new Int32Array(n);
  for (let j = 0; j < n; j++) order[j] = sorted[j]! % INDEX_BITS;
  return order;
}

function argmax(row: Float32Array): number {
  let best = 0;
  for (let i = 1; i < row.length; i++) if (row[i]! > row[best]!) best = i;
  return best;
}
