import { describe, expect, it } from "vitest";
import { VOCAB_SIZE } from "../../core/tokenizer/byte-level.js";
import { buildModelFiles } from "./build.js";
import { parameterCount, TRAINED_PRESET, trainedPreset } from "./presets.js";
import { encodeWeightsFile, parseWeightsFile, vocabularyMetadata, WEIGHTS_FORMAT } from "./weights-file.js";
import { sampleWeights, SMALL_ARCHITECTURE } from "./trained-weights.fixture.js";

/** Rewrites a file's header JSON (the tensor bytes stay), for the malformed-file cases. */
function withHeader(file: Uint8Array, edit: (header: Record<string, Record<string, unknown>>) => void): Uint8Array {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const length = Number(view.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(file.subarray(8, 8 + length)));
  edit(header);
  const text = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(8 + text.byteLength + file.byteLength - 8 - length);
  new DataView(out.buffer).setBigUint64(0, BigInt(text.byteLength), true);
  out.set(text, 8);
  out.set(file.subarray(8 + length), 8 + text.byteLength);
  return out;
}

describe("the weights file", () => {
  it("round-trips untied and tied weights exactly, with the architecture and the writer's metadata", () => {
    for (const tie of [false, true]) {
      const architecture = { ...SMALL_ARCHITECTURE, tieWordEmbeddings: tie };
      const weights = sampleWeights(architecture);
      const file = encodeWeightsFile(architecture, weights, { training: "{\"steps\": 3}" });
      expect(file.byteLength).toBeGreaterThan(4 * parameterCount(trainedPreset(architecture)));
      const read = parseWeightsFile(file);
      expect(read.architecture).toEqual(architecture);
      expect(read.metadata).toMatchObject({ format: WEIGHTS_FORMAT, training: "{\"steps\": 3}" });
      expect(read.weights).toEqual(weights);
      expect(read.merges).toEqual([]);
    }
    const merged = { ...SMALL_ARCHITECTURE, vocabSize: VOCAB_SIZE + 2 };
    const read = parseWeightsFile(encodeWeightsFile(merged, sampleWeights(merged), { vocabulary: vocabularyMetadata([["a", "b"], ["ab", "Ġ"]]) }));
    expect(read.merges).toEqual([["a", "b"], ["ab", "Ġ"]]);
  });

  it("keeps PyTorch's [out, in] layout and Hugging Face's names in the file", () => {
    const weights = sampleWeights(SMALL_ARCHITECTURE);
    const file = encodeWeightsFile(SMALL_ARCHITECTURE, weights);
    const length = Number(new DataView(file.buffer).getBigUint64(0, true));
    const header = JSON.parse(new TextDecoder().decode(file.subarray(8, 8 + length)));
    expect(header["model.layers.0.self_attn.q_proj.weight"].shape).toEqual([32, 32]);
    expect(header["model.layers.1.self_attn.k_proj.weight"].shape).toEqual([16, 32]);
    expect(header["model.layers.1.mlp.down_proj.weight"].shape).toEqual([32, 64]);
    expect(header["lm_head.weight"].shape).toEqual([VOCAB_SIZE, 32]);
    // PyTorch's k_proj.weight[o][i] is the ONNX operand's [i][o].
    const { data_offsets: [start] } = header["model.layers.0.self_attn.k_proj.weight"];
    const first = new DataView(file.buffer, 8 + length + start);
    expect(first.getFloat32(4 * 1, true)).toBe(weights.layers[0]!.kProj[1 * 16 + 0]); // [o=0][i=1]
    expect(first.getFloat32(4 * 32, true)).toBe(weights.layers[0]!.kProj[0 * 16 + 1]); // [o=1][i=0]
  });

  it("names the tensor and what is wrong with it", () => {
    const file = encodeWeightsFile(SMALL_ARCHITECTURE, sampleWeights(SMALL_ARCHITECTURE));
    const fails = (bytes: Uint8Array, message: RegExp) => expect(() => parseWeightsFile(bytes, "w.safetensors")).toThrow(message);
    fails(withHeader(file, (h) => delete h["model.layers.1.mlp.up_proj.weight"]), /w\.safetensors: tensor model\.layers\.1\.mlp\.up_proj\.weight is missing/);
    fails(withHeader(file, (h) => (h["model.norm.weight"]!.shape = [31])), /tensor model\.norm\.weight: shape \[31\], expected \[32\]/);
    fails(withHeader(file, (h) => (h["model.norm.weight"]!.dtype = "F16")), /tensor model\.norm\.weight: dtype F16, expected F32/);
    fails(withHeader(file, (h) => (h["model.layers.2.mlp.up_proj.weight"] = h["model.norm.weight"]!)), /tensor model\.layers\.2\.mlp\.up_proj\.weight is not part of this architecture/);
    fails(withHeader(file, (h) => (h["lm_head.weight"]!.data_offsets = [0, 8])), /tensor lm_head\.weight: data_offsets \[0, 8\] do not hold 8480 float32 values/);
    fails(withHeader(file, (h) => (h.__metadata__!.format = "other")), /__metadata__\.format: expected "rollout-lab-llama-weights\/1"/);
    const config = (edit: Record<string, unknown>) => (h: Record<string, Record<string, unknown>>) =>
      (h.__metadata__!.config = JSON.stringify({ ...JSON.parse(h.__metadata__!.config as string), ...edit }));
    fails(withHeader(file, config({ vocab_size: 300 })), /config\.vocab_size: expected 265 \(the byte-level vocabulary\), got 300/);
    fails(withHeader(file, (h) => (h.__metadata__!.vocabulary = "[")), /w\.safetensors: __metadata__\.vocabulary is not JSON/);
    fails(withHeader(file, (h) => (h.__metadata__!.vocabulary = JSON.stringify({ merges: [["ab", "c"]] }))), /__metadata__\.vocabulary\.merges\[0\]: "ab" is neither a byte nor an earlier merge's token/);
    // Merges the architecture has no room for: one id each.
    fails(withHeader(file, (h) => (h.__metadata__!.vocabulary = JSON.stringify({ merges: [["a", "b"]] }))), /vocab_size: expected 266 \(the byte-level vocabulary and 1 merges\), got 265/);
    fails(withHeader(file, config({ num_key_value_heads: 3 })), /4 heads are not a multiple of 3 KV heads/);
    fails(withHeader(file, config({ hidden_size: 0 })), /config\.hidden_size: expected a positive integer, got 0/);
    fails(file.subarray(0, 4), /too short/);

    const nan = file.slice();
    const length = Number(new DataView(nan.buffer).getBigUint64(0, true));
    const header = JSON.parse(new TextDecoder().decode(nan.subarray(8, 8 + length)));
    new DataView(nan.buffer).setFloat32(8 + length + header["model.layers.0.self_attn.o_proj.weight"].data_offsets[0] + 4 * 5, NaN, true);
    fails(nan, /tensor model\.layers\.0\.self_attn\.o_proj\.weight: value 5 is NaN/);
  });
});

describe("the trained preset", () => {
  it("is the issue's architecture with no EOS or marker bias, and is not built from a seed", () => {
    expect(TRAINED_PRESET).toMatchObject({ hiddenSize: 128, numLayers: 4, numHeads: 4, numKvHeads: 2, vocabSize: VOCAB_SIZE, eosBias: 0, markerBias: 0 });
    expect(parameterCount(TRAINED_PRESET)).toBe(855_424);
    expect(() => buildModelFiles(TRAINED_PRESET)).toThrow(/built from a weights file/);
  });
});
