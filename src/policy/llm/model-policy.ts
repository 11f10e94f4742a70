/**
 * A language-model policy on transformers.js, behind the core's `GenerationInterface`.
 *
 * transformers.js itself is imported only by the two entries (`node.ts`, `worker.ts`), which pass its runtime in:
 * this module works the same in Node (onnxruntime-node) and in a Worker (onnxruntime-web, WASM or WebGPU).
 *
 * Generation runs on the model's decode engine (`decode-engine.ts`), shared by every policy on that model: each
 * sample's KV cache is kept across its turns, and the rows of every call under way (a sync batch's, async's
 * per-sample turns, a fork's rollout beside the main one) are decoded in one running batch. Each row is cut at its
 * own EOS, stop string (kept) or `max_new_tokens` (`truncated`); every generated token's log-probability under the
 * raw distribution is returned as `generation_logprobs`; sampling (temperature, top-k, top-p) draws from a generator
 * seeded per (seed, sample, turn), so a sample's tokens do not depend on which other samples share its batch; with
 * each streamed token (`onToken`) come its step's entropy and top-5 alternatives (lab-only detail for the token view).
 *
 * A model the engine cannot drive (`engineUnsupported`), or `engine: "generate"`, runs on transformers.js's own
 * `generate()` instead (`generate-call-policy.ts`): the benchmarks' baseline.
 */

import type * as Transformers from "@huggingface/transformers";
import {
  abortError,
  Rng,
  type GenerateOptions,
  type GenerationDatumSpec,
  type GenerationInterface,
  type GenerationOutputSpec,
  type TokenStepDetail,
} from "../../core/index.js";
import { DecodeEngine, engineUnsupported, type DecodeResult, type EngineOptions } from "./decode-engine.js";
import { GenerateCallPolicy } from "./generate-call-policy.js";
import { ModelTokenizer } from "./model-tokenizer.js";
import { DETAIL_TOP_K, type SamplingSettings, type StepStats, type TransformersRuntime } from "./processors.js";

export { ModelTokenizer } from "./model-tokenizer.js";
export { logSoftmax, sampleToken, stepStats, type SamplingSettings, type TransformersRuntime } from "./processors.js";

type Model = Transformers.PreTrainedModel;
type HfTokenizer = Transformers.PreTrainedTokenizer;

export interface ModelPolicyOptions extends SamplingSettings {
  /** Called when the rollout is over, after the policy's caches are freed. */
  onDispose?: () => Promise<void> | void;
  /** Generate through EOS (as vLLM's `ignore_eos`): benchmarks use it to make every call the same length. */
  ignoreEos?: boolean;
  /** `generate`: transformers.js's own `generate()`, one call at a time (the baseline); default: the decode engine. */
  engine?: "continuous" | "generate";
  /** The engine's options, taken when this policy is the first on its model. */
  engineOptions?: EngineOptions;
}

// One engine per loaded model: policies on it (a run and its forks) share its running batch.
const engines = new WeakMap<Model, DecodeEngine>();
let policies = 0;

/** The decode engine of `model` (made on first use); null when the engine cannot drive it. */
export function engineFor(runtime: TransformersRuntime, model: Model, tokenizer: ModelTokenizer, options?: EngineOptions): DecodeEngine | null {
  let engine = engines.get(model);
  if (!engine) {
    if (engineUnsupported(model) !== null) return null;
    engine = new DecodeEngine(runtime, model, tokenizer, options);
    engines.set(model, engine);
  }
  return engine;
}

export class ModelPolicy implements GenerationInterface {
  readonly tokenizer: ModelTokenizer;
  /** Set when generation runs on `generate()` instead of the engine. */
  private readonly fallback: GenerateCallPolicy | null;
  private readonly engine: DecodeEngine | null;
  /** Prefix of this policy's cache keys: its samples' caches are its own. */
  private readonly keyPrefix = `${++policies}:`;
  private counts = { prefilled: 0, reused: 0 };
  /**
   * The first turns of this policy's samples share their prompts' common prefix, whichever call they come in: an
   * async rollout asks each sample's first turn in a call of its own, all at its start.
   */
  private readonly firstTurns = {};

  constructor(
    runtime: TransformersRuntime,
    readonly model: Model,
    hfTokenizer: HfTokenizer,
    private readonly sampling: ModelPolicyOptions = {},
  ) {
    this.tokenizer = new ModelTokenizer(hfTokenizer, (model as { generation_config?: { eos_token_id?: number | number[] } | null }).generation_config?.eos_token_id);
    this.engine = sampling.engine === "generate" ? null : engineFor(runtime, model, this.tokenizer, sampling.engineOptions);
    this.fallback = this.engine ? null : new GenerateCallPolicy(runtime, model, this.tokenizer, sampling);
  }

  /** What runs the generation: the decode engine, or transformers.js's `generate()`. */
  get backend(): "continuous" | "generate" {
    return this.engine ? "continuous" : "generate";
  }

  /** The decode engine's counters (null on `generate()`). */
  get engineStats(): DecodeEngine["stats"] | null {
    return this.engine?.stats ?? null;
  }

  /** Where the engine's caches live (null on `generate()`). */
  get cacheHome(): DecodeEngine["cacheHome"] | null {
    return this.engine?.cacheHome ?? null;
  }

