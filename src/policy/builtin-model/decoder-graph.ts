/**
 * The Llama-style decoder as an ONNX graph (browser-inference.md §6.4–§6.5), with the KV-cache I/O transformers.js
 * feeds: `input_ids`, `attention_mask`, `position_ids`, `past_key_values.{i}.key|value` in; `logits` and
 * `present.{i}.key|value` out. Only standard ai.onnx ops at opset 17, so it runs on ORT's CPU, WASM and WebGPU EPs.
 *
 * `new_key_values.{i}.key|value` are the keys and values of the step's own tokens alone (`[B, KV, S, D]`): the
 * decode engine fetches them instead of `present` and appends them to cache buffers it keeps, so a decode step no
 * longer copies the whole cache out of onnxruntime (decode-engine.ts, "append mode"). transformers.js reads only the
 * `present` outputs and ignores these.
 */

import { FLOAT, INT64, OnnxGraphBuilder } from "./onnx-graph-builder.js";
import { shapingBias } from "./logit-shaping.js";
import type { ModelPreset } from "./presets.js";
import { ropeInvFreq, rotateHalfMatrix, type ModelWeights } from "./weights.js";

/** Bumped whenever the graph or the files change, so stale built folders are rebuilt. */
export const BUILDER_VERSION = "3";

/** Additive mask value: finite, so a fully padded query row gives a uniform softmax instead of NaN. */
const MASK_NEGATIVE = 1e9;

interface Rope {
  cos: string; // [B, 1, S, D]
  sin: string;
  rotateHalf: string; // [D, D]
}

