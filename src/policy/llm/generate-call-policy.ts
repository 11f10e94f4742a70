/**
 * The model policy on transformers.js's own `generate()`: one call at a time, one KV cache reused only when the next
 * call's padded rows extend the previous call's exactly. It is what the lab ran before the decode engine
 * (`decode-engine.ts`), kept for models the engine cannot drive (`engineUnsupported`) and as the benchmarks'
 * baseline (`bench/model-rollout.ts`).
 *
 * What it adds over a bare `generate` call (browser-inference.md §3.4): batched generation with left padding, each
 * row cut at its own EOS, stop string (kept) or `max_new_tokens`; the raw log-probability of every generated token;
 * seeded per-row sampling; per-token entropy and alternatives for a listener; streaming and cancellation.
 */

import type * as Transformers from "@huggingface/transformers";
import {
  abortError,
  outputRow,
  Rng,
  type GenerateOptions,
  type GenerationDatumSpec,
  type GenerationInterface,
  type GenerationOutputSpec,
} from "../../core/index.js";
import type { ModelTokenizer } from "./model-tokenizer.js";
import { DETAIL_TOP_K, generationHooks, type GenerationHooks, type RowState, type SamplingSettings, type TransformersRuntime } from "./processors.js";

type Model = Transformers.PreTrainedModel;

interface CacheEntry {
  /** The padded token rows the cache covers (the last generated token of each row is not in it). */
  rows: number[][];
  cache: Transformers.DynamicCache;
}

export interface GenerateCallOptions extends SamplingSettings {
  /** Called when the rollout is over: the default frees the KV cache. */
  onDispose?: () => Promise<void> | void;
  /** Generate through EOS (as vLLM's `ignore_eos`): benchmarks use it to make every call the same length. */
  ignoreEos?: boolean;
  /**
   * The most attention-score bytes one prefill may hold (rows × heads × prompt length² × 4); a call whose prompt
   * needs more is prefilled in groups of rows, then decoded as one batch. Default 128 MiB: in WASM's 4 GiB heap a
   * whole sync batch of long contexts (8 rows × 2,000 tokens × 6 heads: 768 MB a score tensor, several alive at
   * once) ran out of memory (`std::bad_alloc`).
   */
  prefillScoreBytes?: number;
}

const DEFAULT_PREFILL_SCORE_BYTES = 128 * 1024 * 1024;

export class GenerateCallPolicy implements GenerationInterface {
  private queue: Promise<unknown> = Promise.resolve();
  private cached: CacheEntry | null = null;
  private stats = { cacheHits: 0, cacheMisses: 0, prefilled: 0, reused: 0, groupedPrefills: 0 };
  /** Set when the model's caches came back on the GPU: row groups' caches cannot be joined there, so none are made. */
  private gpuCaches = false;
  private readonly hooks: GenerationHooks;

  constructor(
    private readonly runtime: TransformersRuntime,
    readonly model: Model,
    readonly tokenizer: ModelTokenizer,
    private readonly sampling: GenerateCallOptions = {},
  ) {
    this.hooks = generationHooks(runtime, this.tokenizer);
  }

  /**
   * Cache hits and misses, the prompt tokens run through the model or served from the cache (padding included), and
   * the calls prefilled in groups of rows.
   */
  get cacheStats(): { cacheHits: number; cacheMisses: number; prefilled: number; reused: number; groupedPrefills: number } {
    return { ...this.stats };
  }

  /** One generation at a time: a session never runs twice at once, and the KV cache has one owner. */
  generate(data: GenerationDatumSpec, greedy: boolean, options: GenerateOptions = {}): Promise<GenerationOutputSpec> {
    const run = this.queue.then(() => this.generateNow(data, greedy, options));
    this.queue = run.catch(() => undefined);
    return run;
  }

  async *generateAsync(data: GenerationDatumSpec, greedy: boolean, options: GenerateOptions = {}) {
    const out = await this.generate(data, greedy, options);
    for (let row = 0; row < data.input_lengths.length; row++) yield [row, outputRow(out, row)] as [number, GenerationOutputSpec];
  }

  /** Frees the KV cache (GPU buffers on WebGPU). */
  async dispose(): Promise<void> {
    await this.queue;
    await this.dropCache();
    await this.sampling.onDispose?.();
  }

