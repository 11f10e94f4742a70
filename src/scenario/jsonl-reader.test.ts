/**
 * The JSONL checker's token ids: vocabulary indices, stored as int32 by the page's run model. An id outside 0 … 2^31 − 1
 * is a problem of its line (named by field path), never a number that wraps (3000000000 read as -1294967296). And
 * the checker's own options, which the replay's reader of a saved run uses (./result.ts).
 */

import { describe, expect, it } from "vitest";
import { z } from "zod";
import { formatProblem, isTokenId, JsonlAccumulator, MAX_TOKEN_ID, readJsonl } from "./jsonl-reader.js";

const line = (tokenIds: unknown[], logprobs?: unknown[]) =>
  JSON.stringify({
    idx: 0,
    task_name: "t",
    message_log: [
      { role: "user", content: "q", token_ids: [1, 2] },
      { role: "assistant", content: "a", token_ids: tokenIds, ...(logprobs ? { generation_logprobs: logprobs } : {}) },
    ],
  });

const check = (text: string) => {
  const acc = new JsonlAccumulator();
  acc.push(text);
  return acc.end();
};

const TOKEN_ID = "expected a token id (an integer from 0 to 2147483647)";

describe("token ids", () => {
  it("are integers from 0 to 2^31 − 1", () => {
    expect(MAX_TOKEN_ID).toBe(2 ** 31 - 1);
    for (const ok of [0, 1, 50256, 2 ** 31 - 1]) expect(isTokenId(ok)).toBe(true);
    for (const bad of [-1, 2 ** 31, 3000000000, 2 ** 53, 1.5, NaN, Infinity, "7", null]) expect(isTokenId(bad)).toBe(false);
  });

  it("outside 0 … 2^31 − 1: a problem of the line, by field path, in words; the largest passes", () => {
    const read = check([line([5, 3000000000]), line([-1]), line([2 ** 31, 7, 1.5]), line([0, 2 ** 31 - 1], [-0.1, -0.2])].join("\n"));
    expect(read.problems.map(formatProblem)).toEqual([
      `line 1: message_log[1].token_ids[1]: ${TOKEN_ID}`,
      `line 2: message_log[1].token_ids[0]: ${TOKEN_ID}`,
      `line 3: message_log[1].token_ids[0]: ${TOKEN_ID}`,
      `line 3: message_log[1].token_ids[2]: ${TOKEN_ID}`,
    ]);
    expect(read.badLines).toBe(3);
    expect(read.samples).toHaveLength(1);
    expect(read.samples[0]!.message_log[1]!.token_ids).toEqual([0, 2147483647]);
    expect(read.samples[0]!.message_log[1]!.generation_logprobs).toEqual([-0.1, -0.2]);
  });

  it("a list that is no list of token ids says so; a message without token ids has an empty list", async () => {
    const read = await readJsonl(
      new Blob([
        [
          JSON.stringify({ idx: 0, task_name: "t", message_log: [{ role: "user", content: "q", token_ids: "1 2" }] }),
          JSON.stringify({ idx: 1, task_name: "t", message_log: [{ role: "user", content: "q" }] }),
        ].join("\n"),
      ]),
    );
    expect(read.problems.map(formatProblem)).toEqual(["line 1: message_log[0].token_ids: expected a list of token ids"]);
    expect(read.samples[0]!.message_log[0]!.token_ids).toEqual([]);
  });
});

describe("the checker's options (a replay's saved run)", () => {
  const lenient = z.looseObject({ idx: z.number(), message_log: z.array(z.looseObject({ role: z.string(), content: z.string() })) });

  it("another sample schema, other lines skipped, the same line numbers and JSON problems", () => {
    const acc = new JsonlAccumulator<z.infer<typeof lenient>>({ sampleSchema: lenient, otherLines: "skip", maxProblems: 2 });
    acc.push(
      [
        JSON.stringify({ idx: 0, message_log: [{ role: "user", content: "q" }] }),
        JSON.stringify({ "lab/format": "rollout-lab-run/1", mode: "neither" }),
        JSON.stringify({ something: "else" }),
        "{ not json",
        JSON.stringify({ idx: 1, message_log: [{ role: "user", content: "q" }] }),
      ].join("\n"),
    );
    const read = acc.end();
    expect(read.samples.map((s) => s.idx)).toEqual([0, 1]);
    // Without token ids the samples keep none (the lab's schema is the one that adds an empty list).
    expect("token_ids" in read.samples[0]!.message_log[0]!).toBe(false);
    expect(read.problems.map(formatProblem)).toEqual(["line 4: not valid JSON at column 3 (Unexpected token 'n')"]);
    expect(read.linesRead).toBe(5);
  });
});