/** `bias` is the logit-shaping bias `[V]`; the byte-level presets' by default (the Qwen3 one needs its vocabulary). */
export function encodeDecoderModel(p: ModelPreset, w: ModelWeights, bias: Float32Array = shapingBias(p)): Uint8Array {
  const g = new OnnxGraphBuilder();
  const { vocabSize: V, hiddenSize: hidden, headDim: D, numHeads: H, numKvHeads: KV } = p;

  const inputIds = g.input("input_ids", INT64, ["batch_size", "sequence_length"]);
  const attentionMask = g.input("attention_mask", INT64, ["batch_size", "total_sequence_length"]);
  const positionIds = g.input("position_ids", INT64, ["batch_size", "sequence_length"]);
  // KV heads and head_dim must be numbers: transformers.js sizes the empty first-step cache from these dims (§5).
  for (let l = 0; l < p.numLayers; l++) {
    g.input(`past_key_values.${l}.key`, FLOAT, ["batch_size", KV, "past_sequence_length", D]);
    g.input(`past_key_values.${l}.value`, FLOAT, ["batch_size", KV, "past_sequence_length", D]);
  }

  // Initializer order as before tying existed, so the untied presets' files keep their bytes.
  let lmHead: string | null = null;
  let x: string;
  if (w.embedTokens) {
    x = g.node("Gather", [g.floatTensor("model.embed_tokens.weight", [V, hidden], w.embedTokens), inputIds], { axis: 0 });
  } else {
    // Tied: gather columns of the LM head ([hidden, B, S]) rather than transpose it, which ORT would fold into a
    // second copy of the biggest matrix.
    lmHead = g.floatTensor("lm_head.weight", [hidden, V], w.lmHead);
    x = g.node("Transpose", [g.node("Gather", [lmHead, inputIds], { axis: 1 })], { perm: [1, 2, 0] });
  }

  const maskBias = buildMaskBias(g, inputIds, attentionMask);
  // The mask once per query row of every group: `[B, 1, G·S, T]`, shared by the layers.
  const groupedMask = H === KV ? maskBias : g.node("Concat", Array.from({ length: H / KV }, () => maskBias), { axis: 2 });
  const rope = buildRope(g, p, positionIds);

  w.layers.forEach((lw, l) => {
    const prefix = `model.layers.${l}`;
    const normed = rmsNorm(g, p, x, g.floatTensor(`${prefix}.input_layernorm.weight`, [hidden], lw.inputLayernorm));
    const wq = g.floatTensor(`${prefix}.self_attn.q_proj.weight`, [hidden, H * D], lw.qProj);
    const wk = g.floatTensor(`${prefix}.self_attn.k_proj.weight`, [hidden, KV * D], lw.kProj);
    const wv = g.floatTensor(`${prefix}.self_attn.v_proj.weight`, [hidden, KV * D], lw.vProj);
    const wo = g.floatTensor(`${prefix}.self_attn.o_proj.weight`, [H * D, hidden], lw.oProj);

    const q = applyRope(g, rope, splitHeads(g, g.node("MatMul", [normed, wq]), H, D));
    const k = applyRope(g, rope, splitHeads(g, g.node("MatMul", [normed, wk]), KV, D));
    const v = splitHeads(g, g.node("MatMul", [normed, wv]), KV, D);
    const presentK = g.node("Concat", [`past_key_values.${l}.key`, k], { axis: 2 }, `present.${l}.key`);
    const presentV = g.node("Concat", [`past_key_values.${l}.value`, v], { axis: 2 }, `present.${l}.value`);
    g.output(presentK, FLOAT, ["batch_size", KV, "total_sequence_length", D]);
    g.output(presentV, FLOAT, ["batch_size", KV, "total_sequence_length", D]);
    g.output(g.node("Identity", [k], {}, `new_key_values.${l}.key`), FLOAT, ["batch_size", KV, "sequence_length", D]);
    g.output(g.node("Identity", [v], {}, `new_key_values.${l}.value`), FLOAT, ["batch_size", KV, "sequence_length", D]);

    // Grouped-query attention without repeating the cache: the G query heads of a KV head are stacked as G·S rows
    // (`[B, KV, G·S, D]`, head h = kv·G + g), so K and V are read as they are instead of copied G times per step.
    const groupedQ = g.node("Reshape", [q, g.ints([0, KV, -1, D])]);
    const scores = g.node("Mul", [
      g.node("MatMul", [groupedQ, g.node("Transpose", [presentK], { perm: [0, 1, 3, 2] })]),
      g.float(1 / Math.sqrt(D), "attn_scale"),
    ]);
    const probs = g.node("Softmax", [g.node("Add", [scores, groupedMask])], { axis: -1 });
    const grouped = g.node("MatMul", [probs, presentV]); // [B, KV, G·S, D]
    const context = g.node("Transpose", [g.node("Reshape", [grouped, g.ints([0, H, -1, D])])], { perm: [0, 2, 1, 3] });
    const merged = g.node("Reshape", [context, g.ints([0, 0, H * D])]);
    x = g.node("Add", [x, g.node("MatMul", [merged, wo])]);

    const normed2 = rmsNorm(g, p, x, g.floatTensor(`${prefix}.post_attention_layernorm.weight`, [hidden], lw.postAttentionLayernorm));
    const gate = g.node("MatMul", [normed2, g.floatTensor(`${prefix}.mlp.gate_proj.weight`, [hidden, p.intermediateSize], lw.gateProj)]);
    const up = g.node("MatMul", [normed2, g.floatTensor(`${prefix}.mlp.up_proj.weight`, [hidden, p.intermediateSize], lw.upProj)]);
    const act = g.node("Mul", [g.node("Mul", [gate, g.node("Sigmoid", [gate])]), up]);
    const down = g.node("MatMul", [act, g.floatTensor(`${prefix}.mlp.down_proj.weight`, [p.intermediateSize, hidden], lw.downProj)]);
    x = g.node("Add", [x, down]);
  });

  if (p.lastPositionLogits) {
    // Left padding puts every row's last token at the last position; Slice keeps the rank ([B, 1, hidden]).
    x = g.node("Slice", [x, g.ints([-1]), g.ints([Number.MAX_SAFE_INTEGER]), g.ints([1])]);
  }
  const final = rmsNorm(g, p, x, g.floatTensor("model.norm.weight", [hidden], w.norm));
  lmHead ??= g.floatTensor("lm_head.weight", [hidden, V], w.lmHead);
  const rawLogits = g.node("MatMul", [final, lmHead]);
  g.node("Add", [rawLogits, g.floatTensor("lm_head.bias_shaping", [V], bias)], {}, "logits");
  g.output("logits", FLOAT, ["batch_size", p.lastPositionLogits ? 1 : "sequence_length", V]);

  return g.encode(`rollout-lab-${p.name}`, BUILDER_VERSION);
}

