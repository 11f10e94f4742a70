import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildGenerationInput, byteLevelTokenizer, type GenerationDatumSpec, type GenerationOutputSpec } from "../../core/index.js";
import { GenerateCallPolicy } from "./generate-call-policy.js";
import { ModelTokenizer } from "./model-tokenizer.js";
import { loadNodeModel } from "./node.js";

const modelsRoot = mkdtempSync(join(tmpdir(), "rollout-lab-generate-call-"));
let loaded: Awaited<ReturnType<typeof loadNodeModel>>;

beforeAll(async () => {
  loaded = await loadNodeModel({ model: "builtin:tiny", modelsRoot });
});
afterAll(async () => {
  await loaded?.model.dispose();
});

const chat = (text: string) => `<|im_start|>user\n${text}<|im_end|>\n<|im_start|>assistant\n`;
const policy = (prefillScoreBytes?: number) =>
  new GenerateCallPolicy(loaded.runtime, loaded.model, new ModelTokenizer(loaded.tokenizer), { seed: 5, temperature: 1, top_p: 0.95, prefillScoreBytes });

function input(prompts: string[]): GenerationDatumSpec {
  const logs = prompts.map((p) => [{ role: "user", content: p, token_ids: byteLevelTokenizer.encode(p) }]);
  return buildGenerationInput(logs, [null, ["e"], null], {
    padTokenId: byteLevelTokenizer.padTokenId,
    maxSeqLen: 4096,
    maxNewTokens: 20,
    sampleIds: prompts.map((_, i) => i),
    turns: prompts.map(() => 0),
  });
}

const generated = (out: GenerationOutputSpec, data: GenerationDatumSpec) =>
  data.input_lengths.map((len, i) => ({
    tokens: Array.from(out.output_ids[i]!.subarray(len, out.unpadded_sequence_lengths[i])),
    logprobs: Array.from(out.logprobs[i]!.subarray(len, out.unpadded_sequence_lengths[i])),
  }));

describe("transformers.js's generate() as the policy (builtin:tiny, onnxruntime-node)", () => {
  it("a row with no room left (max_new_tokens 0) beside one that generates gets no token and is not truncated, as on the engine", async () => {
    // The second prompt's greedy next token is EOS: a row that took one step would keep it.
    const prompts = [chat("this prompt fills the context"), `${chat("move")}left`];
    for (const zero of prompts) {
      const logs = [zero, chat("hi")].map((p) => [{ role: "user", content: p, token_ids: byteLevelTokenizer.encode(p) }]);
      const data = buildGenerationInput(logs, [null, null], { padTokenId: byteLevelTokenizer.padTokenId, maxSeqLen: 4096, maxNewTokens: 8 });
      data.max_new_tokens[0] = 0;
      const out = await new GenerateCallPolicy(loaded.runtime, loaded.model, new ModelTokenizer(loaded.tokenizer)).generate(data, true);
      expect([generated(out, data)[0]!.tokens, out.truncated[0]]).toEqual([[], false]);
      expect(generated(out, data)[1]!.tokens.length).toBeGreaterThan(0);
    }
  });

  it("prefills a call too big for one pass in groups of rows, with the tokens and log-probabilities of one pass", async () => {
    const data = input([chat("Move the tile."), chat("a much longer prompt than the first one, to pad it out"), chat("xy")]);
    for (const greedy of [true, false]) {
      const whole = policy();
      // One byte of scores: every row is a group of its own.
      const grouped = policy(1);
      const a = generated(await whole.generate(data, greedy), data);
      const b = generated(await grouped.generate(data, greedy), data);
      expect(b.map((r) => r.tokens)).toEqual(a.map((r) => r.tokens));
      a.forEach((row, i) => row.logprobs.forEach((lp, k) => expect(b[i]!.logprobs[k]!).toBeCloseTo(lp, 4)));
      expect(a.every((r) => r.tokens.length > 0)).toBe(true);
      expect(whole.cacheStats.groupedPrefills).toBe(0);
      expect(grouped.cacheStats.groupedPrefills).toBe(1);
      // Both count the same prompt tokens as prefilled.
      expect(grouped.cacheStats.prefilled).toBe(whole.cacheStats.prefilled);
      await whole.dispose();
      await grouped.dispose();
    }
  });
});