  /** The engine's kept caches (every policy's on this model): how many, their bytes, how many were evicted. */
  get keptCaches(): DecodeEngine["cacheStats"] | null {
    return this.engine?.cacheStats ?? null;
  }

  /** Prompt tokens this policy ran through the model, and those served from kept caches. */
  metrics(): Record<string, number> {
    const counts = this.fallback ? this.fallback.cacheStats : this.counts;
    return { "lab/prefilled_tokens": counts.prefilled, "lab/reused_tokens": counts.reused };
  }

  generate(data: GenerationDatumSpec, greedy: boolean, options: GenerateOptions = {}): Promise<GenerationOutputSpec> {
    if (this.fallback) return this.fallback.generate(data, greedy, options);
    return this.collect(data, this.submitRows(data, greedy, options), options);
  }

  /** Yields each row as soon as it is done (async rollouts make one-row calls; several rows come in any order). */
  async *generateAsync(data: GenerationDatumSpec, greedy: boolean, options: GenerateOptions = {}): AsyncGenerator<[number, GenerationOutputSpec]> {
    if (this.fallback) {
      yield* this.fallback.generateAsync(data, greedy, options);
      return;
    }
    const results = this.submitRows(data, greedy, options);
    const settled = results.map((promise, row) => promise.then((result) => ({ row, result })));
    const waiting = new Map(settled.map((p, row) => [row, p]));
    while (waiting.size > 0) {
      const { row, result } = await Promise.race(waiting.values());
      waiting.delete(row);
      this.count(result);
      if (options.signal?.aborted) throw abortError("generation cancelled");
      yield [row, assemble([{ prompt: promptOf(data, row), result }], this.tokenizer.padTokenId)];
    }
  }

  /** The samples ended: their caches are freed. */
  releaseSamples(sampleIds: readonly number[]): void {
    this.engine?.release(sampleIds.map((id) => this.keyPrefix + id));
  }

  /** Frees this policy's caches (GPU buffers on WebGPU). */
  async dispose(): Promise<void> {
    if (this.fallback) return this.fallback.dispose();
    this.engine!.releasePrefix(this.keyPrefix);
    await this.sampling.onDispose?.();
  }

  private submitRows(data: GenerationDatumSpec, greedy: boolean, options: GenerateOptions): Promise<DecodeResult>[] {
    const engine = this.engine!;
    const seed = this.sampling.seed ?? 0;
    const call = {};
    return data.input_lengths.map((_, i) => {
      const sampleId = data.sample_ids?.[i] ?? i;
      const onToken = options.onToken;
      return engine.submit({
        key: data.sample_ids ? this.keyPrefix + sampleId : null,
        promptIds: promptOf(data, i),
        maxNew: data.max_new_tokens[i]!,
        stops: (data.stop_strings[i] ?? []).filter((s) => s.length > 0),
        greedy,
        sampling: this.sampling,
        rng: Rng.derive(seed, "model", sampleId, data.turns?.[i] ?? 0),
        ignoreEos: this.sampling.ignoreEos ?? false,
        topK: onToken ? DETAIL_TOP_K : 0,
        onToken: onToken ? (id, step) => onToken(i, id, this.tokenizer.tokenText(id), step ? this.detail(step) : undefined) : undefined,
        signal: options.signal,
        call,
        ...((data.turns?.[i] ?? 0) === 0 && data.sample_ids ? { shareGroup: this.firstTurns } : {}),
      });
    });
  }

  private async collect(data: GenerationDatumSpec, results: Promise<DecodeResult>[], options: GenerateOptions): Promise<GenerationOutputSpec> {
    const done = await Promise.all(results);
    done.forEach((r) => this.count(r));
    if (options.signal?.aborted) throw abortError("generation cancelled");
    return assemble(
      done.map((result, row) => ({ prompt: promptOf(data, row), result })),
      this.tokenizer.padTokenId,
    );
  }

  private count(result: DecodeResult): void {
    this.counts.prefilled += result.prefilled;
    this.counts.reused += result.reused;
  }

  private detail(step: StepStats): TokenStepDetail {
    return { entropy: step.entropy, top: step.top.map((t) => ({ ...t, text: this.tokenizer.tokenText(t.tokenId) })) };
  }
}

function promptOf(data: GenerationDatumSpec, row: number): number[] {
  return Array.from(data.input_ids[row]!.subarray(0, data.input_lengths[row]!));
}

/** The rows as the core's output: prompt then generated tokens, padded; zeros as log-probabilities over the prompt. */
function assemble(rows: { prompt: number[]; result: DecodeResult }[], padId: number): GenerationOutputSpec {
  const width = Math.max(0, ...rows.map((r) => r.prompt.length + r.result.tokens.length));
  return {
    output_ids: rows.map(({ prompt, result }) => {
      const row = new Int32Array(width).fill(padId);
      row.set(prompt);
      row.set(result.tokens, prompt.length);
      return row;
    }),
    logprobs: rows.map(({ prompt, result }) => {
      const row = new Float64Array(width);
      row.set(result.logprobs, prompt.length);
      return row;
    }),
    generation_lengths: rows.map((r) => r.result.tokens.length),
    unpadded_sequence_lengths: rows.map((r) => r.prompt.length + r.result.tokens.length),
    truncated: rows.map((r) => r.result.truncated),
  };
}
