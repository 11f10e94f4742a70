/**
 * Seeded weights of the built-in decoder (browser-inference.md §6.6). Integer-only draws plus one float multiply, so
 * the same seed gives bit-identical weights on every JS engine (no Math.log/cos as in Box–Muller).
 */

import type { ModelPreset } from "./presets.js";

/** Linear weights are stored as ONNX MatMul operands, i.e. transposed relative to PyTorch: `[in, out]`. */
export interface LayerWeights {
  inputLayernorm: Float32Array; // [hidden]
  qProj: Float32Array; // [hidden, H·D]
  kProj: Float32Array; // [hidden, KV·D]
  vProj: Float32Array; // [hidden, KV·D]
  oProj: Float32Array; // [H·D, hidden]
  postAttentionLayernorm: Float32Array; // [hidden]
  gateProj: Float32Array; // [hidden, intermediate]
  upProj: Float32Array; // [hidden, intermediate]
  downProj: Float32Array; // [intermediate, hidden]
}

export interface ModelWeights {
  /** Null when the preset ties it to the LM head (the embedding of id t is then column t of `lmHead`). */
  embedTokens: Float32Array | null; // [V, hidden]
  layers: LayerWeights[];
  norm: Float32Array; // [hidden]
  lmHead: Float32Array; // [hidden, V]
}

/**
 * The 32-bit splitmix-style generator of §6.6: the state starts at the seed and advances by the golden-ratio
 * increment before each draw; the output is the murmur3 finaliser of the state, divided by 2^32.
 */
export class SplitMix32 {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    this.state = (this.state + 0x9e3779b9) >>> 0;
    let z = this.state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return ((z ^ (z >>> 16)) >>> 0) / 4294967296;
  }
}

/** Uniform on [−a, a] with a = std·√3 (so the standard deviation is `std`), filled in row-major order. */
function uniform(rng: SplitMix32, length: number, std: number): Float32Array {
  const a = std * Math.sqrt(3);
  const out = new Float32Array(length);
  for (let i = 0; i < length; i++) out[i] = (2 * rng.next() - 1) * a;
  return out;
}

const ones = (n: number) => new Float32Array(n).fill(1);

/**
 * Draw order: embed_tokens (not for tied presets), then per layer q, k, v, o, gate, up, down, then lm_head (norms
 * draw nothing).
 */
export function generateWeights(p: ModelPreset, seed: number): ModelWeights {
  const rng = new SplitMix32(seed);
  const { vocabSize: V, hiddenSize: h, intermediateSize: m, headDim: D } = p;
  const qOut = p.numHeads * D;
  const kvOut = p.numKvHeads * D;
  const embedTokens = p.tieWordEmbeddings ? null : uniform(rng, V * h, 1);
  const layers: LayerWeights[] = [];
  for (let l = 0; l < p.numLayers; l++) {
    const qProj = uniform(rng, h * qOut, 1 / Math.sqrt(h));
    const kProj = uniform(rng, h * kvOut, 1 / Math.sqrt(h));
    const vProj = uniform(rng, h * kvOut, 1 / Math.sqrt(h));
    const oProj = uniform(rng, qOut * h, 1 / Math.sqrt(qOut));
    const gateProj = uniform(rng, h * m, 1 / Math.sqrt(h));
    const upProj = uniform(rng, h * m, 1 / Math.sqrt(h));
    const downProj = uniform(rng, m * h, 1 / Math.sqrt(m));
    layers.push({
      inputLayernorm: ones(h),
      qProj,
      kProj,
      vProj,
      oProj,
      postAttentionLayernorm: ones(h),
      gateProj,
      upProj,
      downProj,
    });
  }
  // A spread of a few nats, so the argmax is well separated (§6.6).
  const lmHead = uniform(rng, h * V, 3 / Math.sqrt(h));
  return { embedTokens, layers, norm: ones(h), lmHead };
}

/** RoPE constants (HF Llama): inv_freq[i] = θ^(−2i/D) for i < D/2, repeated twice to length D. */
export function ropeInvFreq(p: ModelPreset): Float32Array {
  const D = p.headDim;
  const out = new Float32Array(D);
  for (let i = 0; i < D / 2; i++) out[i] = out[i + D / 2] = 1 / Math.pow(p.ropeTheta, (2 * i) / D);
  return out;
}

/** rotate_half as a matrix R `[D, D]`: (x·R) = concat(−x[D/2:], x[:D/2]), so the graph needs no Slice/Neg. */
export function rotateHalfMatrix(D: number): Float32Array {
  const r = new Float32Array(D * D);
  const half = D / 2;
  for (let j = 0; j < half; j++) r[(j + half) * D + j] = -1;
  for (let j = half; j < D; j++) r[(j - half) * D + j] = 1;
  return r;
}
