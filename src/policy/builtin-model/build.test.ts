import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import onnxProto, { type onnx as Onnx } from "onnx-proto";
import { afterAll, describe, expect, it } from "vitest";
import { ADDED_TOKENS, VOCAB_SIZE } from "../../core/tokenizer/byte-level.js";
import { buildModelFiles, MODEL_FILE_PATHS, STAMP_FILE } from "./build.js";
import { allowedTokenIds, BLOCKED_BIAS, shapingBias } from "./logit-shaping.js";
import { parameterCount, PRESETS } from "./presets.js";
import { bytesToUnicode, tokenizerJson } from "./tokenizer-files.js";
import { SplitMix32 } from "./weights.js";
import { isBuiltinUpToDate, writeBuiltinModel } from "./write-folder.js";

const digest = (files: Map<string, Uint8Array | string>) =>
  [...files].map(([path, data]) => `${path}:${createHash("sha256").update(data).digest("hex")}`).join("\n");

describe("buildModelFiles", () => {
  it("writes every file of the folder, the stamp last", () => {
    expect([...buildModelFiles("tiny", 0).keys()]).toEqual([...MODEL_FILE_PATHS]);
  });

  it("is byte-identical for the same seed and differs for another seed", () => {
    const a = buildModelFiles("tiny", 7);
    const b = buildModelFiles("tiny", 7);
    const c = buildModelFiles("tiny", 8);
    expect(digest(a)).toBe(digest(b));
    expect(a.get("onnx/model.onnx")).not.toEqual(c.get("onnx/model.onnx"));
    expect(a.get("tokenizer.json")).toBe(c.get("tokenizer.json")); // only the weights depend on the seed
  });

  it("builds the tiny preset's ONNX file with every parameter in it", () => {
    const files = buildModelFiles("tiny", 0);
    expect((files.get("onnx/model.onnx") as Uint8Array).byteLength).toBeGreaterThan(4 * parameterCount(PRESETS.tiny));
  });

  it("has the parameter counts of the spec's presets", () => {
    expect(parameterCount(PRESETS.tiny)).toBe(107_968);
    expect(parameterCount(PRESETS.small)).toBe(20_262_528);
  });

  it("writes the config of a llama model that loads as fp32", () => {
    const config = JSON.parse(buildModelFiles("tiny", 0).get("config.json") as string);
    expect(config).toMatchObject({
      model_type: "llama",
      vocab_size: VOCAB_SIZE,
      num_hidden_layers: 2,
      num_key_value_heads: 2,
      head_dim: 16,
      eos_token_id: 258,
      "transformers.js_config": { dtype: "fp32", use_external_data_format: false },
    });
  });
});

describe("onnx/model.onnx", () => {
  const { onnx } = onnxProto;
  const model = onnx.ModelProto.decode(buildModelFiles("tiny", 0).get("onnx/model.onnx") as Uint8Array);
  const graph = model.graph as Onnx.GraphProto;
  const dims = (v: { type?: { tensorType?: { shape?: { dim?: { dimValue?: unknown; dimParam?: string | null }[] | null } | null } | null } | null }) =>
    v.type!.tensorType!.shape!.dim!.map((d) => (d.dimParam ? d.dimParam : Number(d.dimValue)));

  it("is IR 8, opset 17 of the default domain only, with every weight as raw_data", () => {
    expect(Number(model.irVersion)).toBe(8);
    expect(model.opsetImport.map((o) => [o.domain, Number(o.version)])).toEqual([["", 17]]);
    expect(graph.initializer.every((t) => (t.rawData?.byteLength ?? 0) > 0 && !t.floatData?.length)).toBe(true);
    expect(graph.initializer.map((t) => t.name)).toEqual(expect.arrayContaining(["model.embed_tokens.weight", "lm_head.weight", "lm_head.bias_shaping"]));
  });

  it("declares the KV-cache I/O with numeric KV-heads and head_dim dims", () => {
    expect(graph.input.map((v) => [v.name, dims(v)])).toEqual([
      ["input_ids", ["batch_size", "sequence_length"]],
      ["attention_mask", ["batch_size", "total_sequence_length"]],
      ["position_ids", ["batch_size", "sequence_length"]],
      ["past_key_values.0.key", ["batch_size", 2, "past_sequence_length", 16]],
      ["past_key_values.0.value", ["batch_size", 2, "past_sequence_length", 16]],
      ["past_key_values.1.key", ["batch_size", 2, "past_sequence_length", 16]],
      ["past_key_values.1.value", ["batch_size", 2, "past_sequence_length", 16]],
    ]);
    expect(graph.output.map((v) => [v.name, dims(v)])).toEqual([
      ["present.0.key", ["batch_size", 2, "total_sequence_length", 16]],
      ["present.0.value", ["batch_size", 2, "total_sequence_length", 16]],
      ["new_key_values.0.key", ["batch_size", 2, "sequence_length", 16]],
      ["new_key_values.0.value", ["batch_size", 2, "sequence_length", 16]],
      ["present.1.key", ["batch_size", 2, "total_sequence_length", 16]],
      ["present.1.value", ["batch_size", 2, "total_sequence_length", 16]],
      ["new_key_values.1.key", ["batch_size", 2, "sequence_length", 16]],
      ["new_key_values.1.value", ["batch_size", 2, "sequence_length", 16]],
      ["logits", ["batch_size", "sequence_length", VOCAB_SIZE]],
    ]);
  });

  it("uses only the standard ops of the spec's graph", () => {
    const ops = new Set(graph.node.map((n) => n.opType));
    const spec = ["Add", "Cast", "Concat", "Cos", "Gather", "LessOrEqual", "MatMul", "Mul", "Range", "Reciprocal", "ReduceMean"];
    const more = ["Identity", "Reshape", "Shape", "Sigmoid", "Sin", "Softmax", "Sqrt", "Sub", "Transpose", "Unsqueeze"];
    expect([...ops].sort()).toEqual([...spec, ...more].sort());
    expect(graph.node.every((n) => !n.domain)).toBe(true);
  });
});

