// NeMo Gym rollouts.jsonl / rollouts_failures.jsonl read as lab runs. The fixtures follow NVIDIA-NeMo/Gym
// nemo_gym/rollout_collection.py RolloutCollectionHelper.run_from_config (the agent's /run result with the row's
// indices and agent_ref, orjson.dumps; failures to <output>_failures.jsonl) — fixtures/make_more_fixtures.py.

import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { fixture, FIXTURES, imported, read } from "./read-dump.fixture.js";

const dir = FIXTURES;

describe("NeMo Gym rollouts.jsonl (rollout collection)", () => {
  const run = read(fixture("rollouts.jsonl"));

  it("is found from its first record and read without problems", () => {
    expect(run.problems).toEqual([]);
    expect(run.samples.map((s) => [s.idx, s.task_name, s.total_reward, s.termination])).toEqual([
      [0, "weather_simple_agent", 1, null],
      [1, "weather_simple_agent", 0, "length"],
    ]);
  });

  it("input and output items as messages; a model call's generated tokens and logprobs on its last item", () => {
    const [s] = run.samples;
    expect(s!.message_log.map((m) => [m.role, m.content, m.token_ids, m.generation_logprobs])).toEqual([
      ["system", "You are a weather bot.", [], undefined],
      ["user", "Weather in Paris?", [], undefined],
      ["assistant", "Call the tool.", [], undefined],
      ["assistant", 'get_weather({"city": "Paris"})', [40, 41, 42], [-0.5, -0.25, -0.125]],
      ["tool", "sunny, 21°C", [], undefined],
      ["assistant", "Sunny, 21°C.", [60, 61], [-1, -0.0625]],
    ]);
    const fields = imported(s!).fields;
    expect(fields.output_items).toEqual([
      { id: "rs_1", summary: [{ type: "summary_text" }], type: "reasoning", encrypted_content: null },
      { call_id: "call_1", name: "get_weather", type: "function_call", id: "call_1", status: "completed", prompt_token_ids: [1, 2, 3] },
      { call_id: "call_1", type: "function_call_output", id: null, status: "completed" },
      { id: "msg_1", content: [{ annotations: [], type: "output_text", logprobs: null }], status: "completed", type: "message", prompt_token_ids: [1, 2, 3, 40, 41, 42, 50, 51] },
    ]);
    expect(fields.input_items).toEqual([
      { type: "message" },
      { type: "message" },
    ]);
  });

  it("every field not mapped is kept: the request without input, the response without output, the group ids", () => {
    const line = JSON.parse(fixture("rollouts.jsonl").split("\n")[1]!);
    const { input: _input, ...params } = line.responses_create_params;
    const { output: _output, ...response } = line.response;
    expect(imported(run.samples[1]!)).toEqual({
      format: "nemo-gym",
      fields: {
        responses_create_params: params,
        response,
        verifier_type: "weather",
        _ng_task_index: 1,
        _ng_rollout_index: 0,
        agent_ref: { type: "responses_api_agents", name: "weather_simple_agent" },
        input_items: [],
        output_items: [{ id: "msg_2", content: [{ annotations: [], type: "output_text", logprobs: null }], status: "incomplete", type: "message" }],
      },
    });
    expect(response.incomplete_details).toEqual({ reason: "max_output_tokens" });
  });

  it("a record that is not as the writer writes it is named with its line and field; the others are read", () => {
    const lines = fixture("rollouts.jsonl").trim().split("\n");
    const bad = JSON.parse(lines[0]!);
    bad.response.output[1].generation_token_ids = ["x"];
    const partly = read([lines[1], JSON.stringify(bad)].join("\n"));
    expect(partly.samples).toHaveLength(1);
    expect(partly.problems).toEqual([
      { line: 2, path: "response.output[1].generation_token_ids", message: expect.stringMatching(/^expected .*\(nemo-gym\)$/) },
    ]);
  });
});

describe("NeMo Gym rollouts_failures.jsonl (the failures sidecar)", () => {
  it("a failed rollout: termination error, its agent's error text as the sample's error, everything kept", () => {
    const run = read(fixture("rollouts_failures.jsonl"));
    expect(run.problems).toEqual([]);
    const [s] = run.samples;
    expect([s!.task_name, s!.termination, s!.error, s!.total_reward]).toEqual(["remote_agent", "error", "remote service returned HTTP 503", 0]);
    const fields = imported(s!).fields;
    expect([fields._ng_failure_class, fields.error, fields._ng_task_index, fields._ng_rollout_index]).toEqual(["remote_agent_failed", "remote service returned HTTP 503", 2, 1]);
  });
});

describe("every fixture's format is found from its first record", () => {
  const expected: Record<string, string> = {
    "rollouts.jsonl": "nemo-gym",
    "rollouts_failures.jsonl": "nemo-gym",
    "skyrl_eval.jsonl": "skyrl",
    "traces.jsonl": "verifiers",
    "5.jsonl": "verl",
    "train_data_step3.jsonl": "nemo-rl",
    "val_data_step3.jsonl": "nemo-rl",
    "train_data_step7.jsonl": "nemo-rl",
    "results.jsonl": "verifiers",
  };
  it.each(readdirSync(dir).filter((f) => f.endsWith(".jsonl")))("%s", (name) => {
    const run = read(fixture(name));
    expect(run.problems).toEqual([]);
    expect(run.samples.length).toBeGreaterThan(0);
    expect(run.samples.map((s) => imported(s).format)).toEqual(run.samples.map(() => expected[name]));
  });

  it("a lab export is still the lab's own (its first line a sample, its last the metrics line)", () => {
    const lab = [JSON.stringify({ idx: 0, task_name: "t", message_log: [{ role: "user", content: "x" }] }), JSON.stringify({ "lab/format": "rollout-lab-run/1", metrics: { a: 1 } })].join("\n");
    const run = read(lab);
    expect(run.problems).toEqual([]);
    expect([run.samples.length, run.footer?.metrics]).toEqual([1, { a: 1 }]);
    expect((run.samples[0] as unknown as { imported?: unknown }).imported).toBeUndefined();
  });
});
