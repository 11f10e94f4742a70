/**
 * Faults an environment under debug can have, injected into real rollouts on both paths: each affected sample
 * ends with an `error` naming the environment, the field and the sample; every other sample (and task) goes on;
 * `fail_fast` rejects instead; the result stays exportable (plain JSON). The README's fault table lists these.
 */

import { describe, expect, it } from "vitest";
import type { EnvironmentReturn, EnvMessage, Metadata } from "../core/index.js";
import { environmentLookup, type EnvironmentDefinition } from "../envs/index.js";
import { runScenario } from "../scenario/run.js";
import { parseScenario } from "../scenario/schema.js";

/** A healthy little game: each step rewards 1 and the episode lasts three turns. */
function healthyReturn(logs: EnvMessage[][], metadata: Metadata[]): EnvironmentReturn {
  return {
    observations: logs.map(() => ({ role: "environment", content: "ok" })),
    metadata: metadata.map((m) => ({ turns: ((m as { turns?: number } | null)?.turns ?? 0) + 1 })),
    next_stop_strings: null,
    rewards: logs.map(() => 1),
    terminateds: metadata.map((m) => ((m as { turns?: number } | null)?.turns ?? 0) + 1 >= 3),
    answers: null,
  };
}

type Fault = (ret: EnvironmentReturn, sample: number) => EnvironmentReturn | Promise<EnvironmentReturn>;

/**
 * Faults that hit the samples whose `extra_env_info.bad` is set (sample 1 of 3). A fault in one sample's field
 * fails that sample only; a fault of the whole call (`wholeCall`: a throw, a hang, a malformed return) fails every
 * sample of that call: in sync mode the call steps the task's whole active batch, in async mode one sample.
 */
const FAULTS: Record<string, { fault: Fault; error: RegExp; wholeCall?: boolean }> = {
  throws: {
    fault: () => {
      throw new Error("index out of range");
    },
    error: /environment 'faulty' step failed: index out of range/,
    wholeCall: true,
  },
  hangs: { fault: () => new Promise<never>(() => {}), error: /environment 'faulty' step timed out after 200 ms/, wholeCall: true },
  "wrong list length": {
    fault: (ret) => ({ ...ret, rewards: [...(ret.rewards as number[]), 1] }),
    error: /environment 'faulty' returned rewards with \d+ entries for a step of \d+ samples/,
    wholeCall: true,
  },
  "NaN reward": { fault: (ret) => ({ ...ret, rewards: [NaN] }), error: /invalid reward for sample 1: NaN is not a number/ },
  // A JS environment's Infinity, or a remote environment's 1e400 (JSON.parse reads it as Infinity).
  "Infinity reward": { fault: (ret) => ({ ...ret, rewards: [Infinity] }), error: /invalid reward for sample 1: Infinity is not a finite number/ },
  "-Infinity reward": { fault: (ret) => ({ ...ret, rewards: [JSON.parse("-1e400")] }), error: /invalid reward for sample 1: -Infinity is not a finite number/ },
  "string reward": { fault: (ret) => ({ ...ret, rewards: ["1" as unknown as number] }), error: /invalid reward for sample 1: the string "1" is not a number/ },
  "terminated as a string": {
    fault: (ret) => ({ ...ret, terminateds: ["false" as unknown as boolean] }),
    error: /invalid terminated for sample 1: expected true or false \(or the number 0 or 1\), got the string "false"/,
  },
  "terminated as 2": { fault: (ret) => ({ ...ret, terminateds: [2] }), error: /invalid terminated for sample 1: expected true or false \(or the number 0 or 1\), got 2/ },
  "metadata nested 5,000 deep": {
    fault: (ret) => ({ ...ret, metadata: [JSON.parse(`${'{"a":'.repeat(5000)}1${"}".repeat(5000)}`)] }),
    error: /invalid metadata for sample 1: metadata\.a\.a\.a\.a\.a\.a\.a\.a\.a…: nested deeper than 97 levels/,
  },
  "metadata with a __proto__ key": {
    fault: (ret) => ({ ...ret, metadata: [JSON.parse('{"turns": 1, "__proto__": {"turns": 9}}')] }),
    error: /invalid metadata for sample 1: metadata\.__proto__: a key named "__proto__" is not allowed/,
  },
  "uncloneable metadata": {
    fault: (ret) => ({ ...ret, metadata: [{ socket: () => 1 }] }),
    error: /invalid metadata for sample 1: it cannot be copied/,
  },
  "observation without content": {
    fault: (ret) => ({ ...ret, observations: [{ role: "environment" } as EnvMessage] }),
    error: /invalid observation for sample 1: expected \{role: string, content: string\}/,
  },
  "not an object": { fault: () => undefined as unknown as EnvironmentReturn, error: /step returned undefined, expected an object/, wholeCall: true },
  "an array": { fault: () => [] as unknown as EnvironmentReturn, error: /step returned an array, expected an object/, wholeCall: true },
};

