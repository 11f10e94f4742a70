import { describe, expect, it } from "vitest";
import { scriptedPolicy } from "../../policy/scripted.js";
import { applyInvalidActionPenalty } from "../assessment/penalty.js";
import { BatchedDataDict } from "../batch.js";
import { byteLevelTokenizer as tok } from "../tokenizer/byte-level.js";
import type { EnvironmentInterface, EnvironmentReturn, EnvMessage, GenerationDatumSpec, Message, Metadata } from "../types.js";
import { runAsyncMultiTurnRollout, runAsyncMultiTurnRolloutGroups } from "./async.js";
import { PauseController } from "./control.js";
import type { RolloutEvent } from "./events.js";
import type { RolloutOptions } from "./options.js";
import { runMultiTurnRollout } from "./sync.js";

/** One scripted turn of the test environment. */
interface EnvTurn {
  obs?: string;
  reward?: number;
  terminated?: boolean;
  stop?: string[] | null;
  flags?: Record<string, unknown>;
  delayMs?: number;
  throws?: string;
}

/** An environment that answers each sample's turns from a script kept in its metadata. */
class ScriptedEnv implements EnvironmentInterface {
  calls: { size: number; metadata: Metadata[]; logs: EnvMessage[][] }[] = [];
  constructor(private readonly scripts: EnvTurn[][]) {}

  async step(logs: EnvMessage[][], metadata: Metadata[]): Promise<EnvironmentReturn> {
    this.calls.push({ size: logs.length, metadata: structuredClone(metadata), logs: structuredClone(logs) });
    const turns = metadata.map((m) => this.scripts[m!.sample as number]![m!.turn as number] ?? {});
    const delay = Math.max(0, ...turns.map((t) => t.delayMs ?? 0));
    if (delay) await new Promise((r) => setTimeout(r, delay));
    const thrown = turns.find((t) => t.throws);
    if (thrown) throw new Error(thrown.throws);
    return {
      observations: turns.map((t, i) => ({ role: "environment", content: t.obs ?? `out${metadata[i]!.turn}` })),
      metadata: turns.map((t, i) => ({ ...metadata[i]!, turn: (metadata[i]!.turn as number) + 1, ...(t.flags ?? {}) })),
      next_stop_strings: turns.map((t) => (t.stop === undefined ? null : t.stop)),
      rewards: turns.map((t) => t.reward ?? 0),
      terminateds: turns.map((t) => t.terminated ?? false),
      answers: null,
    };
  }
}

function inputBatch(prompts: string[], opts: { task?: string[]; stop?: (string[] | null)[] | "absent" } = {}) {
  const logs = prompts.map((p) => [{ role: "user", content: p, token_ids: tok.encode(p) }]);
  const data: Record<string, unknown[]> = {
    message_log: logs,
    extra_env_info: prompts.map((_, i) => ({ sample: i, turn: 0 })),
    task_name: prompts.map((_, i) => opts.task?.[i] ?? "t"),
    idx: prompts.map((_, i) => 100 + i),
    loss_multiplier: prompts.map(() => 1),
  };
  if (opts.stop !== "absent") data.stop_strings = opts.stop ?? prompts.map(() => null);
  return new BatchedDataDict(data);
}

const modes = [
  ["sync", runMultiTurnRollout],
  ["async", runAsyncMultiTurnRollout],
] as const;

function base(responses: string[][], env: EnvironmentInterface, extra: Partial<RolloutOptions> = {}): RolloutOptions {
  return { policyGeneration: scriptedPolicy(responses, tok), tokenizer: tok, taskToEnv: { t: env }, maxSeqLen: 1024, ...extra };
}

const col = <T>(batch: BatchedDataDict, key: string) => batch.get(key) as T[];

