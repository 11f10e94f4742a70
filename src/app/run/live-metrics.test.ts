import { describe, expect, it } from "vitest";
import {
  BatchedDataDict,
  byteLevelTokenizer as tok,
  runAsyncMultiTurnRollout,
  runMultiTurnRollout,
  type EnvironmentInterface,
  type EnvironmentReturn,
  type EnvMessage,
  type Metadata,
  type RolloutEvent,
  type RolloutMode,
  type TerminationReason,
  type Violation,
} from "../../core/index.js";
import { scriptedPolicy } from "../../policy/scripted.js";
import { liveMetrics } from "./live-metrics.js";
import { RunModel } from "./run-model.js";

// ---------------------------------------------------------------------------------------------------------------
// Hand-made event streams

const ids = (n: number) => Array.from({ length: n }, (_, i) => i + 1);
const violation = (type: string): Violation => ({ type, severity: 1, locus: "reward", detail: null });

interface TurnSpec {
  gen: number;
  obs?: number;
  reward?: number;
  terminated?: boolean;
  truncatedContext?: boolean;
  responseTruncated?: boolean;
  violations?: string[];
  /** The generation failed: only `turn_start` arrives. */
  failed?: boolean;
}

interface SampleSpec {
  turns: TurnSpec[];
  end: TerminationReason;
}

/** The events of a run whose samples proceed one after the other (the metrics do not depend on interleaving). */
function events(mode: RolloutMode, maxRolloutTurns: number, samples: SampleSpec[]): RolloutEvent[] {
  const out: RolloutEvent[] = [
    {
      type: "rollout_start",
      t: 0,
      mode,
      samples: samples.map((_, sample) => ({
        sample,
        idx: 100 + sample,
        task_name: "t",
        message_log: [{ role: "user", content: "p", token_ids: ids(3) }],
        extra_env_info: { turn: 0 },
      })),
      maxRolloutTurns,
      maxSeqLen: 1024,
    },
  ];
  let t = 1;
  samples.forEach((s, sample) => {
    let total = 0;
    s.turns.forEach((turn, k) => {
      out.push({ type: "turn_start", t: t++, sample, turn: k, inputTokens: 10 * (k + 1) });
      for (let i = 0; i < Math.min(turn.gen, 2); i++) out.push({ type: "token", t: t++, sample, turn: k, tokenId: 1, text: "x" });
      if (turn.failed) return;
      out.push({
        type: "assistant_message",
        t: t++,
        sample,
        turn: k,
        message: { role: "assistant", content: "x".repeat(turn.gen), token_ids: ids(turn.gen) },
        truncated: Boolean(turn.responseTruncated),
      });
      total += turn.reward ?? 0;
      out.push({
        type: "env_step",
        t: t++,
        sample,
        turn: k,
        observation: { role: "environment", content: "o", token_ids: ids(turn.obs ?? 1) },
        reward: turn.reward ?? 0,
        rewardComponents: null,
        terminated: Boolean(turn.terminated),
        truncatedContext: Boolean(turn.truncatedContext),
        violations: (turn.violations ?? []).map(violation),
        metadata: { turn: k + 1 },
      });
    });
    out.push({
      type: "sample_end",
      t: t++,
      sample,
      idx: 100 + sample,
      termination: s.end,
      error: s.end === "error" ? "generation failed: boom" : null,
      totalReward: total,
      turns: s.turns.length,
    });
  });
  return out;
}

function modelOf(evs: readonly RolloutEvent[]): RunModel {
  const model = new RunModel();
  for (const e of evs) model.apply(e);
  return model;
}

/**
 * Five samples, max 3 turns:
 * S0 ends by the environment on turn 2; S1 runs all 3 turns with a response cut on its last one; S2's second
 * generation fails (error); S3's first observation overflows the context; S4 ends by the environment on its
 * last allowed turn.
 */
function scenario(mode: RolloutMode): SampleSpec[] {
  return [
    { turns: [{ gen: 4, obs: 2, violations: ["env_invalid_action"] }, { gen: 6, obs: 2, reward: 1, terminated: true }], end: "terminated" },
    {
      turns: [
        { gen: 5, obs: 3, reward: 0.5 },
        { gen: 5, obs: 3, violations: ["malformed_thinking", "env_invalid_action"] },
        { gen: 5, obs: 3, responseTruncated: true },
      ],
      end: mode === "sync" ? "max_turns" : "truncated_response",
    },
    { turns: [{ gen: 3, obs: 1 }, { gen: 0, failed: true }], end: "error" },
    { turns: [{ gen: 7, obs: 0, truncatedContext: true }], end: "truncated_context" },
    {
      turns: [{ gen: 2, obs: 1 }, { gen: 2, obs: 1 }, { gen: 2, obs: 1, reward: 2, terminated: true, violations: ["malformed_thinking"] }],
      end: "terminated",
    },
  ];
}

