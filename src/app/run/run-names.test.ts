import { describe, expect, it } from "vitest";
import { RunModel } from "./run-model.js";
import { exportFileName, runTitle, scenarioLabel } from "./run-names.js";

const at = new Date(2026, 11, 1, 20, 38, 41);
const scenario = (env: string, policy: Record<string, unknown>) => ({ envs: { t: { env, config: {} } }, policy });

function model(samples: number, ended: number): RunModel {
  const m = new RunModel();
  m.apply({ type: "rollout_start", t: 0, mode: "sync", maxRolloutTurns: 2, maxSeqLen: 64, samples: Array.from({ length: samples }, (_, i) => ({ sample: i, idx: i, task_name: "t", message_log: [], extra_env_info: null })) });
  for (let i = 0; i < ended; i++) m.apply({ type: "sample_end", t: 1, sample: i, idx: i, termination: "terminated", error: null, totalReward: 1, turns: 1 });
  return m;
}

describe("run names", () => {
  it("name the environment and the policy (a model policy by its model)", () => {
    expect(scenarioLabel(scenario("calculator", { kind: "oracle" }))).toBe("calculator · oracle");
    expect(scenarioLabel(scenario("sliding_puzzle", { kind: "model", model: "builtin:tiny" }))).toBe("sliding_puzzle · model builtin:tiny");
    expect(scenarioLabel({ envs: { a: { env: "calculator" }, b: { env: "workspace" } }, policy: { kind: "scripted" } })).toBe("calculator+workspace · scripted");
    expect(scenarioLabel(null)).toBeNull();
  });

  it("title saved runs by mode, size, environment, policy and time; a failed one by what finished", () => {
    const time = at.toLocaleTimeString();
    expect(runTitle(model(3, 3), scenario("calculator", { kind: "oracle" }), "finished", at)).toBe(`sync · 3 samples · calculator · oracle · ${time}`);
    expect(runTitle(model(3, 1), scenario("calculator", { kind: "oracle" }), "failed", at)).toBe(`failed · sync · 1 of 3 samples finished · calculator · oracle · ${time}`);
    expect(runTitle(model(2, 2), null, "finished", at)).toBe(`sync · 2 samples · ${time}`);
  });

  it("name export files so a downloads folder says which run is which", () => {
    expect(exportFileName(model(4, 4), scenario("sliding_puzzle", { kind: "model", model: "org/name" }), at)).toBe("rollout-sliding_puzzle-model_org_name-4-samples-20261201-203841.jsonl");
    expect(exportFileName(null, null, at)).toBe("rollout-20261201-203841.jsonl");
  });
});
