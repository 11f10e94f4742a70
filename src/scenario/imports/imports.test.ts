// Rollout dumps of other libraries read as lab runs (issue 19 item 1): each fixture follows its upstream writer
// (fixtures/make_fixtures.py says which file and function), every field is mapped or kept, the format is found from
// the first record, and bad records are named with their line and field.

import { describe, expect, it } from "vitest";
import { fixture, imported, read } from "./read-dump.fixture.js";



describe("NeMo RL train_data_step{N}.jsonl (grpo.py through Logger.log_batched_dict_as_jsonl)", () => {
  const run = read(fixture("train_data_step3.jsonl"), { fileName: "train_data_step3.jsonl" });

  it("is found from its first record and read without problems", () => {
    expect(run.problems).toEqual([]);
    expect(run.samples.map((s) => [s.idx, s.task_name, s.total_reward])).toEqual([
      [0, "math_agent", 1],
      [1, "math_agent", 0],
    ]);
  });

  it("where the loss mask lines up with the messages: roles, each message's tokens and the assistants' logprobs", () => {
    const [s] = run.samples;
    expect(s!.message_log.map((m) => [m.role, m.content, m.token_ids])).toEqual([
      ["user", "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n", [11, 12, 13, 14, 15]],
      ["assistant", "<tool_call>", [21, 22, 23]],
      ["environment", "<result>4</result>", [31, 32]],
      ["assistant", "4", [41, 42]],
    ]);
    expect(s!.message_log[1]!.generation_logprobs).toEqual([-0.5, -1.25, -0.125]);
    expect(s!.message_log[3]!.generation_logprobs).toEqual([-2.0, -0.25]);
    // Kept: everything not mapped, per-token rows cut to the sample's 12 tokens (the padding dropped), the step.
    expect(imported(s!)).toEqual({
      format: "nemo-rl",
      fields: {
        step: 3,
        agent_ref: { name: "math_agent" },
        input_lengths: 12,
        token_loss_mask: [0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 1, 1],
        sample_loss_mask: 1,
        advantages: [0, 0, 0, 0, 0, 0.75, 0.75, 0.75, 0, 0, 0.75, 0.75],
        prev_logprobs: [0, 0, 0, 0, 0, -0.5, -1.5, -0.125, 0, 0, -2.5, -0.25],
      },
    });
  });

  it("a system prompt before the user's (math_data_processor's): both in the first untrained run, roles from their template headers", () => {
    const s = run.samples[1]!;
    expect(s.message_log.map((m) => [m.role, m.token_ids])).toEqual([
      ["system", []],
      ["user", [11, 12, 13, 51]],
      ["assistant", [52, 53, 54]],
    ]);
    expect(s.message_log[2]!.generation_logprobs).toEqual([-0.1, -0.2, -0.3]);
    const fields = imported(s).fields;
    expect(fields.roles).toMatch(/^inferred: the prompt's untrained run holds its first 2 messages/);
    expect(fields.prev_logprobs).toEqual([0, 0, 0, 0, -0.1, -0.25, -0.3]);
  });

  it("where the loss mask does not line up (more runs than messages): alternating roles, said so, the token row kept whole", () => {
    const line = JSON.parse(fixture("train_data_step3.jsonl").trim().split("\n")[1]!);
    line.token_loss_mask = [[0, 1, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]];
    const s = read(JSON.stringify(line)).samples[0]!;
    expect(s.message_log.map((m) => [m.role, m.token_ids])).toEqual([
      ["user", []],
      ["assistant", []],
      ["environment", []],
    ]);
    const fields = imported(s).fields;
    expect(fields.roles).toMatch(/^inferred: prompt, then assistant/);
    expect(fields.token_ids).toEqual([11, 12, 13, 51, 52, 53, 54]);
    expect(fields.generation_logprobs).toEqual([0, 0, 0, 0, -0.1, -0.2, -0.3]);
  });

  it("SFT's and distillation's train_data (content and input_lengths alone, no rewards) are recognised", () => {
    const line = { content: [["<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n", "hello"]], input_lengths: [9], idx: 0 };
    const got = read(JSON.stringify(line));
    expect(got.problems).toEqual([]);
    expect(got.samples[0]!.message_log.map((m) => [m.role, m.content])).toEqual([
      ["user", "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"],
      ["assistant", "hello"],
    ]);
    expect(got.samples[0]!.total_reward).toBeNull();
  });

  it("a record that is not as the writer writes it is named with its line and field; the others are read", () => {
    const lines = fixture("train_data_step3.jsonl").trim().split("\n");
    const bad = JSON.parse(lines[1]!);
    bad.token_ids = ["x"];
    const partly = read([lines[0], JSON.stringify(bad)].join("\n"));
    expect(partly.samples).toHaveLength(1);
    expect(partly.problems).toEqual([{ line: 2, path: "token_ids", message: expect.stringMatching(/^expected \[\[numbers\]\].*\(nemo-rl\)$/) }]);
  });
});

describe("NeMo RL val_data_step{N}.jsonl (grpo.py validate)", () => {
  it("the message logs with their roles, the total reward; nothing else to keep but the step", () => {
    const run = read(fixture("val_data_step3.jsonl"), { fileName: "val_data_step3.jsonl" });
    expect(run.problems).toEqual([]);
    expect(run.samples.map((s) => [s.total_reward, s.message_log.map((m) => m.role)])).toEqual([
      [1, ["user", "assistant", "environment"]],
      [0, ["user", "assistant", "environment"]],
    ]);
    expect(run.samples[1]!.message_log[1]!.content).toBe("30");
    expect(imported(run.samples[0]!)).toEqual({ format: "nemo-rl", fields: { step: 3 } });
  });
});

describe("verl {step}.jsonl (RayPPOTrainer._dump_generations)", () => {
  it("the decoded prompt and response as a user and an assistant message; score the reward; the rest kept", () => {
    const run = read(fixture("5.jsonl"));
    expect(run.problems).toEqual([]);
    const [a, b] = run.samples;
    expect(a!.message_log.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(a!.message_log[1]!.content).toBe("2+2 is \\boxed{4}.");
    expect([a!.idx, b!.idx, a!.total_reward, b!.total_reward]).toEqual([0, 1, 1, 0]);
    expect(imported(b!)).toEqual({ format: "verl", fields: { gts: "4", step: 5, acc: false, pred: "5", uid: "a1b2" } });
  });
});

describe("the format", () => {
  it("a record of no known shape: an error naming its keys and what the lab reads", () => {
    const run = read('{"prompt": "x", "answer": "y"}\n');
    expect(run.samples).toEqual([]);
    expect(run.problems[0]!.message).toMatch(/^not a run the lab reads \(its keys: prompt, answer\); expected one of: the lab's own JSONL.*NeMo RL.*verl/);
  });

  it("named: a dump's lines read as that format; the lab's lines under --format lab are the lab's own", () => {
    expect(read(fixture("5.jsonl"), { format: "verl" }).samples).toHaveLength(2);
    expect(read(fixture("5.jsonl"), { format: "nemo-rl" }).problems[0]!.message).toMatch(/\(nemo-rl\)$/);
    expect(read(fixture("5.jsonl"), { format: "lab" }).problems[0]!.message).toMatch(/^expected a sample/);
    expect(() => read("", { format: "trl2" })).toThrow("unknown format 'trl2'");
  });
});