const tokenAndRewardKeys = {
  mean_total_tokens_per_sample: 58 / 5,
  mean_gen_tokens_per_sample: 41 / 5,
  max_gen_tokens_per_sample: 15,
  mean_env_tokens_per_sample: 17 / 5,
  mean_total_reward: 3.5 / 5,
  max_total_reward: 2,
  min_total_reward: 0,
};

describe("liveMetrics: sync (fork-additions §5.3)", () => {
  const model = modelOf(events("sync", 3, scenario("sync")));

  it("computes the 13 keys in order with the sync semantics", () => {
    const m = liveMetrics(model, { invalidActionEnabled: false });
    expect(Object.keys(m)).toEqual([
      "total_turns",
      "avg_turns_per_sample",
      "max_turns_per_sample",
      "natural_termination_rate",
      "truncation_rate",
      "max_turns_reached_rate",
      ...Object.keys(tokenAndRewardKeys),
    ]);
    expect(m).toEqual({
      // D8: env steps only, so S2's failed generation is not a turn: 2 + 3 + 1 + 1 + 3.
      total_turns: 10,
      avg_turns_per_sample: 2,
      max_turns_per_sample: 3,
      // D6: S0, S4 (environment) and S3 (observation overflow) left the active set.
      natural_termination_rate: 3 / 5,
      truncation_rate: 2 / 5,
      // D7: only S1 was still active after the loop.
      max_turns_reached_rate: 1 / 5,
      ...tokenAndRewardKeys,
    });
  });

  it("adds the penalty keys after the rates when the assessment is on", () => {
    const m = liveMetrics(model, { invalidActionEnabled: true });
    expect(Object.keys(m).slice(6, 13)).toEqual([
      "invalid_action_rate",
      "malformed_thinking_rate",
      "num_assistant_messages",
      "invalid_action_msg_rate",
      "malformed_thinking_msg_rate",
      "violation_rate/env_invalid_action",
      "violation_rate/malformed_thinking",
    ]);
    expect(m).toMatchObject({
      invalid_action_rate: 2 / 5,
      malformed_thinking_rate: 2 / 5,
      num_assistant_messages: 10,
      invalid_action_msg_rate: 2 / 10,
      malformed_thinking_msg_rate: 2 / 10,
      "violation_rate/env_invalid_action": 2 / 10,
      "violation_rate/malformed_thinking": 2 / 10,
    });
    expect(m).not.toHaveProperty("per_worker_token_counts");
    expect(m).not.toHaveProperty("histogram/gen_tokens_length");
  });
});

describe("liveMetrics: async (fork-additions §5.5)", () => {
  const model = modelOf(events("async", 3, scenario("async")));

  it("computes the async set with the async semantics and no timing keys", () => {
    const m = liveMetrics(model, { invalidActionEnabled: false });
    expect(m).toEqual({
      // D8: generation attempts, so S2's failed second generation counts: 2 + 3 + 2 + 1 + 3.
      total_turns: 11,
      avg_turns_per_sample: 11 / 5,
      max_turns_per_sample: 3,
      // D6: the last step's environment flag only (S0, S4); S3's overflow is not counted.
      natural_termination_rate: 2 / 5,
      truncation_rate: 2 / 5,
      // D7: turn_count >= 3 (S1, and S4 that terminated on its last allowed turn).
      max_turns_reached_rate: 2 / 5,
      ...tokenAndRewardKeys,
      per_worker_token_counts: {},
      "histogram/gen_tokens_length": [4, 6, 5, 5, 5, 3, 7, 2, 2, 2],
      "histogram/input_tokens_length": [10, 20, 10, 20, 30, 10, 10, 10, 20, 30],
      "histogram/total_tokens_length": [14, 26, 15, 25, 35, 13, 17, 12, 22, 32],
    });
    expect(Object.keys(m).some((k) => k.startsWith("timing/"))).toBe(false);
  });

  it("puts the penalty keys after the reward stats; assessed turns differ from total_turns", () => {
    const m = liveMetrics(model, { invalidActionEnabled: true });
    const keys = Object.keys(m);
    expect(keys.slice(keys.indexOf("min_total_reward") + 1, keys.indexOf("per_worker_token_counts"))).toEqual([
      "invalid_action_rate",
      "malformed_thinking_rate",
      "num_assistant_messages",
      "invalid_action_msg_rate",
      "malformed_thinking_msg_rate",
      "violation_rate/env_invalid_action",
      "violation_rate/malformed_thinking",
    ]);
    expect(m.total_turns).toBe(11);
    expect(m.num_assistant_messages).toBe(10);
    expect(m.invalid_action_msg_rate).toBe(0.2);
  });
});