describe("violation_rate/<type> key order", () => {
  // Turn 0: sample 1's env flag; turn 1: sample 0's broken think block. Sync counts on one rollout-wide dict (keys
  // in first occurrence, turn by turn: fork-additions §5.3); async merges per-sample counts, sample by sample (§5.5).
  const responses = [["clean", "<think>x"], ["bad", "bad"]];
  const scripts: EnvTurn[][] = [[{}, { terminated: true }], [{ flags: { invalid_action: true } }, { terminated: true }]];
  const keys = (metrics: Record<string, unknown>) => Object.keys(metrics).filter((k) => k.startsWith("violation_rate/"));
  const options = () => ({ ...base(responses, new ScriptedEnv(scripts), { maxRolloutTurns: 3, invalidActionCfg: { enabled: true } }), inputBatch: inputBatch(["p0", "p1"]) });

  it("sync: in the order the rollout first met each type", async () => {
    const [, metrics] = await runMultiTurnRollout(options());
    expect(keys(metrics)).toEqual(["violation_rate/env_invalid_action", "violation_rate/malformed_thinking"]);
  });

  it("async: sample by sample", async () => {
    const [, metrics] = await runAsyncMultiTurnRollout(options());
    expect(keys(metrics)).toEqual(["violation_rate/malformed_thinking", "violation_rate/env_invalid_action"]);
  });
});

describe("worked scenario of the derived library (fork-additions §5.6)", () => {
  const responses = [
    ["<think>plan</think>\n<tool_call>run_shell ls</tool_call>", "task_complete"],
    ["I will just talk.", "<think>oops <tool_call>{run_shell, command:5}</tool_call>", "</think>done"],
  ];
  const scripts: EnvTurn[][] = [
    [{ flags: { invalid_action: false } }, { reward: 1, terminated: true, flags: { invalid_action: false } }],
    [{ flags: { invalid_action: true } }, { flags: { invalid_action: true } }, { flags: { invalid_action: true } }],
  ];
  const cfg = { enabled: true, invalid_action_penalty: 0.5, malformed_thinking_penalty: 0.25, use_environment_flags: true };

  for (const [mode, run] of modes) {
    it(`${mode}: counts, rates, stamps, envelope and penalty`, async () => {
      const [batch, metrics] = await run({
        ...base(responses, new ScriptedEnv(scripts), { maxRolloutTurns: 3, invalidActionCfg: cfg, structuredCfg: { enabled: true, thinking_style: "paired" } }),
        inputBatch: inputBatch(["p0", "p1"]),
      });
      expect(col(batch, "invalid_action_count")).toEqual([0, 3]);
      expect(col(batch, "malformed_thinking_count")).toEqual([0, 2]);
      expect(metrics).toMatchObject({
        invalid_action_rate: 0.5,
        malformed_thinking_rate: 0.5,
        num_assistant_messages: 5,
        invalid_action_msg_rate: 0.6,
        malformed_thinking_msg_rate: 0.4,
        "violation_rate/env_invalid_action": 0.6,
        "violation_rate/malformed_thinking": 0.4,
        mean_total_reward: 0.5,
        max_total_reward: 1,
        min_total_reward: 0,
      });
      const logs = col<Message[]>(batch, "message_log");
      const envMessage = logs[0]![2]!;
      expect(envMessage.content).toBe("out0");
      expect(tok.decode(envMessage.token_ids)).toBe("<|im_start|>user\n<tool_response>\nout0\n</tool_response><|im_end|>\n<|im_start|>assistant\n");
      expect(logs[1]![3]!.invalid_action_violations).toEqual([
        { type: "env_invalid_action", severity: 1, locus: "reward", detail: null },
        { type: "malformed_thinking", severity: 0.5, locus: "advantage", detail: null },
      ]);
      expect(logs[0]![1]!.invalid_action_violations).toBeUndefined();
      for (const info of col<Record<string, unknown>>(batch, "extra_env_info")) expect(info).not.toHaveProperty("invalid_action");
      const shaped = applyInvalidActionPenalty(
        { total_reward: col<number>(batch, "total_reward"), message_log: logs },
        cfg,
      );
      expect(shaped.total_reward).toEqual([1, -1.5]);
      expect(shaped.unshaped_total_reward).toEqual([1, 0]);
      const legacy = applyInvalidActionPenalty(
        { total_reward: col<number>(batch, "total_reward"), invalid_action_count: [0, 3], malformed_thinking_count: [0, 2] },
        cfg,
      );
      expect(legacy.total_reward).toEqual([1, -2]);
    });

    it(`${mode}: closing_only moves the thinking verdicts`, async () => {
      const [batch] = await run({
        ...base(responses, new ScriptedEnv(scripts), { maxRolloutTurns: 3, invalidActionCfg: cfg, structuredCfg: { enabled: true, thinking_style: "closing_only" } }),
        inputBatch: inputBatch(["p0", "p1"]),
      });
      // S0 turn 1 regenerates an opening tag; S1 turn 3's lone close is fine; S1 turn 2 has an opening tag.
      expect(col(batch, "malformed_thinking_count")).toEqual([1, 1]);
    });
  }
});

