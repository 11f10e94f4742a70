/**
 * The step check (`stepSample` / `stepEnvironments`): a return is read exactly, and a wrong one fails its samples with
 * the field and what was there; the step's deadline reaches the environment as an aborted signal.
 */

import { afterEach, describe, expect, it, vi } from "vitest";
import { scriptedPolicy } from "../../policy/scripted.js";
import { BatchedDataDict } from "../batch.js";
import { byteLevelTokenizer as tok } from "../tokenizer/byte-level.js";
import type { EnvironmentInterface, EnvironmentReturn, StepContext } from "../types.js";
import { MAX_TIMEOUT_MS } from "./options.js";
import { calculateRewards, stepSample, type SampleStep } from "./rewards.js";
import { runAsyncMultiTurnRollout } from "./async.js";
import { runMultiTurnRollout } from "./sync.js";

const ok = (over: Partial<EnvironmentReturn> = {}): EnvironmentReturn => ({
  observations: [{ role: "environment", content: "o" }],
  metadata: [null],
  next_stop_strings: null,
  rewards: [1],
  terminateds: [false],
  answers: null,
  ...over,
});

const log = [{ role: "user", content: "p", token_ids: [1] }];
const stepWith = (ret: unknown, timeoutMs?: number): Promise<SampleStep> =>
  stepSample(log, null, "t", { t: { step: () => ret as EnvironmentReturn } }, { timeoutMs });
const errorOf = async (ret: unknown) => {
  const step = await stepWith(ret);
  if (step.ok) throw new Error("the step passed");
  return step.error;
};

describe("what a step returned, checked exactly", () => {
  it("names the type of what is there instead of an object or a list", async () => {
    expect(await errorOf([])).toBe("environment 't' step returned an array, expected an object");
    expect(await errorOf(null)).toBe("environment 't' step returned null, expected an object");
    expect(await errorOf(ok({ rewards: undefined as never }))).toBe("environment 't' returned rewards as undefined, expected a list or named lists");
    expect(await errorOf(ok({ rewards: "1" as never }))).toBe("environment 't' returned rewards as a string, expected a list or named lists");
    expect(await errorOf(ok({ observations: "o" as never }))).toBe("environment 't' returned observations as a string, expected a list of 1");
    expect(await errorOf(ok({ terminateds: {} as never }))).toBe("environment 't' returned terminateds as an object, expected a list of 1");
    expect(await errorOf(ok({ metadata: [[1]] as never }))).toBe("environment 't' returned an invalid metadata for sample 0: expected an object or null, got an array");
  });

  it("rewards must be finite: NaN, ±Infinity (a remote 1e400) and components that add up to Infinity fail the sample", async () => {
    expect(await errorOf(ok({ rewards: [Infinity] }))).toBe("environment 't' returned an invalid reward for sample 0: Infinity is not a finite number");
    expect(await errorOf(ok({ rewards: [JSON.parse("1e400")] }))).toBe("environment 't' returned an invalid reward for sample 0: Infinity is not a finite number");
    expect(await errorOf(ok({ rewards: { "reward/a": [-Infinity] } }))).toBe("environment 't' returned an invalid reward 'reward/a' for sample 0: -Infinity is not a finite number");
    expect(await errorOf(ok({ rewards: { "reward/a": [1e308], "reward/b": [1e308] } }))).toBe("environment 't' returned an invalid reward for sample 0: its components add up to Infinity");
    expect(await errorOf(ok({ rewards: [null as never] }))).toBe("environment 't' returned an invalid reward for sample 0: null is not a number");
  });

  it("terminated is a boolean or the number 0 or 1 (the reference's bool or float 0/1 tensors); nothing else", async () => {
    for (const [flag, terminated] of [[true, true], [false, false], [1, true], [0, false]] as const) {
      const step = await stepWith(ok({ terminateds: [flag] }));
      expect(step.ok && step.terminated).toBe(terminated);
    }
    for (const [flag, got] of [["false", 'the string "false"'], ["true", 'the string "true"'], [null, "null"], [undefined, "undefined"], [[true], "an array"], [0.5, "0.5"]] as const) {
      expect(await errorOf(ok({ terminateds: [flag as never] }))).toBe(
        `environment 't' returned an invalid terminated for sample 0: expected true or false (or the number 0 or 1), got ${got}`,
      );
    }
  });

  it("reward names are names: 'constructor' and 'toString' are kept as given, '__proto__' is refused", async () => {
    const step = await stepWith(ok({ rewards: { constructor: [2], toString: [3] } }));
    expect(step.ok && step.rewardComponents).toEqual({ constructor: 2, toString: 3 });
    expect(step.ok && step.reward).toBe(5);
    expect(await errorOf(ok({ rewards: JSON.parse('{"__proto__": [1]}') }))).toBe("environment 't' returned a reward named '__proto__', which is not allowed");
  });

  it("the sync rollout keeps a reward named 'constructor' as its own column", async () => {
    const env: EnvironmentInterface = { step: (logs) => ({ ...ok({ rewards: { constructor: logs.map(() => 2) } }), observations: logs.map(() => ({ role: "environment", content: "o" })), metadata: logs.map(() => null), terminateds: logs.map(() => true) }) };
    const inputBatch = new BatchedDataDict({ message_log: [log, log], extra_env_info: [null, null], task_name: ["t", "t"], idx: [0, 1], loss_multiplier: [1, 1] });
    const [batch] = await runMultiTurnRollout({ policyGeneration: scriptedPolicy([["a"], ["b"]], tok), tokenizer: tok, taskToEnv: { t: env }, maxSeqLen: 64, inputBatch });
    expect(batch.get("constructor")).toEqual([2, 2]);
    expect(batch.get("total_reward")).toEqual([2, 2]);
    const all = await calculateRewards(new BatchedDataDict({ message_log: [log], extra_env_info: [null], task_name: ["t"] }), { t: env });
    expect(Object.keys(all.rewards)).toEqual(["constructor"]);
  });
});