describe("SplitMix32", () => {
  it("is a fixed sequence in [0, 1) for a seed", () => {
    const a = new SplitMix32(0);
    const b = new SplitMix32(0);
    const draws = Array.from({ length: 1000 }, () => a.next());
    expect(draws).toEqual(Array.from({ length: 1000 }, () => b.next()));
    expect(Math.min(...draws)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...draws)).toBeLessThan(1);
    expect(new SplitMix32(1).next()).not.toBe(draws[0]);
  });
});

describe("tokenizer.json", () => {
  it("maps the 256 bytes through bytes_to_unicode to ids 0–255 and adds the nine markers as 256–264", () => {
    const table = bytesToUnicode();
    expect(new Set(table).size).toBe(256);
    expect(table[0x41]).toBe("A");
    expect(table[0x20]).toBe("Ġ");
    expect(table[0x0a]).toBe("Ċ");
    const json = tokenizerJson() as { model: { vocab: Record<string, number> }; added_tokens: { id: number; content: string; special: boolean }[] };
    expect(Object.entries(json.model.vocab).sort((a, b) => a[1] - b[1])).toEqual(table.map((ch, i) => [ch, i]));
    expect(json.added_tokens.map((t) => [t.id, t.content, t.special])).toEqual(ADDED_TOKENS.map((t) => [t.id, t.content, t.special]));
  });
});

describe("logit shaping", () => {
  it("blocks every token but printable ASCII, newline and the five emitted markers", () => {
    const bias = shapingBias(PRESETS.tiny);
    const allowed = allowedTokenIds();
    expect(allowed).toHaveLength(95 + 1 + 5);
    expect(allowed).toEqual(expect.arrayContaining([0x0a, 0x20, 0x7e, 258, 259, 260, 261, 262]));
    for (let id = 0; id < VOCAB_SIZE; id++) {
      if (allowed.includes(id)) expect(bias[id]).toBeGreaterThanOrEqual(0);
      else expect(bias[id]).toBe(BLOCKED_BIAS);
    }
    expect(bias[258]).toBeGreaterThan(0);
  });
});

describe("writeBuiltinModel", () => {
  const root = mkdtempSync(join(tmpdir(), "builtin-model-write-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("writes <root>/builtin/<preset>/, then skips an up-to-date folder unless forced", () => {
    const first = writeBuiltinModel(root, "tiny", 3);
    expect(first).toMatchObject({ id: "builtin/tiny", dir: join(root, "builtin", "tiny"), written: true });
    expect(first.files.map((f) => f.path)).toEqual([...MODEL_FILE_PATHS]);
    expect(statSync(join(root, "builtin/tiny/onnx/model.onnx")).size).toBe(first.files.find((f) => f.path === "onnx/model.onnx")!.bytes);
    expect(JSON.parse(readFileSync(join(first.dir, STAMP_FILE), "utf8"))).toMatchObject({ preset: "tiny", seed: 3 });

    expect(writeBuiltinModel(root, "tiny", 3).written).toBe(false);
    expect(isBuiltinUpToDate(first.dir, "tiny", 4)).toBe(false);
    expect(writeBuiltinModel(root, "tiny", 3, true).written).toBe(true);
    expect(writeBuiltinModel(root, "tiny", 4).written).toBe(true);
    expect(isBuiltinUpToDate(first.dir, "tiny", 4)).toBe(true);
  });
});
