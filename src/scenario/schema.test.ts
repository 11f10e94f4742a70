import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseSampling, parseScenario, parseScenarioText, ScenarioError } from "./schema.js";

const valid = {
  mode: "sync",
  max_seq_len: 256,
  max_rollout_turns: 3,
  envs: { t: { env: "calculator", config: {} } },
  samples: [{ task_name: "t", message_log: [{ role: "user", content: "hi" }] }],
  policy: { kind: "scripted", responses: [["1"]] },
};

function problemsOf(value: unknown): string[] {
  try {
    parseScenario(value);
  } catch (e) {
    if (e instanceof ScenarioError) return e.problems;
    throw e;
  }
  return [];
}

describe("scenario parser", () => {
  it("accepts a valid scenario and leaves optional keys absent", () => {
    const s = parseScenario(valid);
    expect(s.mode).toBe("sync");
    expect(s.greedy).toBeUndefined();
  });

  it("names the field path and what was expected", () => {
    expect(problemsOf({ ...valid, mode: "both" })).toEqual(['mode: expected "sync" or "async"']);
    expect(problemsOf({ ...valid, max_seq_len: 1.5 })).toEqual(["max_seq_len: expected a positive integer"]);
    expect(problemsOf({ ...valid, samples: [{ task_name: "t", message_log: [{ role: "user", content: 3 }] }] })).toEqual([
      "samples[0].message_log[0].content: expected a string",
    ]);
    expect(problemsOf({ ...valid, policy: { kind: "oracle", error_rate: 2 } })).toEqual(["policy.error_rate: expected a rate in [0, 1]"]);
  });

  it("rejects unknown keys anywhere", () => {
    // Each with the keys allowed where it stands (the policy's by its kind).
    expect(problemsOf({ ...valid, extra: 1 })).toEqual([`extra: unknown key (expected one of: mode, max_seq_len, max_rollout_turns, max_new_tokens, greedy, end_on_response_truncation, fail_fast, env_step_timeout_ms, envs, samples, dataset, policy, structured, invalid_action, tokenizer)`]);
    expect(problemsOf({ ...valid, policy: { kind: "scripted", responses: [], temperature: 1 } })).toEqual([
      "policy.temperature: unknown key (expected one of: kind, responses)",
    ]);
    expect(problemsOf({ ...valid, policy: { kind: "oracle", temperature: 1 } })).toEqual(["policy.temperature: unknown key (expected one of: kind, seed, error_rate)"]);
    expect(problemsOf({ ...valid, invalid_action: { enabled: true, penalty: 1 } })[0]).toMatch(/^invalid_action\.penalty: unknown key \(expected one of: enabled, invalid_action_penalty, /);
    expect(problemsOf({ ...valid, envs: { t: { env: "calculator", cfg: {} } } })).toEqual(["envs.t.cfg: unknown key (expected one of: env, config)"]);
  });

  it("needs exactly one of samples and dataset, and known task names", () => {
    expect(problemsOf({ ...valid, dataset: { task_name: "t", size: 2, seed: 0 } })).toEqual([
      "samples: expected exactly one of samples and dataset",
    ]);
    const { samples: _s, ...noSamples } = valid;
    expect(problemsOf(noSamples)).toEqual(["samples: expected exactly one of samples and dataset"]);
    expect(problemsOf({ ...valid, samples: [{ task_name: "nope", message_log: [{ role: "user", content: "x" }] }] })).toEqual([
      "samples[0].task_name: 'nope' is not a key of envs",
    ]);
  });

  it("reports an unknown policy kind", () => {
    expect(problemsOf({ ...valid, policy: { kind: "magic" } })).toEqual(["policy.kind: expected scripted, oracle, replay, model or server"]);
  });

  it("names JSON syntax errors with the source", () => {
    expect(() => parseScenarioText("{ nope", "a.json")).toThrow(/^a\.json: not valid JSON at line 1, column 3: /);
    expect(() => parseScenarioText('{\n  "mode": "sync"\n  "x": 1\n}', "a.json")).toThrow(/^a\.json: not valid JSON at line 3, column 3: /);
  });

  it("never throws anything but a ScenarioError, on any JSON value or text", () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), fc.record({ mode: fc.jsonValue(), envs: fc.jsonValue(), policy: fc.jsonValue() })), (value) => {
        try {
          parseScenario(value);
        } catch (e) {
          expect(e).toBeInstanceOf(ScenarioError);
        }
      }),
      { numRuns: 400 },
    );
    fc.assert(
      fc.property(fc.string(), (text) => {
        try {
          parseScenarioText(text);
        } catch (e) {
          expect(e).toBeInstanceOf(ScenarioError);
        }
      }),
      { numRuns: 400 },
    );
  });
});

describe("values that would run wrong", () => {
  it("env_step_timeout_ms above what a timer can wait (it would fire after 1 ms) is refused with the field", () => {
    expect(parseScenario({ ...valid, env_step_timeout_ms: 2_147_483_647 }).env_step_timeout_ms).toBe(2_147_483_647);
    expect(problemsOf({ ...valid, env_step_timeout_ms: 2_147_483_648 })).toEqual([
      "env_step_timeout_ms: expected at most 2147483647 ms (about 24.8 days, the longest a timer can wait)",
    ]);
    expect(problemsOf({ ...valid, env_step_timeout_ms: 1e400 })).toEqual(["env_step_timeout_ms: expected a positive integer"]);
  });

  it("task names that are Object.prototype members are no keys of an envs that does not name them", () => {
    for (const name of ["constructor", "toString", "hasOwnProperty", "valueOf"]) {
      expect(problemsOf({ ...valid, samples: [{ task_name: name, message_log: [{ role: "user", content: "hi" }] }] })).toEqual([
        `samples[0].task_name: '${name}' is not a key of envs`,
      ]);
      const { samples: _, ...noSamples } = valid;
      expect(problemsOf({ ...noSamples, dataset: { task_name: name, size: 1, seed: 0 } })).toEqual([`dataset.task_name: '${name}' is not a key of envs`]);
    }
  });

  it("a task that is named 'constructor' in envs is a task like any other", () => {
    const s = parseScenario({ ...valid, envs: { constructor: { env: "calculator" } }, samples: [{ task_name: "constructor", message_log: [{ role: "user", content: "hi" }] }] });
    expect(Object.keys(s.envs)).toEqual(["constructor"]);
  });
});

describe("parseSampling", () => {
  it("checks sampling settings alone by the policy block's rules, naming each field under its source", () => {
    expect(parseSampling({ temperature: 0.7, top_k: 20, top_p: 0.8, seed: 3 }, "sampling")).toEqual({ temperature: 0.7, top_k: 20, top_p: 0.8, seed: 3 });
    let error: unknown;
    try {
      parseSampling({ top_p: 1.5, top_k: 2.5, temperature: -1, greedy: true }, "sampling");
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ScenarioError);
    expect((error as ScenarioError).problems).toEqual(
      expect.arrayContaining([
        "sampling.top_p: expected a number in (0, 1]",
        "sampling.top_k: expected an integer",
        "sampling.temperature: expected a number ≥ 0",
        "sampling.greedy: unknown key (expected one of: temperature, top_k, top_p, seed)",
      ]),
    );
  });
});
