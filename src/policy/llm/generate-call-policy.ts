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
}

export class GenerateCallPolicy implements GenerationInterface {
  private queue: Promise<unknown> = Promise.resolve();
  private cached: CacheEntry | null = null;
  private stats = { cacheHits: 0, cacheMisses: 0, prefilled: 0, reused: 0 };
  private readonly hooks: GenerationHooks;

  constructor(
    private readonly runtime: TransformersRuntime,
    readonly model: Model,
    readonly tokenizer: ModelTokenizer,
    private readonly sampling: GenerateCallOptions = {},
  ) {
    this.hooks = generationHooks(runtime, this.tokenizer);
  }

  /** Cache hits and misses, and the prompt tokens run through the model or served from the cache (padding included). */
  get cacheStats(): { cacheHits: number; cacheMisses: number; prefilled: number; reused: number } {
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
      keep: null,
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
    const pastKeyValues = await this.reusableCache(padded);
    const cachedWidth = pastKeyValues ? pastKeyValues.get_seq_length() : 0;
    this.stats.prefilled += B * (width - cachedWidth);
    this.stats.reused += B * cachedWidth;

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
