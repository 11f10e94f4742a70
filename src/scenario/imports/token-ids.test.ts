/**
 * A dump's token ids read with the tokenizer it was made with (issue 19 item 2): a NeMo RL training dump of Qwen3 ids
 * (fixtures/make_token_fixture.ts follows grpo.py's "Log training data" and get_formatted_message_log's chunks) is
 * checked against Qwen3's chat template as the CLI and the page check it: the template's own tokens are consistent
 * (its observations, written as template text by the environment, read back into their turns), a generation split
 * otherwise than the tokenizer splits it drifts where it starts.
 */

import { describe, expect, it } from "vitest";
import { loadCheckTokenizer, tokenizerSource } from "../../policy/llm/tokenizer-load.js";
import { checkSample } from "../token-check.js";
import { fixture, read } from "./read-dump.fixture.js";

const source = tokenizerSource("builtin:tiny-qwen3");
if (source.kind === "byte-level") throw new Error("expected Qwen3's tokenizer files");
const qwen3 = await loadCheckTokenizer("builtin:tiny-qwen3", source);
const samples = read(fixture("train_data_step7.jsonl"), { fileName: "train_data_step7.jsonl" }).samples;

describe("a NeMo RL dump of Qwen3 token ids", () => {
  it("gets its roles from the loss mask, and each message's ids decode to its text", () => {
    expect(samples.map((s) => s.message_log.map((m) => m.role))).toEqual([
      ["user", "assistant", "environment", "assistant"],
      ["user", "assistant"],
    ]);
    for (const m of samples[0]!.message_log) expect(qwen3.decode(m.token_ids)).toBe(m.content);
  });

  it("is consistent with Qwen3's template where its ids are the template's, its observations read back into their turns", () => {
    const result = checkSample({ messageLog: samples[0]!.message_log, structured: false }, qwen3);
    expect(result.first_divergence).toBeNull();
    expect(result.reference.text).toContain("<|im_start|>user\n<tool_response>\n51\n</tool_response><|im_end|>");
  });

  it("drifts at a generation tokenized character by character: retokenized, at its first token", () => {
    const result = checkSample({ messageLog: samples[1]!.message_log, structured: false }, qwen3);
    const promptLength = samples[1]!.message_log[0]!.token_ids.length;
    expect(result.first_divergence).toMatchObject({ token_index: promptLength, message_index: 1, reason: "retokenized" });
  });
});
