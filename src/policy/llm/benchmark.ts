/**
 * The policy benchmark, measured side by side in one run on the same model, backend and prompts (Node or a
 * browser page runs it; the entries pass in what they loaded):
 * - throughput: our `ModelPolicy.generate` against a bare transformers.js `generate` loop, both greedy and both
 *   made to produce exactly `newTokens` tokens (EOS ignored), as tokens per second;
 * - batching: one batch of 8 prompts against the same 8 prompts one call at a time (ours), and the same split into
 *   prefill (a one-token call) and decode (the rest), because the two scale differently: prefill is already a
 *   matrix-matrix product per prompt (batching only adds left padding), while decode turns 8 matrix-vector
 *   products into one matrix-matrix product, so the decode figure is what batching can reach on long replies;
 * - time to first token of one call (absolute: nothing to compare it with).
 * Rounds interleave the contenders so drift hits both alike; each figure is the median over rounds.
 */

import type * as Transformers from "@huggingface/transformers";
import { buildGenerationInput, type GenerationDatumSpec } from "../../core/index.js";
import { ModelPolicy, type TransformersRuntime } from "./model-policy.js";

export interface PolicyBenchmarkOptions {
  runtime: TransformersRuntime;
  model: Transformers.PreTrainedModel;
  tokenizer: Transformers.PreTrainedTokenizer;
  backend: string;
  modelName: string;
  newTokens?: number;
  rounds?: number;
  batch?: number;
}

export interface PolicyBenchmarkResult {
  backend: string;
  model: string;
  new_tokens: number;
  rounds: number;
  prompt_tokens: number[];
  bare_tokens_per_s: number;
  policy_tokens_per_s: number;
  /** Ours over bare; target ≥ 0.95. */
  throughput_ratio: number;
  batch_size: number;
  batch_ms: number;
  singles_ms: number;
  /** Eight single calls over one batch of eight; target ≥ 3 on WASM. */
  batching_speedup: number;
  /** One-token calls (prefill and the first token) for the batch and for the eight singles. */
  prefill_batch_ms: number;
  prefill_singles_ms: number;
  /** The speed-up of the decode steps alone: (singles − their prefill) over (batch − its prefill). */
  decode_batching_speedup: number;
  time_to_first_token_ms: number;
}

const PROMPTS = [
  "Slide the tiles until the board is solved.",
  "What is 17 times 3?",
  "List the python files in the workspace.",
  "Think step by step, then call a tool.",
  "Count the ERROR lines in the log.",
  "Move the empty space to the bottom right corner please.",
  "Write the answer to answer.txt.",
  "Explain your plan briefly.",
];
const chat = (text: string) => `<|im_start|>user\n${text}<|im_end|>\n<|im_start|>assistant\n`;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function runPolicyBenchmark(options: PolicyBenchmarkOptions): Promise<PolicyBenchmarkResult> {
  const { runtime, model, tokenizer } = options;
  const newTokens = options.newTokens ?? 64;
  const rounds = options.rounds ?? 5;
  const batchSize = options.batch ?? 8;
  const policy = new ModelPolicy(runtime, model, tokenizer, { ignoreEos: true });
  const encode = (text: string) => policy.tokenizer.encode(text);
  const input = (texts: string[]): GenerationDatumSpec =>
    buildGenerationInput(
      texts.map((t) => [{ role: "user", content: chat(t), token_ids: encode(chat(t)) }]),
      texts.map(() => null),
      { padTokenId: policy.tokenizer.padTokenId, maxSeqLen: 1 << 20, maxNewTokens: newTokens, sampleIds: texts.map((_, i) => i), turns: texts.map(() => 0) },
    );

  const single = input([PROMPTS[0]!]);
  const bare = async () => {
    const ids = Array.from(single.input_ids[0]!);
    const started = performance.now();
    const out = (await model.generate({
      input_ids: new runtime.Tensor("int64", BigInt64Array.from(ids.map(BigInt)), [1, ids.length]),
      attention_mask: new runtime.Tensor("int64", BigInt64Array.from(ids.map(() => 1n)), [1, ids.length]),
      max_new_tokens: newTokens,
      do_sample: false,
      eos_token_id: [],
    } as Record<string, unknown>)) as Transformers.Tensor;
    const produced = out.dims[1]! - ids.length;
    return { ms: performance.now() - started, produced };
  };
  const ours = async (data: GenerationDatumSpec, maxNewTokens?: number) => {
    if (maxNewTokens !== undefined) data = { ...data, max_new_tokens: data.max_new_tokens.map(() => maxNewTokens) };
    const started = performance.now();
    let first = 0;
    const out = await policy.generate(data, true, { onToken: () => (first ||= performance.now() - started) });
    const ms = performance.now() - started;
    await policy.dispose(); // every call starts cold, like the bare loop: no KV cache carried over
    return { ms, produced: out.generation_lengths.reduce((a, b) => a + b, 0), first };
  };

  // Warm-up: kernels (and shaders on WebGPU) compile on first use.
  await bare();
  await ours(single);
  const batchPrompts = Array.from({ length: batchSize }, (_, i) => PROMPTS[i % PROMPTS.length]!);
  const bareRates: number[] = [];
  const ourRates: number[] = [];
  const firsts: number[] = [];
  const batchTimes: number[] = [];
  const singlesTimes: number[] = [];
  const prefillBatchTimes: number[] = [];
  const prefillSinglesTimes: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const b = await bare();
    bareRates.push(b.produced / (b.ms / 1000));
    const o = await ours(single);
    if (o.produced !== b.produced) throw new Error(`the contenders produced ${o.produced} and ${b.produced} tokens`);
    ourRates.push(o.produced / (o.ms / 1000));
    firsts.push(o.first);
    batchTimes.push((await ours(input(batchPrompts))).ms);
    let total = 0;
    for (const prompt of batchPrompts) total += (await ours(input([prompt]))).ms;
    singlesTimes.push(total);
    prefillBatchTimes.push((await ours(input(batchPrompts), 1)).ms);
    let prefillTotal = 0;
    for (const prompt of batchPrompts) prefillTotal += (await ours(input([prompt]), 1)).ms;
    prefillSinglesTimes.push(prefillTotal);
  }
  const bareRate = median(bareRates);
  const ourRate = median(ourRates);
  const batchMs = median(batchTimes);
  const singlesMs = median(singlesTimes);
  const prefillBatchMs = median(prefillBatchTimes);
  const prefillSinglesMs = median(prefillSinglesTimes);
  return {
    backend: options.backend,
    model: options.modelName,
    new_tokens: newTokens,
    rounds,
    prompt_tokens: batchPrompts.map((p) => encode(chat(p)).length),
    bare_tokens_per_s: round(bareRate),
    policy_tokens_per_s: round(ourRate),
    throughput_ratio: round(ourRate / bareRate, 3),
    batch_size: batchSize,
    batch_ms: round(batchMs),
    singles_ms: round(singlesMs),
    batching_speedup: round(singlesMs / batchMs, 2),
    prefill_batch_ms: round(prefillBatchMs),
    prefill_singles_ms: round(prefillSinglesMs),
    decode_batching_speedup: round((singlesMs - prefillSinglesMs) / (batchMs - prefillBatchMs), 2),
    time_to_first_token_ms: round(median(firsts)),
  };
}

const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;
