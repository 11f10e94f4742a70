import { execFile } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { byteLevelTokenizer as tok, runMultiTurnRollout, type EnvironmentInterface } from "../core/index.js";
import { scriptedPolicy } from "../policy/scripted.js";
import { environmentLookup, findEnvironment } from "../envs/index.js";
import { loadNodeModelPolicy } from "../policy/llm/node.js";
import { withoutTiming } from "./result.js";
import { inputBatchFor, prepareScenario, runScenario } from "./run.js";
import { parseScenario, ScenarioError, type Scenario } from "./schema.js";

const exec = promisify(execFile);
const examples = join(import.meta.dirname, "examples");
const example = async (name: string) => parseScenario(JSON.parse(await readFile(join(examples, name), "utf8")));

describe("the sliding puzzle solved by the oracle", () => {
  for (const file of ["sliding-puzzle-oracle-sync.json", "sliding-puzzle-oracle-async.json"]) {
    it(file, async () => {
      const result = await runScenario(await example(file));
      expect(result.samples).toHaveLength(4);
      for (const s of result.samples) {
        expect(s.termination).toBe("terminated");
        expect(s.total_reward).toBe(1);
        expect(s.message_log.at(-1)!.content).toContain("Congratulations! You've solved the puzzle!");
      }
      expect(result.metrics).toMatchObject({ natural_termination_rate: 1, truncation_rate: 0, max_turns_reached_rate: 0, mean_total_reward: 1 });
    });
  }

  it("sync and async make the same moves (decisions are seeded per sample and turn)", async () => {
    const sync = await runScenario(await example("sliding-puzzle-oracle-sync.json"));
    const async_ = await runScenario(await example("sliding-puzzle-oracle-async.json"));
    expect(async_.samples.map((s) => s.message_log)).toEqual(sync.samples.map((s) => s.message_log));
  });

  it("two runs of the same scenario give identical JSON apart from timing", async () => {
    const a = await runScenario(await example("sliding-puzzle-oracle-async.json"));
    const b = await runScenario(await example("sliding-puzzle-oracle-async.json"));
    expect(JSON.stringify({ ...b, metrics: withoutTiming(b.metrics) })).toBe(JSON.stringify({ ...a, metrics: withoutTiming(a.metrics) }));
  });
});

describe("the calculator", () => {
  it("scripted: exact transcript and metrics", async () => {
    const result = await runScenario(await example("calculator-scripted.json"));
    const [s] = result.samples;
    const contents = s!.message_log.map((m) => [m.role, m.content]);
    expect(contents.slice(1)).toEqual([
      ["assistant", "[3, 5, sum]<call: calculator>"],
      ["environment", "<result>8.00000</result>"],
      ["assistant", "[8, 2, prod]<call: calculator>"],
      ["environment", "<result>16.00000</result>"],
      ["assistant", "16"],
      ["environment", "Correct! The final answer is 16.00."],
    ]);
    expect(s!.message_log[5]!.token_ids.at(-1)).toBe(tok.eosTokenId); // not cut: ends with EOS, kept in the ids
    const gen = "[3, 5, sum]<call: calculator>".length + "[8, 2, prod]<call: calculator>".length + 3;
    const env = "<result>8.00000</result>".length + "<result>16.00000</result>".length + "Correct! The final answer is 16.00.".length;
    expect(result.metrics).toEqual({
      total_turns: 3,
      avg_turns_per_sample: 3,
      max_turns_per_sample: 3,
      natural_termination_rate: 1,
      truncation_rate: 0,
      max_turns_reached_rate: 0,
      mean_total_tokens_per_sample: gen + env,
      mean_gen_tokens_per_sample: gen,
      max_gen_tokens_per_sample: gen,
      mean_env_tokens_per_sample: env,
      mean_total_reward: 1,
      max_total_reward: 1,
      min_total_reward: 1,
    });
    expect(s).toMatchObject({ idx: 0, truncated: false, termination: "terminated", total_reward: 1, loss_multiplier: 1 });
    expect(s!.extra_env_info).toMatchObject({ current_step: 2 });
  });

  it("the oracle solves generated problems", async () => {
    const result = await runScenario(await example("calculator-oracle.json"));
    for (const s of result.samples) expect([s.termination, s.total_reward]).toEqual(["terminated", 1]);
  });

  it("max_seq_len: the observation is cut to the room left, with exact metrics", async () => {
    const scenario = await example("calculator-scripted.json");
    const prompt = tok.encode(scenario.samples![0]!.message_log![0]!.content).length;
    const firstResponse = "[3, 5, sum]<call: calculator>".length;
    const result = await runScenario({ ...scenario, max_seq_len: prompt + firstResponse + 10 });
    const [s] = result.samples;
    expect(s!.termination).toBe("truncated_context");
    expect(s!.message_log[2]!.token_ids).toHaveLength(10);
    expect(s!.message_log[2]!.content).toBe("<result>8.00000</result>");
    expect(result.metrics).toMatchObject({
      total_turns: 1,
      natural_termination_rate: 1,
      truncation_rate: 1,
      max_turns_reached_rate: 0,
      mean_total_tokens_per_sample: firstResponse + 10,
      mean_env_tokens_per_sample: 10,
    });
  });

  it("max_rollout_turns: stops after the last allowed turn, with exact metrics", async () => {
    for (const mode of ["sync", "async"] as const) {
      const result = await runScenario({ ...(await example("calculator-scripted.json")), mode, max_rollout_turns: 2 });
      const [s] = result.samples;
      expect(s!.termination).toBe("max_turns");
      expect(s!.message_log).toHaveLength(5);
      expect(result.metrics).toMatchObject({ total_turns: 2, max_turns_reached_rate: 1, natural_termination_rate: 0, mean_total_reward: 0 });
    }
  });
});

