/**
 * An independent float64 forward pass of the built-in decoder (one unpadded sequence, positions 0…S−1), written
 * from the HF Llama definition rather than from the graph: RoPE with an index-based rotate_half, GQA by head index.
 * Tests compare the ONNX logits with it.
 */

import { shapingBias } from "./logit-shaping.js";
import type { ModelPreset } from "./presets.js";
import type { ModelWeights } from "./weights.js";

export interface ReferenceInput {
  preset: ModelPreset;
  weights: ModelWeights;
  ids: readonly number[];
  /** The logit-shaping bias `[V]` (default: the byte-level presets' `shapingBias`). */
  bias?: Float32Array;
}

/** `a [rows, inner] · b [inner, out]` in float64. */
function matmul(a: Float64Array, b: Float32Array, rows: number, inner: number, out: number): Float64Array {
  const c = new Float64Array(rows * out);
  for (let r = 0; r < rows; r++) {
    for (let k = 0; k < inner; k++) {
      const av = a[r * inner + k]!;
      if (av === 0) continue;
      for (let o = 0; o < out; o++) c[r * out + o]! += av * b[k * out + o]!;
    }
  }
  return c;
}

function rmsNorm(x: Float64Array, rows: number, width: number, weight: Float32Array, eps: number): Float64Array {
  const out = new Float64Array(x.length);
  for (let r = 0; r < rows; r++) {
    let sum = 0;
    for (let i = 0; i < width; i++) sum += x[r * width + i]! ** 2;
    const inv = 1 / Math.sqrt(sum / width + eps);
    for (let i = 0; i < width; i++) out[r * width + i] = x[r * width + i]! * inv * weight[i]!;
  }
  return out;
}

/** In-place HF RoPE on `[S, heads·D]`: x·cos + rotate_half(x)·sin, rotate_half(x) = (−x₂, x₁). */
function rope(x: Float64Array, S: number, heads: number, D: number, theta: number): void {
  const half = D / 2;
  for (let s = 0; s < S; s++) {
    for (let h = 0; h < heads; h++) {
      const base = s * heads * D + h * D;
      const v = x.slice(base, base + D);
      for (let d = 0; d < D; d++) {
        const angle = s / Math.pow(theta, (2 * (d % half)) / D);
        const rotated = d < half ? -v[d + half]! : v[d - half]!;
        x[base + d] = v[d]! * Math.cos(angle) + rotated * Math.sin(angle);
      }
    }
  }
}

/** Logits `[S][V]` (shaping bias included). */
export function referenceForward({ preset: p, weights: w, ids, bias = shapingBias(p) }: ReferenceInput): Float64Array[] {
  const S = ids.length;
  const { hiddenSize: hidden, headDim: D, numHeads: H, numKvHeads: KV, intermediateSize: m, vocabSize: V } = p;
  const groups = H / KV;
  let x = new Float64Array(S * hidden);
  ids.forEach((id, s) => {
    for (let i = 0; i < hidden; i++) x[s * hidden + i] = w.embedTokens ? w.embedTokens[id * hidden + i]! : w.lmHead[i * V + id]!;
  });

  for (const lw of w.layers) {
    const normed = rmsNorm(x, S, hidden, lw.inputLayernorm, p.rmsNormEps);
    const q = matmul(normed, lw.qProj, S, hidden, H * D);
    const k = matmul(normed, lw.kProj, S, hidden, KV * D);
    const v = matmul(normed, lw.vProj, S, hidden, KV * D);
    rope(q, S, H, D, p.ropeTheta);
    rope(k, S, KV, D, p.ropeTheta);
    const context = new Float64Array(S * H * D);
    for (let h = 0; h < H; h++) {
      const kv = Math.floor(h / groups);
      for (let i = 0; i < S; i++) {
        const scores = new Float64Array(i + 1);
        let max = -Infinity;
        for (let j = 0; j <= i; j++) {
          let dot = 0;
          for (let d = 0; d < D; d++) dot += q[i * H * D + h * D + d]! * k[j * KV * D + kv * D + d]!;
          scores[j] = dot / Math.sqrt(D);
          max = Math.max(max, scores[j]!);
        }
        let total = 0;
        for (let j = 0; j <= i; j++) total += scores[j] = Math.exp(scores[j]! - max);
        for (let j = 0; j <= i; j++) {
          const weight = scores[j]! / total;
          for (let d = 0; d < D; d++) context[i * H * D + h * D + d]! += weight * v[j * KV * D + kv * D + d]!;
        }
      }
    }
    const attn = matmul(context, lw.oProj, S, H * D, hidden);
    x = x.map((xv, i) => xv + attn[i]!);

    const normed2 = rmsNorm(x, S, hidden, lw.postAttentionLayernorm, p.rmsNormEps);
    const gate = matmul(normed2, lw.gateProj, S, hidden, m);
    const up = matmul(normed2, lw.upProj, S, hidden, m);
    const act = gate.map((g, i) => (g / (1 + Math.exp(-g))) * up[i]!);
    const down = matmul(act, lw.downProj, S, m, hidden);
    x = x.map((xv, i) => xv + down[i]!);
  }

  const logits = matmul(rmsNorm(x, S, hidden, w.norm, p.rmsNormEps), w.lmHead, S, hidden, V);
  return Array.from({ length: S }, (_, s) => logits.slice(s * V, (s + 1) * V).map((l, t) => l + bias[t]!));
}
