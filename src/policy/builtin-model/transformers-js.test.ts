/**
 * Loads the built tiny model with transformers.js (onnxruntime-node CPU) exactly as the app does offline, and checks
 * the tokenizer, the chat template, generation, the graph's numerics and the KV cache against the project's own code.
 */

import {
  AutoModelForCausalLM,
  AutoTokenizer,
  env,
  random,
  Tensor,
  type PreTrainedModel,
  type PreTrainedTokenizer,
} from "@huggingface/transformers";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderChatTemplate, type ChatTemplateMessage } from "../../core/protocol/chat-template.js";
import { makeTool, SESSION_TOOLS, type ToolSpec } from "../../core/protocol/registry.js";
import { ByteLevelTokenizer, EOS_TOKEN_ID } from "../../core/tokenizer/byte-level.js";
import { allowedTokenIds } from "./logit-shaping.js";
import { PRESETS } from "./presets.js";
import { referenceForward } from "./reference.js";
import { generateWeights } from "./weights.js";
import { writeBuiltinModel } from "./write-folder.js";

const SEED = 0;
const ID = "builtin/tiny";
const ALLOWED = new Set(allowedTokenIds());
const projectTokenizer = new ByteLevelTokenizer();

let root: string;
let tokenizer: PreTrainedTokenizer;
let model: PreTrainedModel;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "builtin-model-tfjs-"));
  writeBuiltinModel(root, "tiny", SEED);
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.localModelPath = root;
  tokenizer = await AutoTokenizer.from_pretrained(ID);
  model = await AutoModelForCausalLM.from_pretrained(ID, { dtype: "fp32", device: "cpu" });
});

afterAll(async () => {
  await model?.dispose();
  rmSync(root, { recursive: true, force: true });
});

const ids2d = (rows: readonly (readonly number[])[]) =>
  new Tensor("int64", BigInt64Array.from(rows.flat(), (v) => BigInt(v)), [rows.length, rows[0]!.length]);
const ones2d = (rows: number, cols: number) => new Tensor("int64", new BigInt64Array(rows * cols).fill(1n), [rows, cols]);
const rowsOf = (t: Tensor) => (t.tolist() as bigint[][]).map((row) => row.map(Number));
const encode = (text: string) => projectTokenizer.encode(text);

/** Greedy tokens after `prompt`, trimmed after the first EOS (finished batch rows keep generating). */
function trimAtEos(tokens: number[]): number[] {
  const end = tokens.indexOf(EOS_TOKEN_ID);
  return end < 0 ? tokens : tokens.slice(0, end + 1);
}

async function greedy(prompt: readonly number[], maxNewTokens: number, extra: Record<string, unknown> = {}): Promise<number[]> {
  const out = (await model.generate({
    input_ids: ids2d([prompt]),
    attention_mask: ones2d(1, prompt.length),
    max_new_tokens: maxNewTokens,
    do_sample: false,
    ...extra,
  })) as Tensor;
  return rowsOf(out)[0]!.slice(prompt.length);
}

/** Logits `[S][V]` of one unpadded sequence, from a plain forward call (empty past, no cache reuse). */
async function forwardLogits(ids: readonly number[]): Promise<Float32Array[]> {
  const out = (await model({ input_ids: ids2d([ids]), attention_mask: ones2d(1, ids.length) })) as { logits: Tensor };
  const [, S, V] = out.logits.dims as [number, number, number];
  const data = out.logits.data as Float32Array;
  return Array.from({ length: S }, (_, s) => data.slice(s * V, (s + 1) * V));
}

const argmax = (row: ArrayLike<number>, exclude: readonly number[] = []) => {
  let best = -1;
  for (let i = 0; i < row.length; i++) if (!exclude.includes(i) && (best < 0 || row[i]! > row[best]!)) best = i;
  return best;
};

const WEATHER = makeTool("get_weather", "Get the current weather for a city — «météo».", {
  type: "object",
  properties: { city: { type: "string", description: "City name" }, days: { type: "integer" } },
  required: ["city"],
});

const TOOL_CHAT: ChatTemplateMessage[] = [
  { role: "system", content: "You solve tasks with tools." },
  { role: "user", content: "What's the weather in Paris and Zürich?" },
  {
    role: "assistant",
    content: "",
    tool_calls: [{ type: "function", function: { name: "get_weather", arguments: { city: "Paris", days: 2 } } }],
  },
  { role: "tool", content: '{"temp_c": 18, "sky": "cloudy"}' },
  {
    role: "assistant",
    content: "<think>one more</think>Checking Zürich.",
    tool_calls: [
      { function: { name: "get_weather", arguments: { city: "Zürich", ok: true, x: null, f: 1.5, list: [1, "two"] } } },
      { function: { name: "run_shell", arguments: '{"command": "ls"}' } },
    ],
  },
  { role: "tool", content: "21 °C" },
  { role: "tool", content: "README.md\nsrc" },
  { role: "assistant", content: "Paris 18 °C, Zürich 21 °C." },
  { role: "user", content: "Thanks!\n  Bye." },
];

