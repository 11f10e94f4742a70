/**
 * Logit shaping of the built-in model: a constant bias `lm_head.bias_shaping` `[V]` added after `lm_head`, so random
 * weights only ever emit printable ASCII, `\n` and the protocol markers. Decoded text is then valid UTF-8 wherever a
 * generation is cut, and the markers (above all `<|im_end|>`) do come up, so rollouts end and exercise the parsers.
 *
 * The positive marker biases are per preset (`presets.ts`). Measured with transformers.js on onnxruntime-node, 30
 * chat prompts (a quarter with a tools block), 100 new tokens, temperature 1 with top_k 0, and greedy:
 *
 * | preset, seed | bias | sampled: `<|im_end|>` within 100 (median reply length) | greedy: within 100 (median) |
 * |---|---|---|---|
 * | tiny 0 | none | 8/30 (70) | 0/30 |
 * | tiny 0 / 1 / 2 / 3 | +2.5, +0.5 | 26/30 (31), 30/30 (11), 25/30 (32), 30/30 (23) | 18/30 (32), 28/30 (6), 7/30 (16), 15/30 (28) |
 * | small 0 | none | 22/30 (45) | 10/30 (43) |
 * | small 0 | +2.5, +0.5 | 30/30 (4) | 28/30 (1) |
 * | small 0 / 1 / 2 | +1, +0.5 | 29/30 (15), 24/30 (29), 14/30 (65) | 22/30 (10), 12/30 (11), 3/30 (31) |
 *
 * With the chosen biases the tool/think markers appear in most sampled tiny replies (about 1–4 % of tokens each;
 * `</tool_call>` rarer), and greedy decoding of a random model still falls into loops for some prompts (a
 * `max_new_tokens` cut is normal).
 *
 * `tiny-qwen3` (`qwen3-vocabulary.ts`) shapes Qwen3's vocabulary the same way: the 92,576 BPE tokens whose bytes are
 * all printable ASCII or `\n`, `<|im_end|>` +12 and the four markers +7 (the same 30 prompts, in Qwen3's template,
 * a quarter with tools; median reply length in BPE tokens; markers' share of the generated tokens):
 *
 * | seed | sampled: `<|im_end|>` within 100 (median), markers | greedy: within 100 (median), markers |
 * |---|---|---|
 * | 0 / 1 / 2 | 30/30 (13), 3 %; 30/30 (10), 10 %; 30/30 (8), 18 % | 9/30 (100), 37 %; 22/30 (1), 64 %; 27/30 (19), 11 % |
 */

import { ADDED_TOKENS } from "../../core/tokenizer/byte-level.js";
import { FIRST_MERGED_ID, mergedTokenBytes, type Merge } from "./merges.js";
import type { ModelPreset } from "./presets.js";

/** Finite (not −∞), so log-softmax and logprob sums stay finite; exp(−1e4) is exactly 0 in float32. */
export const BLOCKED_BIAS = -1e4;

/** The markers the model may emit; `<|endoftext|>`, `<|im_start|>` and the tool-response tags are blocked. */
export const EMITTED_MARKERS = ["<|im_end|>", "<tool_call>", "</tool_call>", "<think>", "</think>"] as const;

/** The bytes the model may emit: printable ASCII 0x20–0x7E and `\n`. */
export function isAllowedByte(byte: number): boolean {
  return byte === 0x0a || (byte >= 0x20 && byte <= 0x7e);
}

const emittedMarkerIds = () =>
  ADDED_TOKENS.filter((t) => (EMITTED_MARKERS as readonly string[]).includes(t.content)).map((t) => t.id);

/** The ids of a trained model's merged tokens (`merges.ts`) whose bytes are all allowed ones. */
function allowedMergedIds(merges: readonly Merge[]): number[] {
  return mergedTokenBytes(merges, "merges").flatMap((bytes, i) => (bytes.every(isAllowedByte) ? [FIRST_MERGED_ID + i] : []));
}

/** Every token id the shaped model can emit (bytes, then markers, then merged tokens of allowed bytes). */
export function allowedTokenIds(merges: readonly Merge[] = []): number[] {
  const ids: number[] = [];
  for (let b = 0; b < 256; b++) if (isAllowedByte(b)) ids.push(b);
  return [...ids, ...emittedMarkerIds(), ...allowedMergedIds(merges)];
}

/**
 * The `lm_head.bias_shaping` initializer `[V]`: 0 for allowed bytes and merged tokens, the preset's marker biases,
 * −1e4 for the rest.
 */
export function shapingBias(p: Pick<ModelPreset, "vocabSize" | "eosBias" | "markerBias" | "merges">): Float32Array {
  const bias = new Float32Array(p.vocabSize).fill(BLOCKED_BIAS);
  for (let b = 0; b < 256; b++) if (isAllowedByte(b)) bias[b] = 0;
  for (const id of allowedMergedIds(p.merges ?? [])) bias[id] = 0;
  for (const t of ADDED_TOKENS) {
    if (t.content === "<|im_end|>") bias[t.id] = p.eosBias;
    else if ((EMITTED_MARKERS as readonly string[]).includes(t.content)) bias[t.id] = p.markerBias;
  }
  return bias;
}
