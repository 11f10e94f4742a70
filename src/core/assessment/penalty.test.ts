import { describe, expect, it } from "vitest";
import { assessAssistantTurn, type InvalidActionPenaltyConfig } from "./invalid-action.js";
import {
  applyInvalidActionPenalty,
  penaltyScaleAtStep,
  sampleLocusPenalty,
  violationRateMetrics,
  violationsAtLocus,
} from "./penalty.js";
import type { Violation } from "./violations.js";

const v = (type: string, severity: number, locus: string): Violation => ({ type, severity, locus, detail: null });
const CFG: InvalidActionPenaltyConfig = { enabled: true, invalid_action_penalty: 0.5, malformed_thinking_penalty: 0.25 };

describe("violationsAtLocus (§4.6)", () => {
  const vs = [v("a", 1, "advantage"), v("r", 1, "reward")];
  const names = (xs: Violation[]) => xs.map((x) => x.type);
  it("routes by locus under auto (and null), everything under both, all-or-none under reward/advantage", () => {
    expect(names(violationsAtLocus(vs, "auto", "reward"))).toEqual(["r"]);
    expect(names(violationsAtLocus(vs, null, "advantage"))).toEqual(["a"]);
    expect(names(violationsAtLocus(vs, "both", "advantage"))).toEqual(["a", "r"]);
    expect(names(violationsAtLocus(vs, "reward", "reward"))).toEqual(["a", "r"]);
    expect(names(violationsAtLocus(vs, "reward", "advantage"))).toEqual([]);
    expect(names(violationsAtLocus(vs, "advantage", "advantage"))).toEqual(["a", "r"]);
  });
  it("raises on an unknown mode", () => {
    expect(() => violationsAtLocus(vs, "bogus", "reward")).toThrow("Unknown penalty_mode 'bogus'");
  });
});

describe("penaltyScaleAtStep (§4.6)", () => {
  const at = (s: Record<string, unknown> | undefined, step: number | null) =>
    penaltyScaleAtStep({ penalty_step_scale: s } as InvalidActionPenaltyConfig, step);
  it("is 1 without a schedule, start under constant or without a step", () => {
    expect(at(undefined, 5)).toBe(1);
    expect(at({}, 5)).toBe(1);
    expect(at({ start: 0.7 }, 5)).toBe(0.7);
    expect(at({ schedule: "constant", start: 0.3 }, null)).toBe(0.3);
    expect(at({ schedule: "linear", start: 1, end: 0, steps: 4 }, null)).toBe(1);
  });
  it("interpolates linearly, clamped: 0→1 over 10 steps is 0, 0.5, 1, 1 at 0, 5, 10, 100", () => {
    const s = { schedule: "linear", start: 0, end: 1, steps: 10 };
    expect([0, 5, 10, 100].map((step) => at(s, step))).toEqual([0, 0.5, 1, 1]);
    expect(at(s, -3)).toBe(0);
    expect(at({ schedule: "linear", start: 1, end: 0, steps: 4 }, 1)).toBe(0.75);
  });
  it("returns end for steps <= 0 and start when end is absent", () => {
    expect(at({ schedule: "linear", start: 0.2, end: 0.8, steps: 0 }, 5)).toBe(0.8);
    expect(at({ schedule: "linear", start: 0.2, steps: 10 }, 5)).toBe(0.2);
  });
  it("raises on an unknown schedule (only when a step is given)", () => {
    expect(() => at({ schedule: "cosine" }, 5)).toThrow("Unknown penalty_step_scale schedule 'cosine'");
    expect(at({ schedule: "cosine" }, null)).toBe(1);
  });
});

describe("sampleLocusPenalty (§4.6)", () => {
  const log = [
    { role: "user" },
    { role: "assistant", invalid_action_violations: [v("env_invalid_action", 1, "reward"), v("malformed_thinking", 0.5, "advantage")] },
    { role: "environment" },
    { role: "assistant", invalid_action_violations: [v("unexecuted_pattern", 1, "advantage")] },
    { role: "assistant", invalid_action_violations: [] },
  ];
  it("sums base × stamped severity per locus and mode", () => {
    const both = (mode: InvalidActionPenaltyConfig["penalty_mode"]) => {
      const cfg = { ...CFG, penalty_mode: mode };
      return [sampleLocusPenalty(log, cfg, "reward"), sampleLocusPenalty(log, cfg, "advantage")];
    };
    expect(both("auto")).toEqual([0.5, 0.625]);
    expect(both("reward")).toEqual([1.125, 0]);
    expect(both("advantage")).toEqual([0, 1.125]);
    expect(both("both")).toEqual([1.125, 1.125]);
  });
  it("uses the stamped severity, not the config's weights, and applies the step scale", () => {
    const cfg = { ...CFG, severity_weights: { env_invalid_action: 10 } };
    expect(sampleLocusPenalty(log, cfg)).toBe(0.5);
    const scaled = { ...CFG, penalty_step_scale: { schedule: "linear" as const, start: 0, end: 1, steps: 10 } };
    expect(sampleLocusPenalty(log, scaled, "reward", 5)).toBe(0.25);
    expect(sampleLocusPenalty(log, scaled, "reward", null)).toBe(0);
  });
  it("is 0 without penalties", () => {
    expect(sampleLocusPenalty(log, { enabled: true }, "advantage")).toBe(0);
  });
});