describe("the built tiny model in transformers.js", () => {
  it("tokenizes exactly like the project's ByteLevelTokenizer, markers and non-ASCII included", () => {
    const texts = [
      'héllo <tool_call>{"a": 1}</tool_call> 🤖',
      "<|im_start|>user\n日本語 — ok<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nx<|endoftext|>",
      "<tool_response>\n\t{}  \r\n</tool_response><tool_call",
      renderChatTemplate(TOOL_CHAT, { tools: [WEATHER, ...SESSION_TOOLS.chatTemplateTools()], addGenerationPrompt: true }),
    ];
    for (const text of texts) {
      const ids = tokenizer.encode(text, { add_special_tokens: false });
      expect(ids).toEqual(encode(text));
      expect(tokenizer.encode(text)).toEqual(ids); // no BOS, nothing added
      expect(tokenizer.decode(ids)).toBe(text);
    }
  });

  it("drops only the three ChatML tokens when decoding with skip_special_tokens", () => {
    const text = "<|endoftext|><|im_start|>a<tool_call>b</tool_call><think>c</think><tool_response>d</tool_response>é<|im_end|>";
    const ids = encode(text);
    const skipped = tokenizer.decode(ids, { skip_special_tokens: true });
    expect(skipped).toBe("a<tool_call>b</tool_call><think>c</think><tool_response>d</tool_response>é");
    expect(skipped).toBe(projectTokenizer.decode(ids, { skipSpecialTokens: true }));
  });

  it("renders the chat template byte for byte like renderChatTemplate", () => {
    const toolSets: (readonly ToolSpec[] | null)[] = [null, [], [WEATHER], SESSION_TOOLS.chatTemplateTools()];
    const chats: ChatTemplateMessage[][] = [
      TOOL_CHAT,
      TOOL_CHAT.slice(1),
      [{ role: "user", content: "hi" }],
      [{ role: "system", content: "sys" }, { role: "user", content: "hi" }, { role: "assistant", content: "hello" }],
      [{ role: "tool", content: "first" }, { role: "user", content: "x" }],
    ];
    for (const messages of chats) {
      for (const tools of toolSets) {
        for (const addGenerationPrompt of [false, true]) {
          const expected = renderChatTemplate(messages, { tools, addGenerationPrompt });
          const rendered = tokenizer.apply_chat_template(messages as never, {
            tokenize: false,
            add_generation_prompt: addGenerationPrompt,
            ...(tools ? { tools: tools as never } : {}),
          });
          expect(rendered).toBe(expected);
        }
      }
    }
  });

  it("generates greedily and deterministically, only printable ASCII, newline and the protocol markers", async () => {
    const prompt = encode(renderChatTemplate([{ role: "user", content: "Slide the tiles." }], { addGenerationPrompt: true }));
    const a = await greedy(prompt, 32, { min_new_tokens: 32 });
    const b = await greedy(prompt, 32, { min_new_tokens: 32 });
    expect(a).toHaveLength(32);
    expect(a).toEqual(b);
    expect(a.filter((id) => !ALLOWED.has(id))).toEqual([]);
  });

  it("samples (seeded, temperature 1) only allowed tokens, ending with <|im_end|> for some prompts", async () => {
    random.seed(42);
    const prompts = ["Hi", "Solve 2+2", "ls", "Move left", "Tell me a story", "Next?"].map((u) =>
      renderChatTemplate([{ role: "user", content: u }], { addGenerationPrompt: true }),
    );
    tokenizer.padding_side = "left";
    const enc = tokenizer(prompts, { add_special_tokens: false, padding: true });
    const out = (await model.generate({ ...enc, max_new_tokens: 64, do_sample: true, temperature: 1, top_k: 0 })) as Tensor;
    const generated = rowsOf(out).map((row) => trimAtEos(row.slice(enc.input_ids.dims[1])));
    expect(generated.flat().filter((id) => !ALLOWED.has(id))).toEqual([]);
    expect(generated.some((row) => row.at(-1) === EOS_TOKEN_ID)).toBe(true);
    for (const row of generated) expect(() => new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(row.filter((id) => id < 256)))).not.toThrow();
  });

  it("matches an independent float64 forward pass to within 1e-4", async () => {
    const ids = encode(renderChatTemplate([{ role: "user", content: "What is 17 * 23? <think>" }], { addGenerationPrompt: true }));
    const onnx = await forwardLogits(ids);
    const reference = referenceForward({ preset: PRESETS.tiny, weights: generateWeights(PRESETS.tiny, SEED), ids });
    const last = ids.length - 1;
    let maxDiff = 0;
    for (const id of ALLOWED) maxDiff = Math.max(maxDiff, Math.abs(onnx[last]![id]! - reference[last]![id]!));
    expect(maxDiff).toBeLessThan(1e-4);
    expect(argmax(onnx[last]!)).toBe(argmax(reference[last]!));
    // Blocked tokens sit at about −1e4 (float32 cannot resolve 1e-4 there).
    for (let id = 0; id < onnx[last]!.length; id++) if (!ALLOWED.has(id)) expect(onnx[last]![id]).toBeLessThan(-9000);
  });

  it("gives a batch of two left-padded prompts the same greedy tokens as each prompt alone", async () => {
    const prompts = [
      renderChatTemplate([{ role: "user", content: "Hi" }], { addGenerationPrompt: true }),
      renderChatTemplate([{ role: "system", content: "You are a calculator." }, { role: "user", content: "Compute 12 * 7 + 5." }], {
        addGenerationPrompt: true,
      }),
    ];
    tokenizer.padding_side = "left";
    const enc = tokenizer(prompts, { add_special_tokens: false, padding: true });
    expect(rowsOf(enc.attention_mask as Tensor)[0]![0]).toBe(0); // really padded
    // 10 tokens: every step's top two logits are ≥ 4e-2 apart; the second prompt's 12th step has two 7.8e-5 apart,
    // which a CPU whose kernels round a batch of two otherwise than one row could flip (greedy, two paths).
    const out = (await model.generate({ ...enc, max_new_tokens: 10, do_sample: false })) as Tensor;
    const batched = rowsOf(out).map((row) => trimAtEos(row.slice(enc.input_ids.dims[1])));
    for (const [i, prompt] of prompts.entries()) expect(batched[i]).toEqual(trimAtEos(await greedy(encode(prompt), 10)));
  });

  it("continues a conversation from reused past_key_values exactly like a no-cache recompute", async () => {
    const turn1 = encode(renderChatTemplate([{ role: "user", content: "Start." }], { addGenerationPrompt: true }));
    const first = (await model.generate({
      input_ids: ids2d([turn1]),
      attention_mask: ones2d(1, turn1.length),
      max_new_tokens: 8,
      min_new_tokens: 8,
      do_sample: false,
      return_dict_in_generate: true,
    })) as unknown as { sequences: Tensor; past_key_values: { dispose(): Promise<void> } };
    const turn2 = [...rowsOf(first.sequences)[0]!, ...encode("<|im_end|>\n<|im_start|>user\nAgain.<|im_end|>\n<|im_start|>assistant\n")];
    const steps = 12;
    const cached = await greedy(turn2, steps, { min_new_tokens: steps, past_key_values: first.past_key_values });
    await first.past_key_values.dispose();

    // The recompute: a full forward pass over the whole sequence for every step, EOS suppressed like min_new_tokens.
    const recomputed: number[] = [];
    for (let step = 0; step < steps; step++) {
      const logits = await forwardLogits([...turn2, ...recomputed]);
      recomputed.push(argmax(logits.at(-1)!, [EOS_TOKEN_ID]));
    }
    expect(cached).toEqual(recomputed);
    expect(await greedy(turn2, steps, { min_new_tokens: steps })).toEqual(recomputed);
  });
});

describe("the built small model in transformers.js", () => {
  it("loads and matches the float64 forward pass on a short prompt", async () => {
    writeBuiltinModel(root, "small", SEED);
    const small = await AutoModelForCausalLM.from_pretrained("builtin/small", { dtype: "fp32", device: "cpu" });
    try {
      const ids = encode("<|im_start|>user\nHi<|im_end|>"); // short: the float64 reference is slow at 20M parameters
      const out = (await small({ input_ids: ids2d([ids]), attention_mask: ones2d(1, ids.length) })) as { logits: Tensor };
      const V = PRESETS.small.vocabSize;
      const last = (out.logits.data as Float32Array).slice((ids.length - 1) * V);
      const reference = referenceForward({ preset: PRESETS.small, weights: generateWeights(PRESETS.small, SEED), ids }).at(-1)!;
      for (const id of ALLOWED) expect(Math.abs(last[id]! - reference[id]!)).toBeLessThan(1e-4);
    } finally {
      await small.dispose();
    }
  });
});
