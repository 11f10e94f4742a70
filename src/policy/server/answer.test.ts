/** Reading a completion answer: where the token ids come from, the end-of-sequence token, truncation, fallbacks. */

import { describe, expect, it } from "vitest";
import { byteLevelTokenizer as tok, EOS_TOKEN_ID } from "../../core/index.js";
import { readCompletion, type RowRequest } from "./answer.js";

const request: RowRequest = { where: "http://s/v1/completions, row 0 (sample 0, turn 0)", maxTokens: 8, stops: [], tokenizer: tok, vocabSize: 265 };
const ids = (text: string) => tok.encode(text);
const answer = (choice: Record<string, unknown>) => ({ choices: [{ index: 0, ...choice }] });
const logprobsOf = (tokenIds: number[], values = tokenIds.map(() => -0.25)) => ({ tokens: tokenIds.map((t) => `token_id:${t}`), token_logprobs: values });

describe("readCompletion", () => {
  it("vLLM's answer ended by EOS: the ids as given, EOS included", () => {
    const generated = [...ids("hi"), EOS_TOKEN_ID];
    const read = readCompletion(answer({ text: "hi", finish_reason: "stop", stop_reason: null, token_ids: generated, logprobs: logprobsOf(generated) }), request);
    expect(read).toEqual({ ids: generated, logprobs: [-0.25, -0.25, -0.25], truncated: false, retokenized: false, withoutLogprobs: false });
  });

  it("a server that leaves EOS out: the row ends with it (log-probability 0), as the model policy's", () => {
    const read = readCompletion(answer({ text: "hi", finish_reason: "stop", logprobs: logprobsOf(ids("hi")) }), request);
    expect(read.ids).toEqual([...ids("hi"), EOS_TOKEN_ID]);
    expect(read.logprobs).toEqual([-0.25, -0.25, 0]);
  });

  it("a stop string ended it: no EOS added, whether stop_reason says so or the text shows it", () => {
    const stopped = ids("ok</s>");
    const withStops = { ...request, stops: ["</s>"] };
    for (const extra of [{ stop_reason: "</s>" }, {}, { matched_stop: "</s>" }]) {
      const read = readCompletion(answer({ text: "ok</s>", finish_reason: "stop", logprobs: logprobsOf(stopped), ...extra }), withStops);
      expect(read.ids).toEqual(stopped);
    }
  });

  it("finish_reason length: truncated, nothing added", () => {
    const read = readCompletion(answer({ text: "abc", finish_reason: "length", logprobs: logprobsOf(ids("abc")) }), request);
    expect(read).toMatchObject({ ids: ids("abc"), truncated: true });
  });

  it("no token ids anywhere: the text is re-tokenized, and it says so; log-probabilities used when they line up", () => {
    const lined = readCompletion(answer({ text: "abc", finish_reason: "length", logprobs: { tokens: ["a", "b", "c"], token_logprobs: [-1, -2, -3] } }), request);
    expect(lined).toMatchObject({ ids: ids("abc"), logprobs: [-1, -2, -3], retokenized: true, withoutLogprobs: false });
    const none = readCompletion(answer({ text: "abc", finish_reason: "length", logprobs: null }), request);
    expect(none).toMatchObject({ ids: ids("abc"), logprobs: [0, 0, 0], retokenized: true, withoutLogprobs: true });
  });

  it("choices[].token_ids without logprobs: the ids, log-probabilities 0 (and it says so)", () => {
    const read = readCompletion(answer({ text: "ab", finish_reason: "length", token_ids: ids("ab") }), request);
    expect(read).toMatchObject({ ids: ids("ab"), logprobs: [0, 0], retokenized: false, withoutLogprobs: true });
  });

  it("errors name the field", () => {
    const bad = (choice: Record<string, unknown>) => () => readCompletion(answer(choice), request);
    expect(bad({ finish_reason: "stop" })).toThrow(`${request.where}: the answer's choices[0].text: expected a string, got undefined`);
    expect(bad({ text: "", finish_reason: "stop", token_ids: [1.5] })).toThrow("choices[0].token_ids[0]: expected a token id of the tokenizer's vocabulary (an integer from 0 to 264), got 1.5");
    expect(bad({ text: "", finish_reason: "stop", logprobs: { tokens: ["a"], token_logprobs: [0.5] } })).toThrow("token_logprobs[0]: expected a log-probability (≤ 0), got 0.5");
    expect(bad({ text: "", finish_reason: "stop", logprobs: { tokens: ["a", "b"], token_logprobs: [-1] } })).toThrow(
      "choices[0].logprobs.token_logprobs: expected 2 log-probabilities (one per entry of logprobs.tokens), got 1",
    );
    expect(() => readCompletion([], request)).toThrow("the answer's body: expected an object {choices: [...]}, got a list of 0");
  });
});