/**
 * Causal + padding additive bias `[B, 1, S, T]`, valid for prefill, one-token steps and left padding: query i sits
 * at absolute position P + i (P = T − S past tokens) and may see key j when j ≤ P + i and attention_mask[j] = 1.
 * Float arithmetic (allowed − 1) × 1e9 instead of And/Where.
 */
function buildMaskBias(g: OnnxGraphBuilder, inputIds: string, attentionMask: string): string {
  const one = g.ints([1], true);
  const zero = g.ints([0], true);
  const total = g.node("Gather", [g.node("Shape", [attentionMask]), one], { axis: 0 });
  const fresh = g.node("Gather", [g.node("Shape", [inputIds]), one], { axis: 0 });
  const past = g.node("Sub", [total, fresh]);
  const keyPos = g.node("Range", [zero, total, one]); // [T]
  const queryPos = g.node("Unsqueeze", [g.node("Range", [past, total, one]), g.ints([1])]); // [S, 1]
  const causal = g.node("Cast", [g.node("LessOrEqual", [keyPos, queryPos])], { to: FLOAT }); // [S, T]
  const padding = g.node("Unsqueeze", [g.node("Cast", [attentionMask], { to: FLOAT }), g.ints([1, 2])]); // [B,1,1,T]
  const allowed = g.node("Mul", [causal, padding]); // [B, 1, S, T]
  return g.node("Mul", [g.node("Sub", [allowed, g.float(1, "one")]), g.float(MASK_NEGATIVE, "mask_negative")]);
}

/** cos/sin of position × inv_freq `[B, 1, S, D]`, shared by every layer (HF Llama RoPE). */
function buildRope(g: OnnxGraphBuilder, p: ModelPreset, positionIds: string): Rope {
  const invFreq = g.floatTensor("rotary.inv_freq_cat", [p.headDim], ropeInvFreq(p));
  const rotateHalf = g.floatTensor("rotary.rotate_half", [p.headDim, p.headDim], rotateHalfMatrix(p.headDim));
  const positions = g.node("Unsqueeze", [g.node("Cast", [positionIds], { to: FLOAT }), g.ints([2])]); // [B, S, 1]
  const freqs = g.node("Mul", [positions, invFreq]); // [B, S, D]
  const cos = g.node("Unsqueeze", [g.node("Cos", [freqs]), g.ints([1])]);
  const sin = g.node("Unsqueeze", [g.node("Sin", [freqs]), g.ints([1])]);
  return { cos, sin, rotateHalf };
}

/** x' = x·cos + rotate_half(x)·sin, with rotate_half as a MatMul by the signed permutation matrix. */
function applyRope(g: OnnxGraphBuilder, rope: Rope, x: string): string {
  const rotated = g.node("MatMul", [x, rope.rotateHalf]);
  return g.node("Add", [g.node("Mul", [x, rope.cos]), g.node("Mul", [rotated, rope.sin])]);
}

/** `[B, S, heads·D]` → `[B, heads, S, D]`. */
function splitHeads(g: OnnxGraphBuilder, x: string, heads: number, D: number): string {
  return g.node("Transpose", [g.node("Reshape", [x, g.ints([0, 0, heads, D])])], { perm: [0, 2, 1, 3] });
}

/** x · 1/√(mean(x²) + eps) · weight over the last axis. */
function rmsNorm(g: OnnxGraphBuilder, p: ModelPreset, x: string, weight: string): string {
  const meanSquare = g.node("ReduceMean", [g.node("Mul", [x, x])], { axes: [-1], keepdims: 1 });
  const inv = g.node("Reciprocal", [g.node("Sqrt", [g.node("Add", [meanSquare, g.float(p.rmsNormEps, "rms_eps")])])]);
  return g.node("Mul", [g.node("Mul", [x, inv]), weight]);
}
