// SkyRL evaluation dumps read as lab runs. The fixture follows NovaSky-AI/SkyRL skyrl/train/utils/trainer_utils.py
// dump_per_dataset_eval_results (dumped_evals/global_step_{N}_evals/{data_source}.jsonl) —
// fixtures/make_more_fixtures.py.

import { describe, expect, it } from "vitest";
import { fixture, imported, read } from "./read-dump.fixture.js";


describe("SkyRL {data_source}.jsonl (dump_per_dataset_eval_results)", () => {
  const run = read(fixture("skyrl_eval.jsonl"));

  it("is found from its first record; the decoded prompt and response as a user and an assistant message", () => {
    expect(run.problems).toEqual([]);
    expect(run.samples.map((s) => [s.idx, s.task_name, s.total_reward, s.termination, s.message_log.map((m) => m.role)])).toEqual([
      [0, "gsm8k", 1, "stop", ["user", "assistant"]],
      [1, "gsm8k", 0.5, "length", ["user", "assistant"]],
    ]);
    expect(run.samples[0]!.message_log[1]!.content).toBe("42<|im_end|>");
  });

  it("keeps every field but the texts and a numeric score; a per-token score is summed and kept", () => {
    expect(imported(run.samples[0]!)).toEqual({
      format: "skyrl",
      fields: { stop_reason: "stop", env_class: "gsm8k", env_extras: { reward_spec: { method: "rule", ground_truth: "42" } }, data_source: "openai/gsm8k" },
    });
    expect(imported(run.samples[1]!)).toEqual({
      format: "skyrl",
      fields: { score: [0, 0, 0, 0.5], stop_reason: "length", env_class: "gsm8k", env_extras: { reward_spec: { method: "rule", ground_truth: "48" } }, data_source: "openai/gsm8k" },
    });
  });

  it("a record that is not as the writer writes it is named with its line and field", () => {
    const lines = fixture("skyrl_eval.jsonl").trim().split("\n");
    const bad = JSON.parse(lines[1]!);
    bad.score = "high";
    const partly = read([lines[0], JSON.stringify(bad)].join("\n"));
    expect(partly.samples).toHaveLength(1);
    expect(partly.problems).toEqual([{ line: 2, path: "score", message: expect.stringMatching(/^expected .*\(skyrl\)$/) }]);
  });
});
