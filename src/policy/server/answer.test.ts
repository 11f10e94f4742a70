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

  it("a stop token id ended it (vLLM's stop_reason: the model's other end tokens): that token ends the row, no EOS after it", () => {
    const stopToken = 259;
    const generated = [...ids("hi"), stopToken];
    const kept = readCompletion(answer({ text: "hi", finish_reason: "stop", stop_reason: stopToken, token_ids: generated, logprobs: logprobsOf(generated) }), request);
    expect(kept).toMatchObject({ ids: generated, logprobs: [-0.25, -0.25, -0.25] });
    // A server that names the token but leaves it out: it is appended, as EOS is.
    const left = readCompletion(answer({ text: "hi", finish_reason: "stop", stop_reason: stopToken, token_ids: ids("hi"), logprobs: logprobsOf(ids("hi")) }), request);
    expect(left).toMatchObject({ ids: generated, logprobs: [-0.25, -0.25, 0] });
    // Appending must not take a row past max_tokens: such an answer contradicts itself.
    const full = ids("abcdefgh");
    expect(() => readCompletion(answer({ text: "abcdefgh", finish_reason: "stop", stop_reason: null, token_ids: full }), request)).toThrow(
      `choices[0].finish_reason: expected "length" for 8 tokens (max_tokens) that end neither with the end-of-sequence token nor with a stop string, got "stop"`,
    );
  });

  it("llama.cpp's logprobs.content: its ids and log-probabilities; a wrong entry is named", () => {
    const generated = [...ids("hi"), EOS_TOKEN_ID];
    const content = generated.map((id, i) => ({ id, token: tok.decode([id]), bytes: [], logprob: -0.5 * (i + 1), top_logprobs: [] }));
    const read = readCompletion(answer({ text: "hi", finish_reason: "stop", logprobs: { content } }), request);
    expect(read).toEqual({ ids: generated, logprobs: [-0.5, -1, -1.5], truncated: false, retokenized: false, withoutLogprobs: false });
    const bad = (entries: unknown[]) => () => readCompletion(answer({ text: "hi", finish_reason: "stop", logprobs: { content: entries } }), request);
    expect(bad([content[0], { ...content[1], logprob: null }])).toThrow("the answer's choices[0].logprobs.content[1].logprob: expected a finite log-probability, got null");
    // llama-server cuts the stop string that ended a row out of its text and tokens: refused, not read as EOS.
    const cut = ids("ok");
    const cutContent = cut.map((id) => ({ id, token: tok.decode([id]), logprob: -0.1 }));
    expect(() => readCompletion(answer({ text: "ok", finish_reason: "stop", logprobs: { content: cutContent } }), { ...request, stops: ["</s>"] })).toThrow(
      "the answer ended (\"stop\") with neither the end-of-sequence token nor a stop string: a server that cuts the stop string out of its answer (llama.cpp's llama-server does) cannot serve a scenario with stop strings",
    );
    expect(bad([{ ...content[0], id: 9999 }])).toThrow("choices[0].logprobs.content[0].id: expected a token id of the tokenizer's vocabulary (an integer from 0 to 264), got 9999");
  });

  it("the server's own ids with log-probabilities for fewer or more tokens: an error, not log-probabilities pinned to the wrong tokens", () => {
    const generated = ids("abc");
    expect(() =>
      readCompletion(answer({ text: "abc", finish_reason: "length", token_ids: generated, logprobs: { tokens: ["a", "bc"], token_logprobs: [-1, -2] } }), request),
    ).toThrow("choices[0].logprobs.token_logprobs: expected 3 log-probabilities (one per token of choices[0].token_ids), got 2");
  });

  it("an error sent with HTTP 200: the server's message", () => {
    expect(() => readCompletion({ error: { message: "CUDA out of memory", type: "InternalServerError" } }, request)).toThrow(
      `${request.where}: the server answered with an error: CUDA out of memory`,
    );
  });

  it("finish_reason length: truncated, nothing added", () => {
    const read = readCompletion(answer({ text: "abc", finish_reason: "length", logprobs: logprobsOf(ids("abc")) }), request);
    expect(read).toMatchObject({ ids: ids("abc"), truncated: true });
  });

  it("no token ids anywhere: the text is re-tokenized, and it says so; log-probabilities used when they line up", () => {
    const lined = readCompletion(answer({ text: "abc", finish_reason: "length", logprobs: { tokens: ["a", "b", "c"], token_logprobs: [-1, -2, -3] } }), request);
    expect(lined).toMatchObject({ ids: ids("abc"), logprobs: [-1, -2, -3], retokenized: true, withoutLogprobs: false });
    // The same count of tokens, but not the lab's: the server's log-probabilities belong to other tokens, so none are used.
    const other = readCompletion(answer({ text: "abc", finish_reason: "length", logprobs: { tokens: ["x", "y", "z"], token_logprobs: [-1, -2, -3] } }), request);
    expect(other).toMatchObject({ ids: ids("abc"), logprobs: [0, 0, 0], retokenized: true, withoutLogprobs: true });
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