describe("sync and async paths", () => {
  for (const [mode, run] of modes) {
    it(`${mode}: never mutates the input batch (decision 1)`, async () => {
      const input = inputBatch(["a", "b"], { stop: [["!"], null] });
      const before = structuredClone(input.data);
      await run({ ...base([["x!", "y"], ["z"]], new ScriptedEnv([[{}, { terminated: true }], [{ terminated: true }]]), { maxRolloutTurns: 4 }), inputBatch: input });
      expect(input.data).toEqual(before);
    });

    it(`${mode}: keeps input order and the input's idx (decision 5)`, async () => {
      const [batch] = await run({
        ...base([["a", "b", "c"], ["d"]], new ScriptedEnv([[{}, {}, { terminated: true }], [{ terminated: true, delayMs: 5 }]]), { maxRolloutTurns: 5 }),
        inputBatch: inputBatch(["p", "q"]),
      });
      expect(col(batch, "idx")).toEqual([100, 101]);
      expect(col(batch, "termination")).toEqual(["terminated", "terminated"]);
      expect(col(batch, "total_reward")).toEqual([0, 0]);
    });

    it(`${mode}: environment stop strings reach the generator even when the batch has none (decision 2)`, async () => {
      const seen: (string[] | null)[][] = [];
      const policy = scriptedPolicy([["first", "cut here! and not this"]], tok);
      const generate = policy.generate.bind(policy);
      policy.generate = (data: GenerationDatumSpec, greedy: boolean, o?: object) => {
        seen.push(data.stop_strings);
        return generate(data, greedy, o);
      };
      const [batch] = await run({
        ...base([], new ScriptedEnv([[{ stop: ["!"] }, { terminated: true }]]), { maxRolloutTurns: 2 }),
        policyGeneration: policy,
        inputBatch: inputBatch(["p"], { stop: "absent" }),
      });
      const log = col<{ content: string }[]>(batch, "message_log")[0]!;
      expect(log[3]!.content).toBe("cut here!");
    });

    it(`${mode}: the >= rule cuts the observation at max_seq_len and ends the sample`, async () => {
      // prompt 10 tokens, response "abcde" + EOS = 6 tokens, observation 20 tokens: 10 + 6 + 20 >= 30.
      const [batch, metrics] = await run({
        ...base([["abcde"]], new ScriptedEnv([[{ obs: "x".repeat(20) }]]), { maxSeqLen: 30, maxRolloutTurns: 5 }),
        inputBatch: inputBatch(["0123456789"]),
      });
      const log = col<{ content: string; token_ids: number[] }[]>(batch, "message_log")[0]!;
      expect(log[2]!.token_ids).toHaveLength(14);
      expect(log[2]!.content).toBe("x".repeat(20)); // content is never cut
      expect(log.reduce((n, m) => n + m.token_ids.length, 0)).toBe(30);
      expect(col(batch, "truncated")).toEqual([true]);
      expect(col(batch, "termination")).toEqual(["truncated_context"]);
      // D6: sync counts leaving the active set as terminated, async only the environment's flag.
      expect(metrics.natural_termination_rate).toBe(mode === "sync" ? 1 : 0);
      expect(metrics.truncation_rate).toBe(1);
    });

    it(`${mode}: an exactly filling observation also counts as truncated (>=)`, async () => {
      const [batch] = await run({
        ...base([["ab"]], new ScriptedEnv([[{ obs: "xyz" }]]), { maxSeqLen: 10, maxRolloutTurns: 5 }),
        inputBatch: inputBatch(["1234"]), // 4 + 3 ("ab" + EOS) + 3 = 10
      });
      expect(col(batch, "termination")).toEqual(["truncated_context"]);
      expect(col<{ token_ids: number[] }[]>(batch, "message_log")[0]![2]!.token_ids).toHaveLength(3);
    });

    it(`${mode}: the generator never gets more than max_seq_len − prompt new tokens (decision 3)`, async () => {
      const [batch] = await run({
        ...base([["a".repeat(50)]], new ScriptedEnv([[{ obs: "o" }]]), { maxSeqLen: 20, maxRolloutTurns: 3 }),
        inputBatch: inputBatch(["12345"]),
      });
      const log = col<{ token_ids: number[] }[]>(batch, "message_log")[0]!;
      expect(log[1]!.token_ids).toHaveLength(15);
      expect(log[2]!.token_ids).toHaveLength(0);
      expect(col(batch, "termination")).toEqual(["truncated_context"]);
    });

    it(`${mode}: a generation error ends only that sample, with its text (decision 4)`, async () => {
      const [batch, metrics] = await run({
        ...base([["a"], ["b", "c"]], new ScriptedEnv([[{}], [{}, { terminated: true, reward: 1 }]]), { maxRolloutTurns: 3 }),
        inputBatch: inputBatch(["p", "q"]),
      });
      expect(col(batch, "termination")).toEqual(["error", "terminated"]);
      expect(col<string | null>(batch, "error")[0]).toMatch(/generation failed: the script has 1 response\(s\) for sample 0/);
      expect(col(batch, "total_reward")).toEqual([0, 1]);
      if (mode === "sync") {
        expect(metrics).toMatchObject({ total_turns: 3, natural_termination_rate: 0.5, max_turns_reached_rate: 0 });
      } else {
        // The failed attempt counts as a turn, as upstream counts it (D8).
        expect(metrics).toMatchObject({ total_turns: 4, natural_termination_rate: 0.5, max_turns_reached_rate: 0 });
      }
    });

    it(`${mode}: fail_fast rejects the whole rollout`, async () => {
      const events: RolloutEvent[] = [];
      await expect(
        run({ ...base([[], ["b"]], new ScriptedEnv([[{}], [{}]]), { failFast: true, onEvent: (e) => events.push(e) }), inputBatch: inputBatch(["p", "q"]) }),
      ).rejects.toThrow(/sample 0 \(idx 100\): generation failed/);
      expect(events.at(-1)!.type).toBe("rollout_error");
    });

    it(`${mode}: a failing environment step ends only its task's samples`, async () => {
      const broken = new ScriptedEnv([[{ throws: "boom" }]]);
      const good = new ScriptedEnv([[], [{ terminated: true, reward: 1 }]]);
      const [batch] = await run({
        ...base([["a"], ["b"]], broken),
        taskToEnv: { bad: broken, good },
        inputBatch: inputBatch(["p", "q"], { task: ["bad", "good"] }),
      });
      expect(col(batch, "termination")).toEqual(["error", "terminated"]);
      expect(col<string | null>(batch, "error")[0]).toBe("environment 'bad' step failed: boom");
    });

    it(`${mode}: a hung environment step is cut by the timeout`, async () => {
      const slow = new ScriptedEnv([[{ delayMs: 200 }]]);
      const [batch] = await run({ ...base([["a"]], slow, { envStepTimeoutMs: 20 }), inputBatch: inputBatch(["p"]) });
      expect(col(batch, "termination")).toEqual(["error"]);
      expect(col<string>(batch, "error")[0]).toBe("environment 't' step timed out after 20 ms");
    });

    it(`${mode}: an environment returning the wrong number of rewards fails its samples with a clear error`, async () => {
      const env: EnvironmentInterface = {
        step: (logs) => ({ observations: logs.map(() => ({ role: "user", content: "o" })), metadata: logs.map(() => null), next_stop_strings: null, rewards: [], terminateds: logs.map(() => true), answers: null }),
      };
      const [batch] = await run({ ...base([["a"]], env), inputBatch: inputBatch(["p"]) });
      expect(col<string>(batch, "error")[0]).toBe("environment 't' returned rewards with 0 entries for a step of 1 samples");
    });

    it(`${mode}: ends at max_rollout_turns with every message kept`, async () => {
      const [batch, metrics] = await run({ ...base([["a", "b"]], new ScriptedEnv([[{}, {}]]), { maxRolloutTurns: 2 }), inputBatch: inputBatch(["p"]) });
      expect(col(batch, "termination")).toEqual(["max_turns"]);
      expect(col<unknown[]>(batch, "message_log")[0]).toHaveLength(5);
      expect(metrics).toMatchObject({ total_turns: 2, max_turns_reached_rate: 1, natural_termination_rate: 0 });
    });

    it(`${mode}: cancelling returns the partial results, marked`, async () => {
      const controller = new AbortController();
      const events: RolloutEvent[] = [];
      const [batch, metrics] = await run({
        ...base([["a", "b", "c"]], new ScriptedEnv([[{}, {}, {}]]), {
          maxRolloutTurns: 3,
          signal: controller.signal,
          onEvent: (e) => {
            events.push(e);
            if (e.type === "env_step" && e.turn === 0) controller.abort();
          },
        }),
        inputBatch: inputBatch(["p"]),
      });
      expect(col(batch, "termination")).toEqual(["cancelled"]);
      expect(col<unknown[]>(batch, "message_log")[0]).toHaveLength(3);
      expect(metrics["lab/cancelled_samples"]).toBe(1);
      const end = events.at(-1)!;
      expect(end.type === "rollout_end" && end.partial).toBe(true);
    });

    it(`${mode}: pauses between turns and steps one turn at a time`, async () => {
      const pause = new PauseController();
      const env = new ScriptedEnv([[{}, {}, { terminated: true }]]);
      pause.pause();
      const done = run({ ...base([["a", "b", "c"]], env, { maxRolloutTurns: 5, pause }), inputBatch: inputBatch(["p"]) });
      await new Promise((r) => setTimeout(r, 10));
      expect(env.calls).toHaveLength(0);
      pause.step();
      await new Promise((r) => setTimeout(r, 10));
      expect(env.calls).toHaveLength(1);
      pause.resume();
      const [batch] = await done;
      expect(env.calls).toHaveLength(3);
      expect(col(batch, "termination")).toEqual(["terminated"]);
    });

    it(`${mode}: emits a well-ordered event stream`, async () => {
      const events: RolloutEvent[] = [];
      await run({ ...base([["a", "b"]], new ScriptedEnv([[{}, { terminated: true, reward: 2 }]]), { onEvent: (e) => events.push(e) }), inputBatch: inputBatch(["p"]) });
      const types = events.filter((e) => e.type !== "token").map((e) => e.type);
      expect(types).toEqual([
        "rollout_start",
        "turn_start", "assistant_message", "env_step",
        "turn_start", "assistant_message", "env_step",
        "sample_end", "rollout_end",
      ]);
      const tokens = events.filter((e) => e.type === "token");
      expect(tokens.map((e) => (e.type === "token" ? e.text : "")).join("")).toBe("a<|im_end|>b<|im_end|>");
      const end = events.find((e) => e.type === "sample_end");
      expect(end).toMatchObject({ termination: "terminated", totalReward: 2, turns: 2, idx: 100 });
    });

    it(`${mode}: named reward components are summed into total_reward`, async () => {
      const env: EnvironmentInterface = {
        step: (logs) => ({
          observations: logs.map(() => ({ role: "user", content: "" })),
          metadata: logs.map(() => null),
          next_stop_strings: null,
          rewards: { "reward/format": logs.map(() => 0.25), accuracy: logs.map(() => 1) },
          terminateds: logs.map(() => true),
          answers: null,
        }),
      };
      const [batch] = await run({ ...base([["a"]], env), inputBatch: inputBatch(["p"]) });
      expect(col(batch, "total_reward")).toEqual([1.25]);
      expect(col(batch, "reward/format")).toEqual([0.25]);
      // D13: async stores only reward/* components; sync stores any name.
      expect(batch.has("accuracy")).toBe(mode === "sync");
    });
  }
});

