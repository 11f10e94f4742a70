import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runGroups } from "./groups.js";
import { importJsonl } from "./jsonl.js";
import type { SampleView } from "./run-model.js";
import { compileFilter } from "./sample-filter.js";

const view = (n: number, prompt: string, reward: number): SampleView =>
  ({ sample: n, idx: n, task: "t", state: "done", messages: [{ role: "user", content: prompt, token_ids: [] }], promptMessages: 1, initialMetadata: null, turns: [], totalReward: reward, termination: "terminated", error: null }) as SampleView;

describe("GRPO groups", () => {
  it("without a dump's id: identical prompts together; the rewards' spread; zero-variance groups counted", () => {
    const samples = [view(0, "p1", 1), view(1, "p2", 0), view(2, "p1", 0), view(3, "p2", 0), view(4, "p3", 1)];
    const { groups, of, zeroVariance } = runGroups(samples);
    expect(groups.map((g) => [g.by, g.samples, g.meanReward, g.std])).toEqual([
      ["prompt", [0, 2], 0.5, 0.5],
      ["prompt", [1, 3], 0, 0],
      ["prompt", [4], 1, 0],
    ]);
    expect(zeroVariance).toBe(1); // p2: both 0 (a group of one has no variance to speak of)
    expect(of.get(3)!.samples).toEqual([1, 3]);
  });

  it("a group with a sample still under way is not zero-variance yet (its reward so far is no reward), nor a group of one", () => {
    const running = { ...view(1, "p1", 0), state: "generating", termination: null } as SampleView;
    const live = runGroups([view(0, "p1", 0), running, view(2, "p2", 1)]);
    expect([live.zeroVariance, live.groups.map((g) => g.zeroVariance)]).toEqual([0, [false, false]]);
    const zero = compileFilter("zero_variance", { groups: live });
    if (!("test" in zero) || !zero.test) throw new Error("did not compile");
    expect([view(0, "p1", 0), running, view(2, "p2", 1)].filter(zero.test)).toEqual([]);
    const done = runGroups([view(0, "p1", 0), view(1, "p1", 0), view(2, "p2", 1)]);
    expect([done.zeroVariance, done.groups.map((g) => g.zeroVariance)]).toEqual([1, [true, false]]);
  });

  it("a dump's group id (verl's uid) groups its samples; the filter reads group_size, group_std and zero_variance", () => {
    const dump = readFileSync(join(import.meta.dirname, "../../scenario/imports/fixtures/5.jsonl"), "utf8");
    const { model } = importJsonl(dump);
    const run = runGroups(model.samples, model.finalBatch);
    const { groups } = run;
    expect(groups.map((g) => [g.key, g.by, g.samples, g.std])).toEqual([["uid=a1b2", "uid", [0, 1], 0.5]]);
    const kept = (text: string) => {
      const c = compileFilter(text, { batch: model.finalBatch, groups: run });
      if ("error" in c) throw new Error(c.error.message);
      return model.samples.filter((s) => c.test!(s)).map((s) => s.sample);
    };
    expect(kept("group_size == 2 and group_std > 0")).toEqual([0, 1]);
    expect(kept("zero_variance")).toEqual([]);
    expect(kept('group == "uid=a1b2"')).toEqual([0, 1]);
  });

  it("verl's newer per-rollout uid ({prompt uid}_{session}_{index}) groups by its prompt's part", () => {
    const line = (uid: string, score: number) => JSON.stringify({ input: "q", output: `a${score}`, gts: "4", score, step: 7, uid });
    const { model } = importJsonl([line("p1_0_0", 1), line("p1_1_0", 0), line("p_2_0_0", 1)].join("\n"));
    const { groups } = runGroups(model.samples, model.finalBatch);
    expect(groups.map((g) => [g.key, g.samples, g.std])).toEqual([
      ["prompt_uid=p1", [0, 1], 0.5],
      ["prompt_uid=p_2", [2], 0],
    ]);
  });
});
