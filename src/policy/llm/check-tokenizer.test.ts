// The worker's adapter over a transformers.js tokenizer checks as the CLI's Node loader does (Qwen3's files).
import { basename, dirname } from "node:path";
import { AutoTokenizer, env } from "@huggingface/transformers";
import { beforeAll, describe, expect, it } from "vitest";
import { checkSample, type CheckSample } from "../../scenario/token-check.js";
import { checkTokenizerOf, type TransformersTokenizerLike } from "./check-tokenizer.js";
import { loadTokenizerFolder, qwen3TokenizerFolder, type LoadedTokenizer } from "./tokenizer-load.js";

let cli: LoadedTokenizer;
let raw: TransformersTokenizerLike;
beforeAll(async () => {
  const folder = qwen3TokenizerFolder();
  cli = await loadTokenizerFolder(folder, "builtin:tiny-qwen3");
  env.allowRemoteModels = false;
  env.localModelPath = `${dirname(dirname(folder))}/`;
  raw = (await AutoTokenizer.from_pretrained(`${basename(dirname(folder))}/${basename(folder)}`, { local_files_only: true })) as unknown as TransformersTokenizerLike;
}, 60_000);

describe("checkTokenizerOf", () => {
  it("gives the same verdicts as the CLI's tokenizer, consistent and drifting", () => {
    const adapted = checkTokenizerOf(raw, "builtin:tiny-qwen3");
    const messages = [{ role: "user", content: "Count the lines of a.txt" }];
    const prompt = cli.applyChatTemplate(messages, { addGenerationPrompt: true });
    const sample = (turn: string): CheckSample => ({
      messageLog: [
        { role: "user", content: prompt, token_ids: cli.encode(prompt) },
        { role: "assistant", content: turn, token_ids: cli.encode(`${turn}<|im_end|>`) },
      ],
      structured: true,
    });
    for (const turn of ["<think>\n\n</think>\n\nThree.", "<think>x</think>Three."]) {
      const a = checkSample(sample(turn), adapted);
      expect(a).toEqual(checkSample(sample(turn), cli));
    }
    expect(checkSample(sample("<think>\n\n</think>\n\nThree."), adapted).consistent).toBe(true);
    expect(checkSample(sample("<think>x</think>Three."), adapted).first_divergence?.reason).toBe("think_whitespace");
  });

  it("refuses a tokenizer without a chat template", () => {
    expect(() => checkTokenizerOf({ encode: raw.encode, decode: raw.decode, get_chat_template: raw.get_chat_template, config: raw.config, chat_template: null, eos_token: "<|im_end|>" }, "m")).toThrow(/no chat_template/);
  });
});