describe("violationRateMetrics (§4.6)", () => {
  it("gives per-message rates with denominator max(N, 1), keys only for types seen", () => {
    expect(violationRateMetrics({}, 0)).toEqual({
      num_assistant_messages: 0,
      invalid_action_msg_rate: 0,
      malformed_thinking_msg_rate: 0,
    });
    expect(violationRateMetrics({ unexecuted_pattern: 5 }, 0)).toEqual({
      num_assistant_messages: 0,
      invalid_action_msg_rate: 5,
      malformed_thinking_msg_rate: 0,
      "violation_rate/unexecuted_pattern": 5,
    });
  });
  it("reproduces the §5.6 worked scenario's rates", () => {
    expect(violationRateMetrics({ env_invalid_action: 3, malformed_thinking: 2 }, 5)).toEqual({
      num_assistant_messages: 5,
      invalid_action_msg_rate: 0.6,
      malformed_thinking_msg_rate: 0.4,
      "violation_rate/env_invalid_action": 0.6,
      "violation_rate/malformed_thinking": 0.4,
    });
  });
  it("counts unknown types in neither rate", () => {
    const m = violationRateMetrics({ some_other_type: 2 }, 4);
    expect(m.invalid_action_msg_rate).toBe(0);
    expect(m.malformed_thinking_msg_rate).toBe(0);
    expect(m["violation_rate/some_other_type"]).toBe(0.5);
  });
});

describe("applyInvalidActionPenalty (§4.7)", () => {
  it("leaves the batch untouched (no unshaped key) when cfg is null or disabled", () => {
    const batch = { total_reward: [1, 0] };
    expect(applyInvalidActionPenalty(batch, null)).toEqual({ total_reward: [1, 0] });
    expect(applyInvalidActionPenalty(batch, { enabled: false, invalid_action_penalty: 9 })).toEqual({ total_reward: [1, 0] });
  });

  it("legacy path: the spec's test vectors", () => {
    const out = applyInvalidActionPenalty(
      { total_reward: [1, 1, 1], invalid_action_count: [0, 1, 2], malformed_thinking_count: [1, 0, 2] },
      CFG,
    );
    expect(out.total_reward).toEqual([0.75, 0.5, -0.5]);
    expect(out.unshaped_total_reward).toEqual([1, 1, 1]);
    const floored = applyInvalidActionPenalty(
      { total_reward: [0, 1], invalid_action_count: [3, 0], malformed_thinking_count: [0, 0] },
      { enabled: true, invalid_action_penalty: 1, reward_floor: -1 },
    );
    expect(floored.total_reward).toEqual([-1, 1]);
  });

  it("legacy path: keeps an existing unshaped reward, never mutates the input, and ignores severity/step", () => {
    const batch = {
      total_reward: [0.8, 0],
      unshaped_total_reward: [1, 0],
      invalid_action_count: [1, 0],
      malformed_thinking_count: [0, 0],
    };
    const cfg = { ...CFG, penalty_step_scale: { start: 0 }, severity_weights: { env_invalid_action: 3 } };
    const out = applyInvalidActionPenalty(batch, cfg, 5);
    expect(out.unshaped_total_reward).toEqual([1, 0]);
    expect(out.total_reward[0]).toBeCloseTo(0.3, 12);
    expect(out.total_reward[1]).toBe(0);
    expect(batch.total_reward).toEqual([0.8, 0]);
    expect(out).not.toBe(batch);
  });

  it("legacy path: raises without the counts and asserts non-negative penalties", () => {
    expect(() => applyInvalidActionPenalty({ total_reward: [1] }, { enabled: true })).toThrow(
      "invalid_action_penalty is enabled but the rollout did not produce ['invalid_action_count', 'malformed_thinking_count']",
    );
    expect(() =>
      applyInvalidActionPenalty(
        { total_reward: [1], invalid_action_count: [1], malformed_thinking_count: [0] },
        { enabled: true, invalid_action_penalty: -1 },
      ),
    ).toThrow();
  });

  it("graded path: only the reward locus reaches total_reward, with floor and step scale", () => {
    const log = [[{ invalid_action_violations: [v("env_invalid_action", 1, "reward"), v("unexecuted_pattern", 1, "advantage")] }]];
    expect(applyInvalidActionPenalty({ total_reward: [1], message_log: log }, CFG).total_reward).toEqual([0.5]);
    expect(
      applyInvalidActionPenalty({ total_reward: [0], message_log: log }, { ...CFG, reward_floor: -0.2 }).total_reward,
    ).toEqual([-0.2]);
    const scaled = { ...CFG, penalty_step_scale: { schedule: "linear" as const, start: 0, end: 1, steps: 10 } };
    expect(applyInvalidActionPenalty({ total_reward: [1], message_log: log }, scaled, 5).total_reward).toEqual([0.75]);
    // No >= 0 assertion here: a negative base penalty raises the reward.
    expect(
      applyInvalidActionPenalty({ total_reward: [1], message_log: log }, { ...CFG, invalid_action_penalty: -1 }).total_reward,
    ).toEqual([2]);
  });

  it("reproduces the §5.6 worked scenario: graded [1.0, -1.5], legacy [1.0, -2.0], advantage spans -0.125", () => {
    const assessCfg: InvalidActionPenaltyConfig = { ...CFG, use_environment_flags: true, invalid_tool_call_patterns: [] };
    const turn = (text: string, invalid: boolean, style = "paired") => ({
      role: "assistant",
      invalid_action_violations: assessAssistantTurn(text, assessCfg, { invalid_action: invalid }, style).violations,
    });
    const s0 = [
      turn("<think>plan</think>\n<tool_call>run_shell ls</tool_call>", false),
      turn('<tool_call>{"name": "task_complete", "arguments": {}}</tool_call>', false),
    ];
    const s1 = [
      turn("I will just talk.", true),
      turn("<think>oops <tool_call>{run_shell, command:5}</tool_call>", true),
      turn("</think>done", true),
    ];
    const typesOf = (log: typeof s0) => log.map((m) => m.invalid_action_violations.map((x) => x.type));
    expect(typesOf(s0)).toEqual([[], []]);
    expect(typesOf(s1)).toEqual([
      ["env_invalid_action"],
      ["env_invalid_action", "malformed_thinking"],
      ["env_invalid_action", "malformed_thinking"],
    ]);

    const graded = applyInvalidActionPenalty({ total_reward: [1, 0], message_log: [s0, s1] }, CFG);
    expect(graded.total_reward).toEqual([1, -1.5]);
    expect(graded.unshaped_total_reward).toEqual([1, 0]);
    // The advantage-locus penalty of each of S1's turns 2 and 3 (what overwrites their spans).
    expect(s1.map((m) => sampleLocusPenalty([m], CFG, "advantage"))).toEqual([0, 0.125, 0.125]);

    const counts = (log: typeof s0, pick: (t: string) => boolean) =>
      log.filter((m) => m.invalid_action_violations.some((x) => pick(x.type))).length;
    const legacy = applyInvalidActionPenalty(
      {
        total_reward: [1, 0],
        invalid_action_count: [s0, s1].map((l) => counts(l, (t) => t === "env_invalid_action")),
        malformed_thinking_count: [s0, s1].map((l) => counts(l, (t) => t === "malformed_thinking")),
      },
      CFG,
    );
    expect(legacy.total_reward).toEqual([1, -2]);

    // With closing_only, S0 turn 1 becomes malformed and S1 turn 3 becomes clean of thinking violations.
    expect(turn("<think>plan</think>\n<tool_call>run_shell ls</tool_call>", false, "closing_only").invalid_action_violations.map((x) => x.type)).toEqual(["malformed_thinking"]);
    expect(turn("</think>done", true, "closing_only").invalid_action_violations.map((x) => x.type)).toEqual(["env_invalid_action"]);
  });
});

