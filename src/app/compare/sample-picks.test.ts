import { describe, expect, it } from "vitest";
import type { TerminationReason } from "../../core/index.js";
import { RunModel } from "../run/run-model.js";
import { filterSamples, matchesQuery, nextFailureAfter, optionText, optionTitle, samePromptSuccess, type PickSample } from "./sample-picks.js";

type Ending = "solved" | "failed" | "cut" | "error" | "stopped" | "running";
const ENDINGS: Record<Exclude<Ending, "running">, { termination: TerminationReason; totalReward: number }> = {
  solved: { termination: "terminated", totalReward: 1 },
  failed: { termination: "terminated", totalReward: 0 },
  cut: { termination: "max_turns", totalReward: 0 },
  error: { termination: "error", totalReward: 0 },
  stopped: { termination: "cancelled", totalReward: 0 },
};

/** A sample at position `i` that ended as `ending`, given `prompt` (its one user message) in task `task`. */
function sample(i: number, ending: Ending, prompt = `p${i}`, task = "calc"): PickSample {
  return {
    sample: i,
    idx: i,
    task,
    ...(ending === "running" ? { state: "generating" as const, termination: null, totalReward: 0 } : { state: "done" as const, ...ENDINGS[ending] }),
    error: ending === "error" ? "the environment threw: boom" : null,
    messages: [
      { role: "user", content: prompt, token_ids: [] },
      { role: "assistant", content: `answer ${i}`, token_ids: [] },
    ],
    promptMessages: 1,
  };
}
const run = (...endings: Ending[]) => endings.map((e, i) => sample(i, e));
const indices = (samples: readonly PickSample[]) => samples.map((s) => s.sample);