  private async generateNow(data: GenerationDatumSpec, greedy: boolean, options: GenerateOptions): Promise<GenerationOutputSpec> {
    const { Tensor } = this.runtime;
    const B = data.input_lengths.length;
    const rows: RowState[] = data.input_lengths.map((len, i) => ({
      sampleId: data.sample_ids?.[i] ?? i,
      turn: data.turns?.[i] ?? 0,
      promptIds: Array.from(data.input_ids[i]!.subarray(0, len)),
      maxNew: data.max_new_tokens[i]!,
      stops: (data.stop_strings[i] ?? []).filter((s) => s.length > 0),
      // No room: the prompt comes back as it is, not truncated (the batch's other rows still generate).
      keep: data.max_new_tokens[i]! <= 0 ? 0 : null,
      truncated: false,
      logprobs: [],
      rng: Rng.derive(this.sampling.seed ?? 0, "model", data.sample_ids?.[i] ?? i, data.turns?.[i] ?? 0),
    }));
    const maxNew = Math.max(0, ...rows.map((r) => r.maxNew));
    if (maxNew === 0) return assemble(rows, this.tokenizer.padTokenId);

    const width = Math.max(...rows.map((r) => r.promptIds.length));
    const padded = rows.map((r) => [...new Array(width - r.promptIds.length).fill(this.tokenizer.padTokenId), ...r.promptIds]);
    const mask = rows.map((r) => [...new Array(width - r.promptIds.length).fill(0), ...new Array(r.promptIds.length).fill(1)]);
    const inputIds = new Tensor("int64", BigInt64Array.from(padded.flat().map(BigInt)), [B, width]);
    const attentionMask = new Tensor("int64", BigInt64Array.from(mask.flat().map(BigInt)), [B, width]);
    const reused = await this.reusableCache(padded);
    const cachedWidth = reused ? reused.get_seq_length() : 0;
    this.stats.prefilled += B * (width - cachedWidth);
    this.stats.reused += B * cachedWidth;
    const pastKeyValues = reused ?? (await this.prefillInGroups(padded, mask, options.signal));

    // Entropy and alternatives only for a listener of the tokens: without one nothing would read them.
    const recorder = new this.hooks.LogprobRecorder(rows, options.onToken ? DETAIL_TOP_K : 0);
    const processors: Transformers.LogitsProcessor[] = [recorder];
    if (!greedy) processors.push(new this.hooks.SeededSampler(rows, this.sampling));
    const result = (await this.model.generate({
      input_ids: inputIds,
      attention_mask: attentionMask,
      max_new_tokens: maxNew,
      do_sample: false, // sampling is ours (seeded per sample); transformers.js then takes the one token left
      repetition_penalty: 1,
      no_repeat_ngram_size: 0,
      min_new_tokens: null,
      logits_processor: processors,
      stopping_criteria: [new this.hooks.RowStopper(rows, width, options.signal, this.sampling.ignoreEos ?? false)],
      ...(this.sampling.ignoreEos ? { eos_token_id: [] } : {}),
      streamer: options.onToken ? new this.hooks.RowStreamer(rows, options.onToken) : undefined,
      return_dict_in_generate: true,
      ...(pastKeyValues ? { past_key_values: pastKeyValues } : {}),
    } as Record<string, unknown>)) as unknown as { sequences: Transformers.Tensor; past_key_values: Transformers.DynamicCache };

    const sequences = result.sequences.tolist() as bigint[][];
    recorder.finish(sequences);
    await this.keepCache(sequences, result.past_key_values);
    if (options.signal?.aborted) throw abortError("generation cancelled");
    for (const [i, row] of rows.entries()) {
      const generated = sequences[i]!.slice(width).map(Number);
      if (row.keep === null) row.keep = Math.min(generated.length, row.maxNew);
      row.promptIds = [...row.promptIds, ...generated.slice(0, row.keep)];
      row.logprobs = row.logprobs.slice(0, row.keep);
    }
    return assemble(rows, this.tokenizer.padTokenId, true);
  }

