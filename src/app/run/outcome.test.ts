import { describe, expect, it } from "vitest";
import type { RolloutEvent } from "../../core/index.js";
import { nextFailure, runOutcomes, sampleOutcome, statusDetail, turnProblems } from "./outcome.js";
import { RunModel } from "./run-model.js";

/** A run of `n` samples with one turn each; `end(i)` says how sample i ends. */
function run(ends: { termination: "terminated" | "max_turns" | "error" | "cancelled" | "truncated_response"; reward: number; truncated?: boolean; violation?: string }[]) {
  const model = new RunModel();
  model.apply({
    type: "rollout_start",
    t: 0,
    mode: "sync",
    maxRolloutTurns: 2,
    maxSeqLen: 64,
    samples: ends.map((_, i) => ({ sample: i, idx: i, task_name: "t", message_log: [{ role: "user", content: "q", token_ids: [1] }], extra_env_info: null })),
  });
  ends.forEach((e, i) => {
    const events: RolloutEvent[] = [
      { type: "turn_start", t: 1, sample: i, turn: 0, inputTokens: 1 },
      { type: "assistant_message", t: 2, sample: i, turn: 0, message: { role: "assistant", content: "a", token_ids: [2] }, truncated: e.truncated ?? false },
      {
        type: "env_step",
        t: 3,
        sample: i,
        turn: 0,
        observation: { role: "environment", content: "o", token_ids: [3] },
        reward: e.reward,
        rewardComponents: null,
        terminated: e.termination === "terminated",
        truncatedContext: false,
        violations: e.violation ? [{ type: e.violation, severity: 1, locus: "advantage", detail: null }] : [],
        metadata: null,
      },
      { type: "sample_end", t: 4, sample: i, idx: i, termination: e.termination, error: e.termination === "error" ? "boom" : null, totalReward: e.reward, turns: 1 },
    ];
    for (const event of events) model.apply(event);
  });
  return model;
}

describe("outcomes", () => {
  it("tell a win from a loss the environment ended alike, and name limits, errors and stops", () => {
    const model = run([
      { termination: "terminated", reward: 1 },
      { termination: "terminated", reward: 0 },
      { termination: "max_turns", reward: 0 },
      { termination: "truncated_response", reward: 0, truncated: true },
      { termination: "error", reward: 0 },
      { termination: "cancelled", reward: 0 },
    ]);
    expect(model.samples.map(sampleOutcome)).toEqual(["solved", "failed", "cut", "cut", "error", "stopped"]);
    expect(sampleOutcome({ state: "generating", termination: null, totalReward: 0 })).toBeNull();
  });

  it("judge an imported run's own endings: its limits are cut off, any other reason (or none recorded) by the reward", () => {
    const done = (termination: string, totalReward: number) => sampleOutcome({ state: "done", termination: termination as never, totalReward });
    // SkyRL's `stop`, verifiers' stop conditions, a dump that names no ending (NeMo RL's): the episode ended.
    expect([done("stop", 1), done("no_tools_called", 1.25), done("correct_guess", 1), done("not_recorded", 1), done("not_recorded", 0)]).toEqual(["solved", "solved", "solved", "solved", "failed"]);
    // Their limits: an OpenAI finish reason, NeMo Gym's and verifiers' names.
    expect([done("length", 1), done("max_output_tokens", 0), done("max_turns_reached", 1), done("prompt_too_long", 0)]).toEqual(["cut", "cut", "cut", "cut"]);
  });

  it("sum a run up: solved k of N, the mean reward, truncations and turns with violations", () => {
    const model = run([
      { termination: "terminated", reward: 1 },
      { termination: "terminated", reward: 0, violation: "malformed_tool_call" },
      { termination: "max_turns", reward: 0.5, truncated: true },
    ]);
    expect(runOutcomes(model.samples)).toEqual({
      samples: 3,
      finished: 3,
      counts: { solved: 1, failed: 1, cut: 1, error: 0, stopped: 0 },
      meanReward: 0.5,
      truncatedResponses: 1,
      turnsWithViolations: 1,
    });
  });

  it("a finished run with errors says so; a clean one is just finished", () => {
    const errors = runOutcomes(run([{ termination: "error", reward: 0 }, { termination: "error", reward: 0 }, { termination: "error", reward: 0 }]).samples);
    expect(statusDetail("finished", errors)).toBe("with 3 errors");
    expect(statusDetail("finished", runOutcomes(run([{ termination: "error", reward: 0 }, { termination: "cancelled", reward: 0 }]).samples))).toBe("with 1 error and 1 stopped");
    expect(statusDetail("finished", runOutcomes(run([{ termination: "terminated", reward: 0 }]).samples))).toBeNull();
    expect(statusDetail("running", errors)).toBeNull();
  });

  it("name what went wrong inside a turn", () => {
    const model = run([{ termination: "max_turns", reward: 0, truncated: true, violation: "schema_args" }]);
    const s = model.samples[0]!;
    expect(turnProblems(s, s.turns[0]!)).toEqual(["response truncated at its token limit", "a tool call whose arguments do not fit its schema"]);
    const clean = run([{ termination: "terminated", reward: 1 }]).samples[0]!;
    expect(turnProblems(clean, clean.turns[0]!)).toEqual([]);
  });
});

describe("nextFailure (the n / N keys)", () => {
  it("goes to the next sample that did not end well, round the batch, forwards or back; null when all did", () => {
    const outcomes = ["solved", "failed", "solved", "error", "cut", null] as const;
    expect(nextFailure(outcomes, 0)).toBe(1);
    expect(nextFailure(outcomes, 1)).toBe(3);
    expect(nextFailure(outcomes, 4)).toBe(1);
    expect(nextFailure(outcomes, 1, true)).toBe(4);
    expect(nextFailure(["solved", "solved"], 0)).toBeNull();
  });

  it("under a filter, only the rows it shows (only drifting samples)", () => {
    const outcomes = ["solved", "failed", "solved", "error", "cut", null] as const;
    expect(nextFailure(outcomes, 0, false, [0, 3, 5])).toBe(3);
    expect(nextFailure(outcomes, 3, false, [0, 3, 5])).toBe(3); // round the batch to itself: the only one shown
    expect(nextFailure(outcomes, 3, true, [1, 3, 4])).toBe(1);
    expect(nextFailure(outcomes, 0, false, [0, 2])).toBeNull();
  });
});
