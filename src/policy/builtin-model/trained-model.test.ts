/**
 * The trained preset's folder, built from weights files (seeded ones written by the TypeScript writer, and a file
 * PyTorch exported: `fixtures/torch-trained.*`), loaded with transformers.js on onnxruntime-node as the policy
 * loads it, and held to the float64 reference forward pass (and to PyTorch's own logits) within 1e-4.
 */

import { AutoModelForCausalLM, AutoTokenizer, env, Tensor, type PreTrainedModel } from "@huggingface/transformers";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderChatTemplate } from "../../core/protocol/chat-template.js";
import { ByteLevelTokenizer, EOS_TOKEN_ID, VOCAB_SIZE } from "../../core/tokenizer/byte-level.js";
import { allowedTokenIds, shapingBias } from "./logit-shaping.js";
import { trainedPreset, type TrainedArchitecture } from "./presets.js";
import { referenceForward } from "./reference.js";
import { TRAINED_MODEL_FILE_PATHS } from "./trained-model.js";
import { sampleWeights, SMALL_ARCHITECTURE } from "./trained-weights.fixture.js";
import type { Merge } from "./merges.js";
import { encodeWeightsFile, parseWeightsFile, vocabularyMetadata } from "./weights-file.js";
import type { ModelWeights } from "./weights.js";
import { TRAINED_MODEL_ID, writeTrainedModel } from "./write-folder.js";

const ALLOWED = [...new Set(allowedTokenIds())];
const FIXTURES = join(import.meta.dirname, "fixtures");
const tokenizer = new ByteLevelTokenizer();

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "builtin-trained-"));
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.localModelPath = root;
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Writes the folder from a weights file and loads it (a fresh root each time: transformers.js caches by id). */
async function loadTrained(weightsPath: string): Promise<PreTrainedModel> {
  root = mkdtempSync(join(tmpdir(), "builtin-trained-"));
  env.localModelPath = root;
  writeTrainedModel(root, weightsPath);
  return AutoModelForCausalLM.from_pretrained(TRAINED_MODEL_ID, { dtype: "fp32", device: "cpu" });
}

async function lastLogits(model: PreTrainedModel, ids: readonly number[]): Promise<Float32Array> {
  const input = new Tensor("int64", BigInt64Array.from(ids, (v) => BigInt(v)), [1, ids.length]);
  const mask = new Tensor("int64", new BigInt64Array(ids.length).fill(1n), [1, ids.length]);
  const out = (await model({ input_ids: input, attention_mask: mask })) as { logits: Tensor };
  const V = out.logits.dims[2]!;
  return (out.logits.data as Float32Array).slice((ids.length - 1) * V);
}

function maxDiffOverAllowed(a: ArrayLike<number>, b: ArrayLike<number>, allowed: readonly number[] = ALLOWED): number {
  return Math.max(...allowed.map((id) => Math.abs(a[id]! - b[id]!)));
}

async function expectMatchesReference(architecture: TrainedArchitecture, weights: ModelWeights, weightsPath: string, merges: readonly Merge[] = []): Promise<void> {
  const model = await loadTrained(weightsPath);
  const allowed = allowedTokenIds(merges);
  try {
    const ids = tokenizer.encode(renderChatTemplate([{ role: "user", content: "Solve: (3 + 5) * 2 <think>" }], { addGenerationPrompt: true }));
    const onnx = await lastLogits(model, ids);
    expect(onnx).toHaveLength(architecture.vocabSize);
    const reference = referenceForward({ preset: trainedPreset(architecture, merges), weights, ids }).at(-1)!;
    expect(maxDiffOverAllowed(onnx, reference, allowed)).toBeLessThan(1e-4);
    // Blocked ids stay blocked (float32 cannot resolve 1e-4 at −1e4).
    for (let id = 0; id < onnx.length; id++) if (!allowed.includes(id)) expect(onnx[id]).toBeLessThan(-9000);
  } finally {
    await model.dispose();
  }
}