describe("config values read as the reference's Python reads them (None, [] and {} from an API caller)", () => {
  const flagged = { invalid_action: true };
  it("a truth test turns None, [] and {} off: enabled, use_environment_flags, enable_schema_validation", () => {
    for (const off of [null, [], {}]) {
      const cfg = { enabled: true, use_environment_flags: off } as unknown as InvalidActionPenaltyConfig;
      expect(assessAssistantTurn("clean", cfg, flagged).violations).toEqual([]);
      const batch = { total_reward: [1], invalid_action_count: [1], malformed_thinking_count: [0] };
      expect(applyInvalidActionPenalty(batch, { enabled: off, invalid_action_penalty: 0.5 } as unknown as InvalidActionPenaltyConfig)).toBe(batch);
    }
    expect(assessAssistantTurn("clean", { enabled: true, use_environment_flags: true }, flagged).violations.map((v) => v.type)).toEqual(["env_invalid_action"]);
  });

  it("float() and int() of None raise, as the reference's do, where Number(null) would have been a silent 0", () => {
    const at = (scale: Record<string, unknown>) => () => penaltyScaleAtStep({ penalty_step_scale: scale } as unknown as InvalidActionPenaltyConfig, 5);
    expect(at({ schedule: null, start: 0.3 })).toThrow("Unknown penalty_step_scale schedule None");
    expect(at({ schedule: "linear", start: 0, end: null, steps: 10 })).toThrow("TypeError: float() argument must be a string or a real number, not 'NoneType'");
    expect(at({ schedule: "linear", start: 0, end: 1, steps: null })).toThrow("TypeError: int() argument");
    expect(at({ schedule: "linear", start: 0, end: 1, steps: 10 })()).toBe(0.5);
    const weighted = { enabled: true, severity_weights: { env_invalid_action: null } } as unknown as InvalidActionPenaltyConfig;
    expect(() => assessAssistantTurn("clean", weighted, flagged)).toThrow("TypeError: float()");
  });
});
