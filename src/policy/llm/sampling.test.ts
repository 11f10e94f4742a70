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
    expect(() => checkDtype(hub, "fp16", { device: "webgpu", shaderF16: true })).not.toThrow();
    expect(() => checkDtype(hub, "q4", { device: "wasm", shaderF16: false })).not.toThrow();
    expect(() => checkDtype(resolveModelSource("builtin:tiny"), "q8", { device: "wasm", shaderF16: false })).toThrow(/fp32 weights only/);
  });
});