describe("the trained preset's folder in transformers.js", () => {
  it("writes the byte-level files, a README and the stamp; a second write of the same file is skipped", () => {
    const dir = mkdtempSync(join(tmpdir(), "builtin-trained-write-"));
    try {
      const path = join(dir, "w.safetensors");
      writeFileSync(path, encodeWeightsFile(SMALL_ARCHITECTURE, sampleWeights(SMALL_ARCHITECTURE)));
      const first = writeTrainedModel(dir, path);
      expect(first.files.map((f) => f.path)).toEqual([...TRAINED_MODEL_FILE_PATHS]);
      const config = JSON.parse(readFileSync(join(first.dir, "config.json"), "utf8"));
      expect(config).toMatchObject({ hidden_size: 32, num_hidden_layers: 2, num_key_value_heads: 2, eos_token_id: EOS_TOKEN_ID });
      expect(readFileSync(join(first.dir, "README.md"), "utf8")).toMatch(/trained weights[\s\S]*w\.safetensors/);
      expect(writeTrainedModel(dir, path).written).toBe(false);
      writeFileSync(path, encodeWeightsFile(SMALL_ARCHITECTURE, sampleWeights(SMALL_ARCHITECTURE, 2)));
      expect(writeTrainedModel(dir, path).written).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("has no EOS or marker bias: the graph adds only the blocking", () => {
    const bias = shapingBias(trainedPreset(SMALL_ARCHITECTURE));
    for (const id of ALLOWED) expect(bias[id]).toBe(0);
  });

  it("matches the float64 forward pass within 1e-4, untied and tied", async () => {
    for (const tie of [false, true]) {
      const architecture = { ...SMALL_ARCHITECTURE, tieWordEmbeddings: tie };
      const weights = sampleWeights(architecture, 5);
      const dir = mkdtempSync(join(tmpdir(), "builtin-trained-file-"));
      try {
        const path = join(dir, "w.safetensors");
        writeFileSync(path, encodeWeightsFile(architecture, weights));
        await expectMatchesReference(architecture, weights, path);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });

  it("builds a file with merges of its own: their tokenizer.json, one logit per merged token, the reference's logits", async () => {
    // "ab" (265), "abc" (266) and "\t\t" (267, tabs: never emitted, so blocked).
    const merges: Merge[] = [["a", "b"], ["ab", "c"], ["ĉ", "ĉ"]];
    const architecture = { ...SMALL_ARCHITECTURE, vocabSize: VOCAB_SIZE + merges.length };
    const weights = sampleWeights(architecture, 7);
    const dir = mkdtempSync(join(tmpdir(), "builtin-trained-merges-"));
    try {
      const path = join(dir, "w.safetensors");
      writeFileSync(path, encodeWeightsFile(architecture, weights, { vocabulary: vocabularyMetadata(merges) }));
      expect(allowedTokenIds(merges)).toEqual([...ALLOWED, 265, 266]);
      await expectMatchesReference(architecture, weights, path, merges);
      const folder = join(root, TRAINED_MODEL_ID);
      expect(JSON.parse(readFileSync(join(folder, "tokenizer.json"), "utf8")).model.merges).toEqual(["a b", "ab c", "ĉ ĉ"]);
      expect(readFileSync(join(folder, "README.md"), "utf8")).toMatch(/3 byte-pair merges of its own/);
      const hf = await AutoTokenizer.from_pretrained(TRAINED_MODEL_ID);
      expect(hf.encode("abcab\t\t", { add_special_tokens: false })).toEqual([266, 265, 267]);
      // A file whose vocabulary size does not match its merges is refused, naming both.
      writeFileSync(path, encodeWeightsFile(SMALL_ARCHITECTURE, sampleWeights(SMALL_ARCHITECTURE), { vocabulary: vocabularyMetadata(merges) }));
      expect(() => writeTrainedModel(dir, path, true)).toThrow(/vocab_size: expected 268 \(the byte-level vocabulary and 3 merges\), got 265/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("builds PyTorch's exported file and gives PyTorch's logits within 1e-4 (training/ wrote the fixture)", async () => {
    const path = join(FIXTURES, "torch-trained.safetensors");
    const expected = JSON.parse(readFileSync(join(FIXTURES, "torch-trained.logits.json"), "utf8")) as { ids: number[]; logits: number[][] };
    const { architecture, weights } = parseWeightsFile(readFileSync(path), path);
    const model = await loadTrained(path);
    try {
      // Every prefix's last position, so each position's torch logits are compared (the graph gives all).
      for (let end = 1; end <= expected.ids.length; end++) {
        const onnx = await lastLogits(model, expected.ids.slice(0, end));
        expect(maxDiffOverAllowed(onnx, expected.logits[end - 1]!)).toBeLessThan(1e-4);
      }
      const reference = referenceForward({ preset: trainedPreset(architecture), weights, ids: expected.ids });
      expect(maxDiffOverAllowed(reference.at(-1)!, expected.logits.at(-1)!)).toBeLessThan(1e-4);
    } finally {
      await model.dispose();
    }
  });
});