  /**
   * A cache of every prompt token but the last, prefilled a group of rows at a time, when one forward pass over all
   * rows would hold more attention scores than `prefillScoreBytes`; null when one pass may (or cannot be split).
   * Each group is a one-token `generate()` (its token is dropped: it only fills the cache, and transformers.js then
   * computes the logits of the last position alone); the groups' caches are joined along the batch dimension.
   */
  private async prefillInGroups(padded: number[][], mask: number[][], signal?: AbortSignal): Promise<Transformers.DynamicCache | null> {
    const covered = padded[0]!.length - 1;
    const heads = Number((this.model.config as { num_attention_heads?: number }).num_attention_heads ?? 1);
    const groupRows = Math.max(1, Math.floor((this.sampling.prefillScoreBytes ?? DEFAULT_PREFILL_SCORE_BYTES) / (heads * covered * covered * 4)));
    // A row with a one-token prompt would be all padding in the prefilled part (no position to attend to).
    if (this.gpuCaches || groupRows >= padded.length || mask.some((m) => m[covered - 1] === 0)) return null;
    const { Tensor } = this.runtime;
    const parts: Transformers.DynamicCache[] = [];
    try {
      for (let at = 0; at < padded.length; at += groupRows) {
        if (signal?.aborted) throw abortError("generation cancelled");
        const ids = padded.slice(at, at + groupRows).map((r) => r.slice(0, covered));
        const masks = mask.slice(at, at + groupRows).map((r) => r.slice(0, covered));
        const result = (await this.model.generate({
          input_ids: new Tensor("int64", BigInt64Array.from(ids.flat().map(BigInt)), [ids.length, covered]),
          attention_mask: new Tensor("int64", BigInt64Array.from(masks.flat().map(BigInt)), [ids.length, covered]),
          max_new_tokens: 1,
          do_sample: false,
          repetition_penalty: 1,
          no_repeat_ngram_size: 0,
          min_new_tokens: null,
          return_dict_in_generate: true,
        } as Record<string, unknown>)) as unknown as { past_key_values: Transformers.DynamicCache };
        parts.push(result.past_key_values);
      }
      const entries = parts.map((part) => Object.entries(part as unknown as Record<string, Transformers.Tensor>));
      if (entries.some((list) => list.some(([, t]) => t.location !== "cpu"))) {
        this.gpuCaches = true;
        return null;
      }
      const joined: Record<string, Transformers.Tensor> = {};
      for (const [name, first] of entries[0]!) {
        const tensors = parts.map((part) => (part as unknown as Record<string, Transformers.Tensor>)[name]!);
        const data = new (first.data.constructor as new (n: number) => Transformers.Tensor["data"])(tensors.reduce((n, t) => n + t.data.length, 0));
        let offset = 0;
        for (const t of tensors) {
          (data as Float32Array).set(t.data as Float32Array, offset);
          offset += t.data.length;
        }
        joined[name] = new Tensor(first.type, data, [tensors.reduce((n, t) => n + t.dims[0]!, 0), ...first.dims.slice(1)]);
      }
      const cache = parts.shift()!;
      cache.update(joined);
      this.stats.groupedPrefills += 1;
      return cache;
    } finally {
      await Promise.all(parts.map((part) => part.dispose()));
    }
  }

  /** The cache from the last call, when each new row starts with exactly the tokens it covers. */
  private async reusableCache(padded: number[][]): Promise<Transformers.DynamicCache | null> {
    const entry = this.cached;
    if (!entry) return null;
    const extends_ =
      entry.rows.length === padded.length &&
      entry.rows.every((old, i) => old.length < padded[i]!.length && old.every((id, j) => padded[i]![j] === id));
    if (extends_) {
      this.cached = null;
      this.stats.cacheHits += 1;
      return entry.cache;
    }
    this.stats.cacheMisses += 1;
    await this.dropCache();
    return null;
  }

  private async keepCache(sequences: bigint[][], cache: Transformers.DynamicCache): Promise<void> {
    await this.dropCache();
    // The cache holds every token but the last sampled one of each row.
    this.cached = { rows: sequences.map((s) => s.slice(0, -1).map(Number)), cache };
  }

  private async dropCache(): Promise<void> {
    const entry = this.cached;
    this.cached = null;
    if (entry) await entry.cache.dispose();
  }
}


function assemble(rows: RowState[], padId: number, generated = false): GenerationOutputSpec {
  const width = Math.max(0, ...rows.map((r) => r.promptIds.length));
  const outputRow = (r: RowState) => {
    const row = new Int32Array(width).fill(padId);
    row.set(r.promptIds);
    return row;
  };
  // Zeros over the prompt and the padding, the recorded log-probabilities over what was generated.
  const logprobRow = (r: RowState) => {
    const row = new Float64Array(width);
    if (generated) row.set(r.logprobs, r.promptIds.length - r.keep!);
    return row;
  };
  return {
    output_ids: rows.map(outputRow),
    logprobs: rows.map(logprobRow),
    generation_lengths: rows.map((r) => (generated ? r.keep! : 0)),
    unpadded_sequence_lengths: rows.map((r) => r.promptIds.length),
    truncated: rows.map((r) => r.truncated),
  };
}