function faultyEnvironment(fault: Fault): EnvironmentDefinition {
  return {
    name: "faulty",
    title: "Faulty",
    description: "",
    defaultTaskName: "faulty",
    create: () => ({
      // Samples are stepped one call per sample here so a fault hits only its own sample on both paths.
      step: async (logs, metadata) => {
        const parts = await Promise.all(
          logs.map((log, i) => {
            const ret = healthyReturn([log], [metadata[i]!]);
            return (metadata[i] as { bad?: boolean } | null)?.bad ? fault(ret, i) : ret;
          }),
        );
        const broken = parts.findIndex((p) => !p || typeof p !== "object" || Array.isArray(p));
        if (broken >= 0) return parts[broken] as EnvironmentReturn;
        const join = <K extends keyof EnvironmentReturn>(key: K) => parts.flatMap((p) => (p[key] as unknown[]) ?? []) as never;
        return {
          observations: join("observations"),
          metadata: join("metadata"),
          next_stop_strings: null,
          rewards: join("rewards"),
          terminateds: join("terminateds"),
          answers: null,
        };
      },
    }),
    generateDataset: () => [],
  };
}

const scenario = (mode: "sync" | "async", failFast = false) =>
  parseScenario({
    mode,
    max_seq_len: 512,
    max_rollout_turns: 4,
    env_step_timeout_ms: 200,
    fail_fast: failFast,
    envs: { faulty: { env: "faulty", config: {} }, healthy: { env: "calculator", config: {} } },
    samples: [
      { task_name: "faulty", message_log: [{ role: "user", content: "a" }], extra_env_info: { bad: false } },
      { task_name: "faulty", message_log: [{ role: "user", content: "b" }], extra_env_info: { bad: true } },
      { task_name: "faulty", message_log: [{ role: "user", content: "c" }], extra_env_info: { bad: false } },
      {
        task_name: "healthy",
        message_log: [{ role: "user", content: "Solve: 7 - 2" }],
        extra_env_info: { problem: "7 - 2", expected_final_answer: 5.0, max_steps: 3, current_step: 0 },
        stop_strings: ["<call: calculator>"],
      },
    ],
    policy: { kind: "scripted", responses: [["x", "x", "x"], ["x", "x", "x"], ["x", "x", "x"], ["[7, 2, diff]<call: calculator>", "5"]] },
  });

describe.each(["sync", "async"] as const)("%s rollout: a faulty environment step", (mode) => {
  for (const [name, { fault, error, wholeCall }] of Object.entries(FAULTS)) {
    const sameCall = wholeCall && mode === "sync";
    it(`${name}: fails ${sameCall ? "the samples of its call" : "only its sample"}, named; the rest finish`, async () => {
      const environments = environmentLookup([faultyEnvironment(fault)]);
      const result = await runScenario(scenario(mode), { environments });
      const [a, bad, c, healthy] = result.samples;
      expect(bad!.termination).toBe("error");
      expect(bad!.error).toMatch(error);
      for (const ok of sameCall ? [] : [a!, c!]) {
        expect(ok.termination).toBe("terminated");
        expect(ok.total_reward).toBe(3);
        expect(ok.error ?? null).toBeNull();
      }
      if (sameCall) for (const s of [a!, c!]) expect(s.error).toMatch(error);
      expect(healthy!.termination).toBe("terminated");
      expect(healthy!.total_reward).toBe(1);
      // Exportable: the whole result is plain JSON.
      expect(JSON.parse(JSON.stringify(result))).toEqual(result);
    });
  }

  it("with fail_fast the first fault rejects the rollout, naming the sample", async () => {
    const environments = environmentLookup([faultyEnvironment(FAULTS.throws!.fault)]);
    await expect(runScenario(scenario(mode, true), { environments })).rejects.toThrow(/idx 1.*index out of range|index out of range/);
  });
});