describe("the step's deadline reaches the environment", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("the context carries timeoutMs and a signal aborted at the deadline with the timeout error", async () => {
    vi.useFakeTimers();
    let seen: StepContext | undefined;
    const env: EnvironmentInterface = {
      step: (_logs, _metadata, context) => {
        seen = context;
        return new Promise<EnvironmentReturn>(() => {}); // never answers
      },
    };
    const pending = stepSample(log, null, "t", { t: env }, { timeoutMs: 5_000 });
    expect(seen?.timeoutMs).toBe(5_000);
    expect(seen?.signal?.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(5_000);
    const step = await pending;
    expect(step).toEqual({ ok: false, error: "environment 't' step timed out after 5000 ms" });
    expect(seen?.signal?.aborted).toBe(true);
    expect((seen?.signal?.reason as Error).message).toBe("environment 't' step timed out after 5000 ms");
  });

  it("without a deadline the context is empty (no timer, no signal)", async () => {
    let seen: StepContext | undefined;
    await stepSample(log, null, "t", { t: { step: (_l, _m, context) => ((seen = context), ok()) } });
    expect(seen).toEqual({});
  });

  it("a timeout a timer cannot wait (over 2^31 - 1 ms, which would fire after 1 ms) rejects the rollout, naming the option", async () => {
    const inputBatch = new BatchedDataDict({ message_log: [log], extra_env_info: [null], task_name: ["t"], idx: [0], loss_multiplier: [1] });
    for (const run of [runMultiTurnRollout, runAsyncMultiTurnRollout]) {
      for (const bad of [MAX_TIMEOUT_MS + 1, 1.5, -1]) {
        await expect(
          run({ policyGeneration: scriptedPolicy([["a"]], tok), tokenizer: tok, taskToEnv: { t: { step: () => ok() } }, maxSeqLen: 64, inputBatch, envStepTimeoutMs: bad }),
        ).rejects.toThrow(`envStepTimeoutMs: expected an integer number of ms from 0 to 2147483647, got ${bad}`);
      }
    }
  });
});