describe("the workspace with structured tools on", () => {
  it("the oracle completes its tasks through Hermes tool calls, with the penalty counted", async () => {
    const result = await runScenario(await example("workspace-structured.json"));
    expect(result.samples).toHaveLength(3);
    for (const s of result.samples) {
      expect(s.termination).toBe("terminated");
      expect(s.message_log.some((m) => m.role === "assistant" && m.content.includes("<tool_call>"))).toBe(true);
      // The envelope wraps each observation's tokens, while content stays raw.
      const obs = s.message_log[2]!;
      expect(tok.decode(obs.token_ids).startsWith("<|im_start|>user\n<tool_response>\n")).toBe(true);
      expect(obs.content.startsWith("<|im_start|>")).toBe(false);
      expect(typeof s.invalid_action_count).toBe("number");
    }
    expect(Object.keys(result.metrics)).toContain("invalid_action_msg_rate");
  });
});

describe("a batch mixing two environments", () => {
  it("steps each task once per turn and keeps input order", async () => {
    const scenario = await example("mixed-envs.json");
    const prepared = await prepareScenario(scenario);
    const calls: Record<string, number[]> = {};
    const spied: Record<string, EnvironmentInterface> = {};
    for (const [task, env] of Object.entries(prepared.taskToEnv)) {
      spied[task] = {
        step: (logs, metadata) => {
          (calls[task] ??= []).push(logs.length);
          return env.step(logs, metadata);
        },
      };
    }
    const [batch, metrics] = await runMultiTurnRollout({
      policyGeneration: scriptedPolicy((scenario.policy as { responses: string[][] }).responses, tok),
      tokenizer: tok,
      taskToEnv: spied,
      inputBatch: inputBatchFor(prepared),
      maxSeqLen: scenario.max_seq_len,
      maxRolloutTurns: scenario.max_rollout_turns,
    });
    expect(calls).toEqual({ multi_step_calculator_game: [2, 2], sliding_puzzle_game: [1, 1] });
    expect(batch.get("task_name")).toEqual(["multi_step_calculator_game", "sliding_puzzle_game", "multi_step_calculator_game"]);
    expect(batch.get("total_reward")).toEqual([1, 1, 1]);
    expect(batch.get("termination")).toEqual(["terminated", "terminated", "terminated"]);
    expect(metrics).toMatchObject({ total_turns: 6, mean_total_reward: 1 });
  });
});

