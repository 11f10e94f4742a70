// verifiers / prime-rl rollout files read as lab runs. traces.jsonl follows PrimeIntellect-ai/verifiers
// verifiers/v1/episode.py Episode.to_record as prime-rl's src/prime_rl/monitors/file.py FileMonitor.log_episodes writes
// it; results.jsonl follows verifiers/legacy/utils/save_utils.py state_to_output / save_outputs —
// fixtures/make_more_fixtures.py.

import { describe, expect, it } from "vitest";
import { fixture, imported, read } from "./read-dump.fixture.js";


describe("verifiers traces.jsonl (v1 Episode)", () => {
  const run = read(fixture("traces.jsonl"));

  it("is found from its first record; the first trace's last branch as messages, node tokens, logprobs on sampled tokens", () => {
    expect(run.problems).toEqual([]);
    const [s, failed] = run.samples;
    expect([s!.idx, s!.task_name, s!.total_reward, s!.termination]).toEqual([0, "math", 1.25, "no_tools_called"]);
    expect(s!.message_log.map((m) => [m.role, m.content, m.token_ids, m.generation_logprobs])).toEqual([
      ["system", "Answer briefly.", [1, 2], undefined],
      ["user", "2+2?", [3, 4], undefined],
      ["assistant", "4", [5, 8, 9], [0, -0.125, -0.0625]],
    ]);
    const fields = imported(s!).fields;
    expect(fields.branch).toEqual([0, 1, 3]);
    const nodes = (fields.trace as { nodes: unknown[] }).nodes;
    expect(nodes[3]).toEqual({ parent: 1, message: { reasoning_content: "2 and 2." }, sampled: true, timestamp: 3, mask: [false, true, true], is_content: [], advantages: [1, 1] });
    expect((nodes[2] as { message: unknown }).message).toEqual({ role: "assistant", content: "5" }); // off the branch: whole
    expect([failed!.termination, failed!.error, failed!.message_log]).toEqual(["error", "SandboxError: sandbox did not start", []]);
  });

  it("an episode without traces keeps all it has", () => {
    const line = JSON.parse(fixture("traces.jsonl").split("\n")[1]!);
    const { traces: _traces, ...rest } = line;
    expect(imported(run.samples[1]!)).toEqual({ format: "verifiers", fields: rest });
  });

  it("a record that is not as the writer writes it is named with its line and field", () => {
    const lines = fixture("traces.jsonl").trim().split("\n");
    const bad = JSON.parse(lines[0]!);
    bad.traces[0].nodes[3].logprobs = [-1];
    const partly = read([lines[1], JSON.stringify(bad)].join("\n"));
    expect(partly.samples).toHaveLength(1);
    expect(partly.problems).toEqual([{ line: 2, path: "traces[0].nodes[3].mask", message: expect.stringMatching(/^expected .*\(verifiers\)$/) }]);
  });
});

describe("verifiers results.jsonl (legacy RolloutOutput)", () => {
  // Found from its first record (its `metrics` key is not the lab's metrics line: it has no `lab/format`).
  const run = read(fixture("results.jsonl"));

  it("prompt then completion as messages; the trajectory's tokens on the assistant messages they line up with", () => {
    expect(run.problems).toEqual([]);
    const [s] = run.samples;
    expect([s!.idx, s!.task_name, s!.total_reward, s!.termination]).toEqual([0, "verifiers", 1, "correct_guess"]);
    expect(s!.message_log.map((m) => [m.role, m.content, m.token_ids, m.generation_logprobs])).toEqual([
      ["user", "Guess a number.", [], undefined],
      ["assistant", "7", [30], [-0.5]],
      ["user", "Higher.", [], undefined],
      ["assistant", "9", [31, 32], [-0.25, -0.125]],
    ]);
  });

  it("an errored rollout: termination error, the error text; every field but prompt, completion and reward kept", () => {
    const s = run.samples[1]!;
    expect([s.termination, s.error, s.total_reward]).toEqual(["error", "ModelError: context length exceeded", 0]);
    const line = JSON.parse(fixture("results.jsonl").split("\n")[1]!);
    const { prompt: _p, completion: _c, reward: _r, ...rest } = line;
    expect(imported(s)).toEqual({ format: "verifiers", fields: { ...rest, prompt_extras: [{}], completion_extras: [] } });
  });

  it("a record that is not as the writer writes it is named with its line and field", () => {
    const lines = fixture("results.jsonl").trim().split("\n");
    const bad = JSON.parse(lines[0]!);
    bad.completion[1].role = 3;
    const partly = read([lines[1], JSON.stringify(bad)].join("\n"), { format: "verifiers" });
    expect(partly.samples).toHaveLength(1);
    expect(partly.problems).toEqual([{ line: 2, path: "completion[1].role", message: expect.stringMatching(/^expected .*\(verifiers\)$/) }]);
  });
});