describe("liveMetrics while the run goes on", () => {
  it("follows the samples' current state", () => {
    for (const mode of ["sync", "async"] as const) {
      const all = events(mode, 3, scenario(mode));
      const model = new RunModel();
      expect(liveMetrics(model, { invalidActionEnabled: false })).toEqual({});
      // rollout_start, then S0's first turn_start, two tokens and its assistant message.
      for (const e of all.slice(0, 5)) model.apply(e);
      const m = liveMetrics(model, { invalidActionEnabled: false });
      expect(m.total_turns).toBe(mode === "sync" ? 0 : 1);
      expect(m.mean_gen_tokens_per_sample).toBe(4 / 5);
      expect(m.natural_termination_rate).toBe(0);
      if (mode === "async") expect(m["histogram/gen_tokens_length"]).toEqual([4]);
    }
  });

  it("returns the rollout's own metrics once it ended", () => {
    const model = modelOf(events("async", 3, scenario("async")));
    const final = { total_turns: 99, per_worker_token_counts: { "0": 3 }, "timing/rollout/total": 1.5 };
    model.apply({ type: "rollout_end", t: 500, batch: {}, metrics: final, partial: false });
    expect(liveMetrics(model, { invalidActionEnabled: true })).toEqual(final);
  });

  it("counts cancelled samples as the rollout does", () => {
    const model = modelOf(events("sync", 3, [{ turns: [{ gen: 1 }], end: "cancelled" }, { turns: [{ gen: 1 }], end: "max_turns" }]));
    expect(liveMetrics(model, { invalidActionEnabled: false })["lab/cancelled_samples"]).toBe(1);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Against real rollouts: the live metrics over the whole event stream equal the rollout's own.

interface EnvTurn {
  obs?: string;
  reward?: number;
  terminated?: boolean;
  flags?: Record<string, unknown>;
  throws?: string;
}

class ScriptedEnv implements EnvironmentInterface {
  constructor(private readonly scripts: EnvTurn[][]) {}
  step(_logs: EnvMessage[][], metadata: Metadata[]): EnvironmentReturn {
    const turns = metadata.map((m) => this.scripts[m!.sample as number]![m!.turn as number] ?? {});
    const thrown = turns.find((t) => t.throws);
    if (thrown) throw new Error(thrown.throws);
    return {
      observations: turns.map((t, i) => ({ role: "environment", content: t.obs ?? `out${metadata[i]!.turn}` })),
      metadata: turns.map((t, i) => ({ ...metadata[i]!, turn: (metadata[i]!.turn as number) + 1, ...(t.flags ?? {}) })),
      next_stop_strings: null,
      rewards: turns.map((t) => t.reward ?? 0),
      terminateds: turns.map((t) => t.terminated ?? false),
      answers: null,
    };
  }
}

describe("liveMetrics equals the rollout's metrics at the end of the stream", () => {
  const bad = { invalid_action: true };
  const responses = [
    ["<think>a</think>ok", "<think>b</think>done"],
    ["aaaaaaaaaaaa", "b", "<think>c"],
    ["x"], // the script runs out on turn 2: a generation error
    ["y", "z"], // its environment throws on turn 2: an environment error
    ["w"], // its observation overflows the context
    ["1", "2", "3"], // ends by the environment on its last allowed turn
  ];
  const scripts: EnvTurn[][] = [
    [{ flags: bad }, { reward: 1, terminated: true }],
    [{ reward: 0.5 }, { flags: bad }, {}],
    [{}, {}],
    [{ flags: bad }, { throws: "boom" }],
    [{ obs: "o".repeat(400) }],
    [{}, {}, { reward: 2, terminated: true, flags: bad }],
  ];
  const prompts = responses.map((_, i) => `prompt ${i}`);
  const batch = () =>
    new BatchedDataDict({
      message_log: prompts.map((p) => [{ role: "user", content: p, token_ids: tok.encode(p) }]),
      extra_env_info: prompts.map((_, i) => ({ sample: i, turn: 0 })),
      task_name: prompts.map((_, i) => (i === 3 ? "u" : "t")),
      idx: prompts.map((_, i) => 100 + i),
    });

  for (const [mode, run] of [
    ["sync", runMultiTurnRollout],
    ["async", runAsyncMultiTurnRollout],
  ] as const) {
    for (const invalidActionEnabled of [false, true]) {
      it(`${mode}, assessment ${invalidActionEnabled ? "on" : "off"}`, async () => {
        const model = new RunModel();
        let ended = false;
        const [, metrics] = await run({
          policyGeneration: scriptedPolicy(responses, tok),
          tokenizer: tok,
          taskToEnv: { t: new ScriptedEnv(scripts), u: new ScriptedEnv(scripts) },
          maxSeqLen: 200,
          maxRolloutTurns: 3,
          maxNewTokens: 8,
          invalidActionCfg: invalidActionEnabled ? { enabled: true, use_environment_flags: true } : null,
          inputBatch: batch(),
          onEvent: (e) => {
            if (e.type === "rollout_end") ended = true;
            else model.apply(e);
          },
        });
        expect(ended).toBe(true);
        const terminations = model.samples.map((s) => s.termination);
        expect(terminations).toContain("error");
        expect(terminations).toContain("truncated_context");
        const { ["timing/rollout/total"]: _timing, ...expected } = metrics;
        const live = liveMetrics(model, { invalidActionEnabled });
        expect(live).toEqual(expected);
        expect(Object.keys(live)).toEqual(Object.keys(expected));
      });
    }
  }
});