describe("bad scenarios fail clearly", () => {
  it("an environment config key it does not know", async () => {
    const scenario: Scenario = { ...(await example("calculator-scripted.json")), envs: { multi_step_calculator_game: { env: "calculator", config: { nope: 1 } } } };
    await expect(runScenario(scenario)).rejects.toThrow(/envs\.multi_step_calculator_game\.config: .*nope/);
  });
  it("an unknown environment", async () => {
    const scenario: Scenario = { ...(await example("calculator-scripted.json")), envs: { multi_step_calculator_game: { env: "chess" } } };
    await expect(runScenario(scenario)).rejects.toThrow("envs.multi_step_calculator_game.env: unknown environment 'chess' (built in: sliding_puzzle, calculator, workspace, http)");
    // A lookup that knows the user's environments lists them too.
    const withMine = environmentLookup([{ ...findEnvironment("calculator")!, name: "chess_of_mine" }]);
    await expect(prepareScenario(scenario, withMine)).rejects.toThrow(
      "envs.multi_step_calculator_game.env: unknown environment 'chess' (expected one of: sliding_puzzle, calculator, workspace, http, chess_of_mine)",
    );
  });
  it("a model policy naming a built-in model there is not: the scenario's field, found by the loader before it loads anything", async () => {
    const scenario: Scenario = { ...(await example("calculator-scripted.json")), policy: { kind: "model", model: "builtin:foo" } };
    const run = runScenario(scenario, { modelPolicy: async (spec) => ({ generation: await loadNodeModelPolicy(spec), tokenizer: tok }) });
    await expect(run).rejects.toBeInstanceOf(ScenarioError);
    await expect(run).rejects.toThrow(/^policy\.model: unknown built-in model 'builtin:foo' \(expected builtin:trained, /);
    // A runner whose loader knows other ids (a test's stand-in) is not second-guessed.
    const standIn = runScenario({ ...scenario, policy: { kind: "model", model: "builtin:stand-in" } }, { modelPolicy: async () => ({ generation: scriptedPolicy([["4"]], tok), tokenizer: tok }) });
    await expect(standIn).resolves.toMatchObject({ samples: [expect.anything()] });
  });
  it("a bad structured block", async () => {
    const scenario: Scenario = { ...(await example("calculator-scripted.json")), structured: { enabled: true, thinking_style: "loud" } };
    await expect(runScenario(scenario)).rejects.toThrow(
      "structured: structured_tool_use.thinking_style must be one of ('paired', 'closing_only'), got 'loud'",
    );
  });
});

describe("npm run rollout", () => {
  const cli = ["tsx", join(import.meta.dirname, "../cli/rollout.ts")];

  it("writes the result JSON with --out, and replays it", async () => {
    const dir = await mkdtemp(join(tmpdir(), "rollout-"));
    const out = join(dir, "run.json");
    await exec("npx", [...cli, join(examples, "calculator-oracle.json"), "--out", out]);
    const saved = JSON.parse(await readFile(out, "utf8"));
    expect(saved.samples).toHaveLength(4);
    expect(Object.keys(saved.samples[0])).toEqual(expect.arrayContaining(["idx", "task_name", "message_log", "extra_env_info", "total_reward", "truncated", "termination"]));
    expect(saved.samples[0].message_log[1]).toHaveProperty("generation_logprobs");

    const replay = { ...JSON.parse(await readFile(join(examples, "calculator-oracle.json"), "utf8")), policy: { kind: "replay", file: "run.json" } };
    await writeFile(join(dir, "replay.json"), JSON.stringify(replay));
    const { stdout } = await exec("npx", [...cli, join(dir, "replay.json")]);
    const replayed = JSON.parse(stdout);
    expect(replayed.samples.map((s: { message_log: unknown }) => s.message_log)).toEqual(saved.samples.map((s: { message_log: unknown }) => s.message_log));
  }, 60_000);

  it("names the field of a bad scenario and exits 1", async () => {
    const dir = await mkdtemp(join(tmpdir(), "rollout-"));
    const bad = join(dir, "bad.json");
    await writeFile(bad, JSON.stringify({ mode: "sync", max_seq_len: 10, max_rollout_turns: 1, envs: {}, samples: [], policy: { kind: "oracle" }, colour: "red" }));
    const failure = await exec("npx", [...cli, bad]).catch((e: { code: number; stderr: string }) => e);
    expect((failure as { code: number }).code).toBe(1);
    expect((failure as { stderr: string }).stderr).toContain("colour: unknown key");
    expect((failure as { stderr: string }).stderr).toContain("samples: expected at least one sample");
  }, 60_000);
});

describe("task names are the scenario's own keys", () => {
  it("a task named 'constructor' runs like any other; 'toString' finds nothing its envs did not name", async () => {
    const base = await example("calculator-scripted.json");
    const renamed = parseScenario({
      ...base,
      envs: { constructor: base.envs.multi_step_calculator_game },
      samples: base.samples!.map((s) => ({ ...s, task_name: "constructor" })),
    });
    const result = await runScenario(renamed);
    expect(result.samples[0]!.termination).toBe("terminated");
    expect(result.samples[0]!.total_reward).toBe(1);
    // Past the parser (which names it), the runner refuses a dataset task that is no own key of envs.
    const stray = { ...renamed, samples: undefined, dataset: { task_name: "toString", size: 1, seed: 0 } } as Scenario;
    await expect(prepareScenario(stray)).rejects.toThrow("dataset.task_name: 'toString' is not a key of envs");
  });
});