describe("the sample picker's filter", () => {
  const samples = Array.from({ length: 30 }, (_, i) => sample(i, (["solved", "failed", "cut", "error", "stopped"] as const)[i % 5]!, `p${i}`, i === 7 ? "number_guess_with_a_long_name" : "calc"));

  it("an index typed digit by digit: its prefix matches, the exact index comes first", () => {
    expect(indices(filterSamples(samples, "1").shown)).toEqual([1, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
    expect(indices(filterSamples(samples, "17").shown)).toEqual([17]);
    expect(indices(filterSamples(samples, " 2 ").shown)).toEqual([2, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29]);
    expect(filterSamples(samples, "99")).toEqual({ shown: [], total: 0 });
  });

  it("a part of the task name, any case", () => {
    expect(indices(filterSamples(samples, "GUESS").shown)).toEqual([7]);
    expect(filterSamples(samples, "calc").total).toBe(29);
  });

  it("an outcome word or its beginning; every word must match", () => {
    expect(indices(filterSamples(samples, "failed").shown)).toEqual([1, 6, 11, 16, 21, 26]);
    expect(indices(filterSamples(samples, "fail").shown)).toEqual([1, 6, 11, 16, 21, 26]);
    expect(indices(filterSamples(samples, "cut").shown)).toEqual([2, 7, 12, 17, 22, 27]);
    expect(indices(filterSamples(samples, "cut off").shown)).toEqual([2, 7, 12, 17, 22, 27]);
    expect(indices(filterSamples(samples, "error").shown)).toEqual([3, 8, 13, 18, 23, 28]);
    expect(indices(filterSamples(samples, "failed 2").shown)).toEqual([21, 26]);
    expect(indices(filterSamples(samples, "guess cut").shown)).toEqual([7]);
    expect(matchesQuery(sample(0, "running"), "running")).toBe(true);
    expect(matchesQuery(sample(0, "running"), "solved")).toBe(false);
    expect(matchesQuery(sample(0, "solved"), "")).toBe(true);
  });

  it("renders at most the limit and counts the rest", () => {
    const many = Array.from({ length: 300 }, (_, i) => sample(i, i % 3 ? "solved" : "failed"));
    const all = filterSamples(many, "");
    expect(all.shown).toHaveLength(50);
    expect(all.total).toBe(300);
    expect(all.shown[49]!.sample).toBe(49);
    const failed = filterSamples(many, "failed", 10);
    expect(indices(failed.shown)).toEqual([0, 3, 6, 9, 12, 15, 18, 21, 24, 27]);
    expect(failed.total).toBe(100);
  });

  it("the option's text names index, task, outcome and reward; its title holds the long parts whole", () => {
    const s = sample(3, "error", "p", "a".repeat(300));
    expect(optionText(sample(4, "solved"))).toBe("sample 4 · calc · solved · reward +1");
    expect(optionText(sample(2, "cut"))).toBe("sample 2 · calc · cut off · reward 0");
    expect(optionTitle(s)).toContain(`task ${"a".repeat(300)}`);
    expect(optionTitle(s)).toContain("error: the environment threw: boom");
  });
});

describe("compare with the next failure", () => {
  it("the next failed, errored or cut-off sample after A, skipping solved, stopped and running ones, round the batch", () => {
    const samples = run("failed", "solved", "stopped", "running", "cut", "solved", "error");
    expect(nextFailureAfter(samples, 0)).toBe(4);
    expect(nextFailureAfter(samples, 4)).toBe(6);
    expect(nextFailureAfter(samples, 5)).toBe(6);
    // Round the end of the batch.
    expect(nextFailureAfter(samples, 6)).toBe(0);
  });

  it("none when no other sample failed (A itself does not count)", () => {
    expect(nextFailureAfter(run("failed", "solved", "solved"), 0)).toBeNull();
    expect(nextFailureAfter(run("solved", "solved"), 1)).toBeNull();
    expect(nextFailureAfter([], 0)).toBeNull();
  });
});

describe("compare with a success of the same prompt", () => {
  // Samples 0, 1, 3 and 5 were given prompt P; 2 and 4 prompt Q; 6 prompt P in another task.
  const samples = [
    sample(0, "failed", "P"),
    sample(1, "failed", "P"),
    sample(2, "solved", "Q"),
    sample(3, "solved", "P"),
    sample(4, "failed", "Q"),
    sample(5, "solved", "P"),
    sample(6, "solved", "P", "other_task"),
  ];

  it("a solved sample of the same task and prompt, the first after A round the batch", () => {
    expect(samePromptSuccess(samples, 0)).toBe(3);
    expect(samePromptSuccess(samples, 3)).toBe(5);
    expect(samePromptSuccess(samples, 5)).toBe(3);
    expect(samePromptSuccess(samples, 4)).toBe(2);
  });

  it("none when no other sample of that prompt was solved (another task's same text does not count)", () => {
    expect(samePromptSuccess(samples, 2)).toBeNull();
    expect(samePromptSuccess(samples, 6)).toBeNull();
    expect(samePromptSuccess([sample(0, "solved", "P"), sample(1, "failed", "P"), sample(2, "solved", "PP")], 1)).toBe(0);
    expect(samePromptSuccess([sample(0, "failed", "P"), sample(1, "failed", "P"), sample(2, "solved", "PP")], 0)).toBeNull();
    expect(samePromptSuccess(samples, 9)).toBeNull();
  });

  it("the prompt is every message before the first turn, role and content, as a run model holds it", () => {
    const m = new RunModel();
    const prompt = (...contents: string[]) => contents.map((content, i) => ({ role: i ? ("user" as const) : ("system" as const), content, token_ids: [] }));
    m.apply({
      type: "rollout_start",
      t: 0,
      mode: "sync",
      maxRolloutTurns: 1,
      maxSeqLen: 100,
      samples: [prompt("sys", "Solve 1+1"), prompt("sys", "Solve 1+1"), prompt("sys", "Solve 1+2"), prompt("other sys", "Solve 1+1")].map((message_log, i) => ({
        sample: i,
        idx: i,
        task_name: "calc",
        message_log,
        extra_env_info: { seed: i },
      })),
    });
    for (let i = 0; i < 4; i++) m.apply({ type: "sample_end", t: 1, sample: i, idx: i, turns: 0, termination: "terminated", totalReward: i === 0 ? 0 : 1, error: null });
    expect(samePromptSuccess(m.samples, 0)).toBe(1);
    // Only sample 1 shares sample 0's system and user messages.
    m.samples[1]!.totalReward = 0;
    expect(samePromptSuccess(m.samples, 0)).toBeNull();
  });
});
