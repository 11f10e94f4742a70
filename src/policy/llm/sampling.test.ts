import { describe, expect, it } from "vitest";
import { Rng } from "../../core/index.js";
import { logSoftmax, sampleToken } from "./model-policy.js";
import { checkDtype, resolveModelSource } from "./model-source.js";

const logits = Float32Array.from([Math.log(0.5), Math.log(0.3), Math.log(0.15), Math.log(0.05)]);
const draws = (settings: Parameters<typeof sampleToken>[1], n = 4000) => {
  const rng = new Rng(1);
  const counts = [0, 0, 0, 0];
  for (let i = 0; i < n; i++) counts[sampleToken(logits, settings, rng)]! += 1;
  return counts.map((c) => c / n);
};

describe("sampling", () => {
  it("follows the raw distribution at temperature 1", () => {
    const freq = draws({});
    [0.5, 0.3, 0.15, 0.05].forEach((p, i) => expect(Math.abs(freq[i]! - p)).toBeLessThan(0.03));
  });
  it("top-k keeps the k most likely tokens, renormalised", () => {
    const freq = draws({ top_k: 2 });
    expect(freq[2]).toBe(0);
    expect(freq[3]).toBe(0);
    expect(Math.abs(freq[0]! - 0.625)).toBeLessThan(0.03);
  });
  it("top-k keeps every token tied with the k-th (as HF's and vLLM's do): equal logits get equal chances", () => {
    const tied = Float32Array.from([3, 2, 2, 2, 1]);
    const rng = new Rng(3);
    const counts = [0, 0, 0, 0, 0];
    for (let i = 0; i < 8000; i++) counts[sampleToken(tied, { top_k: 2 }, rng)]! += 1;
    const [p0, p1] = [Math.exp(3) / (Math.exp(3) + 3 * Math.exp(2)), Math.exp(2) / (Math.exp(3) + 3 * Math.exp(2))];
    [p0, p1, p1, p1, 0].forEach((p, i) => expect(Math.abs(counts[i]! / 8000 - p)).toBeLessThan(0.03));
  });
  it("a vanishing temperature is greedy, never the least likely token", () => {
    const rng = new Rng(4);
    for (const temperature of [1e-300, 1e-310, Number.MIN_VALUE]) expect(sampleToken(Float32Array.from([1, 2, 3, -5]), { temperature }, rng)).toBe(2);
  });
  it("top-p keeps the smallest set whose mass reaches p (transformers.js ignores top_p; this does not)", () => {
    const freq = draws({ top_p: 0.8 });
    expect(freq[2]).toBe(0);
    expect(freq[3]).toBe(0);
    expect(Math.abs(freq[1]! - 0.375)).toBeLessThan(0.03);
  });
  it("temperature sharpens and flattens; 0 is greedy", () => {
    expect(draws({ temperature: 0.25 })[0]).toBeGreaterThan(0.8);
    expect(draws({ temperature: 4 })[3]).toBeGreaterThan(0.15);
    expect(draws({ temperature: 0 })).toEqual([1, 0, 0, 0]);
  });
  it("is reproducible for a seed", () => {
    const a = Array.from({ length: 20 }, (_, i) => sampleToken(logits, {}, Rng.derive(3, i)));
    const b = Array.from({ length: 20 }, (_, i) => sampleToken(logits, {}, Rng.derive(3, i)));
    expect(a).toEqual(b);
  });
  it("log-softmax is normalised", () => {
    const total = [...logSoftmax(logits)].reduce((s, x) => s + Math.exp(x), 0);
    expect(total).toBeCloseTo(1, 6);
  });
});

describe("model sources and dtype checks", () => {
  it("resolves built-in names, hub ids, picked folders and paths", () => {
    expect(resolveModelSource("builtin:small")).toMatchObject({ kind: "builtin", id: "builtin/small" });
    expect(resolveModelSource("onnx-community/Qwen3-0.6B-ONNX")).toMatchObject({ kind: "hub", id: "onnx-community/Qwen3-0.6B-ONNX" });
    expect(resolveModelSource("local:my model")).toMatchObject({ kind: "local", id: "local/my_model" });
    expect(resolveModelSource("./models/x")).toMatchObject({ kind: "local", path: "./models/x" });
  });
  it("refuses fp16 on WebGPU without shader-f16, and non-fp32 built-ins", () => {
    const hub = resolveModelSource("org/name");
    expect(() => checkDtype(hub, "fp16", { device: "webgpu", shaderF16: false })).toThrow(/needs the WebGPU feature 'shader-f16'/);
    expect(() => checkDtype(hub, "q4f16", { device: "webgpu", shaderF16: false })).toThrow(/shader-f16/);
    expect(() => checkDtype(hub, "q2f16", { device: "webgpu", shaderF16: false })).toThrow(/shader-f16/);
    expect(() => checkDtype(hub, "q2", { device: "webgpu", shaderF16: false })).not.toThrow();
    expect(() => checkDtype(hub, "fp16", { device: "webgpu", shaderF16: true })).not.toThrow();
    expect(() => checkDtype(hub, "q4", { device: "wasm", shaderF16: false })).not.toThrow();
    expect(() => checkDtype(resolveModelSource("builtin:tiny"), "q8", { device: "wasm", shaderF16: false })).toThrow(/fp32 weights only/);
  });
});

describe("sampling a real vocabulary's row", () => {
  /** The comparator the sampler's order must equal: descending logit, equal logits by index, non-finite left out. */
  const reference = (row: Float32Array) =>
    Array.from(row.keys())
      .filter((i) => Number.isFinite(row[i]!))
      .sort((a, b) => row[b]! - row[a]! || a - b);

  it("orders tokens exactly as the comparator would: ties by index, -0 with +0, masked ones left out", async () => {
    const { descendingOrder } = await import("./processors.js");
    const rng = new Rng(5);
    const row = new Float32Array(30_000);
    for (let i = 0; i < row.length; i++) {
      const r = rng.next();
      // Many exact ties, both zeros, huge and tiny magnitudes, masks.
      row[i] = r < 0.1 ? -Infinity : r < 0.15 ? Number.NaN : r < 0.2 ? -0 : r < 0.25 ? 0 : r < 0.5 ? Math.round(rng.next() * 8) - 4 : (rng.next() - 0.5) * 1e30 * rng.next() ** 8;
    }
    expect(Array.from(descendingOrder(row))).toEqual(reference(row));
  });

  it("draws only allowed tokens from a Qwen3-sized row, reproducibly", () => {
    const rng = new Rng(9);
    const row = new Float32Array(151_936);
    for (let i = 0; i < row.length; i++) row[i] = i % 3 === 0 ? -1e4 : (rng.next() - 0.5) * 6;
    const draw = () => Array.from({ length: 5 }, (_, i) => sampleToken(row, { top_p: 0.95, top_k: 0 }, Rng.derive(4, i)));
    const first = draw();
    expect(draw()).toEqual(first);
    for (const id of first) expect(row[id]).toBeGreaterThan(-10);
  });
});
