/**
 * Logit shaping of the built-in model: a constant bias added after `lm_head`, so random weights only ever emit
 * printable ASCII, `\n` and the protocol markers. Decoded text is then valid UTF-8 wherever a generation is cut,
 * and the markers (above all `<|im_end|>`) do come up, so rollouts end and exercise the parsers.
 */

import { ADDED_TOKENS } from "../../core/tokenizer/byte-level.js";

/** Finite (not −∞), so log-softmax and logprob sums stay finite; exp(−1e4) is exactly 0 in float32. */
export const BLOCKED_BIAS = -1e4;

/**
 * Positive bias per emitted marker, in nats. Measured on the tiny and small presets (seed 0); see the folder's
 * `logit-shaping.test.ts` and the README numbers: without a bias, markers are rare.
 */
export const MARKER_BIAS: Readonly<Record<string, number>> = {
  "<|im_end|>": 4,
  "<tool_call>": 2,
  "</tool_call>": 2,
  "<think>": 2,
  "</think>": 2,
};

/** The bytes the model may emit: printable ASCII 0x20–0x7E and `\n`. */
export function isAllowedByte(byte: number): boolean {
  return byte === 0x0a || (byte >= 0x20 && byte <= 0x7e);
}

/** Every token id the shaped model can emit. */
export function allowedTokenIds(): number[] {
  const ids: number[] = [];
  for (let b = 0; b < 256; b++) if (isAllowedByte(b)) ids.push(b);
  for (const t of ADDED_TOKENS) if (t.content in MARKER_BIAS) ids.push(t.id);
  return ids;
}

/** The `lm_head.bias_shaping` initializer `[V]`: 0 for allowed bytes, the marker bias, −1e4 for the rest. */
export function shapingBias(vocabSize: number): Float32Array {
  const bias = new Float32Array(vocabSize).fill(BLOCKED_BIAS);
  for (let b = 0; b < 256; b++) if (isAllowedByte(b)) bias[b] = 0;
  for (const t of ADDED_TOKENS) {
    const marker = MARKER_BIAS[t.content];
    if (marker !== undefined) bias[t.id] = marker;
  }
  return bias;
}