describe("where the paths differ on purpose", () => {
  it("D5: a null next_stop_strings entry resets in sync and keeps in async", async () => {
    const cut = async (run: typeof runMultiTurnRollout) => {
      const env = new ScriptedEnv([[{ stop: null }, { terminated: true }]]);
      const [batch] = await run({ ...base([["one!", "two! three!"]], env, { maxRolloutTurns: 2 }), inputBatch: inputBatch(["p"], { stop: [["!"]] }) });
      return col<{ content: string }[]>(batch, "message_log")[0]![3]!.content;
    };
    expect(await cut(runMultiTurnRollout)).toBe("two! three!");
    expect(await cut(runAsyncMultiTurnRollout)).toBe("two!");
  });

  it("D3 / decision 7: a response cut at its limit goes on in sync, ends in async, ends in sync on request", async () => {
    const make = (extra: Partial<RolloutOptions> = {}) =>
      ({ ...base([["aaaaaaaa", "b"]], new ScriptedEnv([[{}, { terminated: true }]]), { maxNewTokens: 4, maxRolloutTurns: 3, ...extra }), inputBatch: inputBatch(["p"]) });
    const [sync, syncMetrics] = await runMultiTurnRollout(make());
    expect(col(sync, "termination")).toEqual(["terminated"]);
    expect(col(sync, "truncated")).toEqual([true]);
    expect(syncMetrics.total_turns).toBe(2);
    const [asyncBatch] = await runAsyncMultiTurnRollout(make());
    expect(col(asyncBatch, "termination")).toEqual(["truncated_response"]);
    const [ended, endedMetrics] = await runMultiTurnRollout(make({ endOnResponseTruncation: true }));
    expect(col(ended, "termination")).toEqual(["truncated_response"]);
    expect(endedMetrics.natural_termination_rate).toBe(1);
  });

  it("D7: async counts max_turns_reached for an episode ending on its last allowed turn", async () => {
    const make = () => ({ ...base([["a", "b"]], new ScriptedEnv([[{}, { terminated: true }]]), { maxRolloutTurns: 2 }), inputBatch: inputBatch(["p"]) });
    const [, sync] = await runMultiTurnRollout(make());
    const [asyncBatch, asyncMetrics] = await runAsyncMultiTurnRollout(make());
    expect(sync.max_turns_reached_rate).toBe(0);
    expect(asyncMetrics.max_turns_reached_rate).toBe(1);
    expect(col(asyncBatch, "termination")).toEqual(["terminated"]);
  });

  it("D2: sync steps each task once per turn over its samples; async once per sample", async () => {
    const env = new ScriptedEnv([[{ terminated: true }], [{ terminated: true }], [{ terminated: true }]]);
    await runMultiTurnRollout({ ...base([["a"], ["b"], ["c"]], env), inputBatch: inputBatch(["p", "q", "r"]) });
    expect(env.calls.map((c) => c.size)).toEqual([3]);
    const env2 = new ScriptedEnv([[{ terminated: true }], [{ terminated: true }], [{ terminated: true }]]);
    await runAsyncMultiTurnRollout({ ...base([["a"], ["b"], ["c"]], env2), inputBatch: inputBatch(["p", "q", "r"]) });
    expect(env2.calls.map((c) => c.size)).toEqual([1, 1, 1]);
  });

  it("D12: output stop_strings are each sample's last ones in sync, the input's in async", async () => {
    const make = () => ({ ...base([["a", "b"]], new ScriptedEnv([[{ stop: ["#"] }, { terminated: true }]]), { maxRolloutTurns: 3 }), inputBatch: inputBatch(["p"], { stop: [["!"]] }) });
    const [sync] = await runMultiTurnRollout(make());
    const [asyncBatch] = await runAsyncMultiTurnRollout(make());
    expect(col(sync, "stop_strings")).toEqual([["#"]]);
    expect(col(asyncBatch, "stop_strings")).toEqual([["!"]]);
  });

  it("async is really concurrent: a slow step does not hold the other samples back", async () => {
    const order: string[] = [];
    const env = new ScriptedEnv([[{ delayMs: 80, terminated: true }], [{}, {}, { terminated: true }]]);
    await runAsyncMultiTurnRollout({
      ...base([["slow"], ["a", "b", "c"]], env, { onEvent: (e) => e.type === "sample_end" && order.push(`s${e.sample}`) }),
      inputBatch: inputBatch(["p", "q"]),
    });
    expect(order).toEqual(["s1", "s0"]);
  });

  it("the per-group variant yields consecutive groups whose metrics recombine to the whole batch", async () => {
    const env = new ScriptedEnv([[{ reward: 1, terminated: true }], [{ terminated: true }], [{}, { reward: 3, terminated: true }], [{ terminated: true }]]);
    const groups = [];
    for await (const g of runAsyncMultiTurnRolloutGroups({ ...base([["a"], ["b"], ["c", "d"], ["e"]], env), inputBatch: inputBatch(["p", "p", "q", "q"]), numGenerations: 2 })) {
      groups.push(g);
    }
    expect(groups.map((g) => g.groupIndex)).toEqual([0, 1]);
    expect(groups.map((g) => g.metrics.mean_total_reward)).toEqual([0.5, 1.5]);
    expect(groups.map((g) => g.metrics.total_turns)).toEqual([2, 3]);
    expect(groups[1]!.batch.get("idx")).toEqual([102, 103]);
  });

  it("metric keys are exactly each path's set (decision 11)", async () => {
    const make = (cfg: object | null) => ({ ...base([["a"]], new ScriptedEnv([[{ terminated: true }]]), { invalidActionCfg: cfg }), inputBatch: inputBatch(["p"]) });
    const [, sync] = await runMultiTurnRollout(make(null));
    expect(Object.keys(sync)).toEqual([
      "total_turns", "avg_turns_per_sample", "max_turns_per_sample", "natural_termination_rate", "truncation_rate",
      "max_turns_reached_rate", "mean_total_tokens_per_sample", "mean_gen_tokens_per_sample", "max_gen_tokens_per_sample",
      "mean_env_tokens_per_sample", "mean_total_reward", "max_total_reward", "min_total_reward",
    ]);
    const [, asyncMetrics] = await runAsyncMultiTurnRollout(make({ enabled: true }));
    expect(Object.keys(asyncMetrics)).toEqual([
      "total_turns", "avg_turns_per_sample", "max_turns_per_sample", "natural_termination_rate", "truncation_rate",
      "max_turns_reached_rate", "mean_total_tokens_per_sample", "mean_gen_tokens_per_sample", "max_gen_tokens_per_sample",
      "mean_env_tokens_per_sample", "mean_total_reward", "max_total_reward", "min_total_reward", "invalid_action_rate",
      "malformed_thinking_rate", "num_assistant_messages", "invalid_action_msg_rate", "malformed_thinking_msg_rate",
      "per_worker_token_counts", "histogram/gen_tokens_length", "histogram/input_tokens_length",
      "histogram/total_tokens_length", "timing/rollout/total",
    ]);
  });
});

describe("PauseController", () => {
  it("keeps a step asked for while nothing waits, for the next turn only", async () => {
    const pause = new PauseController();
    pause.pause();
    pause.step();
    await pause.wait(); // passes: the pending step
    let passed = false;
    void pause.wait().then(() => (passed = true));
    await new Promise((r) => setTimeout(r, 10));
    expect(passed).toBe(false);
    pause.resume();
    await new Promise((r) => setTimeout(r, 0));
    expect(passed).toBe(true);
  });
});
