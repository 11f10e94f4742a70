import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { byteLevelTokenizer, type GenerationDatumSpec, type GenerationInterface, type GenerationOutputSpec } from "../../core/index.js";
import { loadNodeModelPolicy } from "../../policy/llm/node.js";
import { nodeServerPolicy } from "../../cli/node-run.js";
import { startStandInServer } from "../../cli/stand-in-server.js";
import { loadPolicyTokenizer } from "../../policy/llm/tokenizer-load.js";
import { runScenario, type LoadedPolicy, type RunScenarioOptions } from "../../scenario/run.js";
import { parseScenario, type Scenario } from "../../scenario/schema.js";
import { exportJsonl, importJsonl } from "../run/jsonl.js";
import { liveMetrics } from "../run/live-metrics.js";
import { RunModel } from "../run/run-model.js";
import { forkedRunModel } from "./fork-model.js";
import { forkPolicy } from "../../policy/fork-policy.js";
import { forkOptions, planFork, ForkError, type ForkRequest } from "./fork-scenario.js";

const examples = join(import.meta.dirname, "..", "..", "scenario", "examples");
const example = async (name: string) => parseScenario(JSON.parse(await readFile(join(examples, name), "utf8")));
/** The oracle sync example with longer episodes (3, 11, 1 and 5 turns). */
const longPuzzle = async (): Promise<Scenario> => {
  const base = await example("sliding-puzzle-oracle-sync.json");
  return { ...base, dataset: { ...base.dataset!, config: { size: 3, shuffle_moves: 40, max_moves: 30 } } };
};

const nodeModelPolicy = async (spec: Parameters<typeof loadNodeModelPolicy>[0]): Promise<LoadedPolicy> => {
  const policy = await loadNodeModelPolicy(spec);
  return { generation: policy, tokenizer: policy.tokenizer, dispose: () => policy.dispose() };
};

interface Original {
  scenario: Scenario;
  model: RunModel;
}

async function runOriginal(scenario: Scenario): Promise<Original> {
  const model = new RunModel();
  await runScenario(scenario, { onEvent: (e) => model.apply(e), modelPolicy: nodeModelPolicy });
  return { scenario, model };
}

/** Plans a fork of `sample` at `request.turn` and runs it as the lab does (the scenario, then the worker's wrapper). */
async function runFork(original: Original, sample: number, request: ForkRequest) {
  const s = original.model.samples[sample]!;
  const plan = planFork(
    {
      scenario: original.scenario,
      sample: s,
      maxRolloutTurns: original.model.summary.maxRolloutTurns,
      policySample: sample,
      finalStopStrings: (original.model.finalBatch?.stop_strings?.[sample] as string[] | null | undefined) ?? null,
    },
    request,
  );
  // The fork's scenario is a scenario like any other: it parses (no unknown keys) and survives JSON.
  const scenario = parseScenario(JSON.parse(JSON.stringify(plan.scenario)));
  const forked = forkedRunModel({ sample: s, summary: original.model.summary }, plan);
  const result = await runScenario(scenario, {
    onEvent: forked.apply,
    modelPolicy: nodeModelPolicy,
    wrapPolicy: (policy) => forkPolicy(policy, plan.continuation),
  });
  return { plan, fork: forked.model.samples[0]!, model: forked.model, result };
}

/** What must be identical between a sample and its re-run fork: messages, turns' outcomes, the ending. */
function outcome(s: RunModel["samples"][number]) {
  return {
    messages: s.messages.map((m) => ({ role: m.role, content: m.content, token_ids: m.token_ids, violations: m.invalid_action_violations ?? [] })),
    turns: s.turns.map((t) => ({
      turn: t.turn,
      reward: t.reward,
      terminated: t.terminated,
      truncatedContext: t.truncatedContext,
      responseTruncated: t.responseTruncated,
      inputTokens: t.inputTokens,
      violations: t.violations,
      metadata: t.metadata,
      stopStrings: t.stopStrings,
    })),
    totalReward: s.totalReward,
    termination: s.termination,
    error: s.error,
  };
}

async function expectReruns(original: Original, options: { logprobTolerance?: number } = {}) {
  let forks = 0;
  for (const s of original.model.samples) {
    // The first, a middle and the last turn of every sample.
    const turns = [...new Set([0, Math.floor(s.turns.length / 2), s.turns.length - 1])];
    for (const turn of turns) {
      const { plan, fork, result } = await runFork(original, s.sample, { turn, edit: { kind: "none" } });
      expect(plan.what).toBe("re-run");
      expect(plan.prefixExact).not.toBe(false);
      expect(plan.scenario.max_rollout_turns).toBe(original.model.summary.maxRolloutTurns - turn);
      expect(outcome(fork), `sample ${s.sample} forked at turn ${turn}`).toEqual(outcome(s));
      for (const [i, m] of fork.messages.entries()) {
        const lp = m.generation_logprobs ?? [];
        const want = s.messages[i]!.generation_logprobs ?? [];
        expect(lp).toHaveLength(want.length);
        lp.forEach((x, j) => expect(Math.abs(x - want[j]!)).toBeLessThanOrEqual(options.logprobTolerance ?? 0));
      }
      // The fork's own result has only the new turns: its reward is the remaining turns' reward.
      const remaining = s.turns.slice(turn).reduce((a, t) => a + (t.reward ?? 0), 0);
      expect(result.samples[0]!.total_reward).toBeCloseTo(remaining, 12);
      expect(result.samples[0]!.termination).toBe(s.termination);
      forks += 1;
    }
  }
  expect(forks).toBeGreaterThan(0);
}

describe("a fork with nothing edited reproduces the original's remaining turns", () => {
  it("the oracle on the sliding puzzle with seeded mistakes, sync", async () => {
    const base = await example("sliding-puzzle-oracle-sync.json");
    await expectReruns(await runOriginal({ ...base, policy: { kind: "oracle", seed: 3, error_rate: 0.3 } }));
  });

  it("the oracle on the sliding puzzle with seeded mistakes, async", async () => {
    const base = await example("sliding-puzzle-oracle-async.json");
    await expectReruns(await runOriginal({ ...base, policy: { kind: "oracle", seed: 3, error_rate: 0.3 } }));
  });

  it("the workspace with structured tools, the penalty and seeded mistakes (file system and envelopes restored)", async () => {
    await expectReruns(await runOriginal(await example("workspace-structured.json")));
  });

  it("a scripted policy on the calculator (the fork's script is the sample's responses)", async () => {
    await expectReruns(await runOriginal(await example("calculator-scripted.json")));
  });

  it("two environments in one batch, scripted", async () => {
    await expectReruns(await runOriginal(await example("mixed-envs.json")));
  });

  it("the built-in model with seeded sampling: the same tokens (its draws are seeded by the original's sample and turn)", async () => {
    await expectReruns(await runOriginal(await example("sliding-puzzle-model.json")), { logprobTolerance: 1e-4 });
  }, 60_000);
});

describe("a fork of a model run with a vocabulary of its own", () => {
  it("builtin:tiny-qwen3: keeps the messages' texts (its ids are not bytes) and plans no exact prefix", async () => {
    const base = await example("sliding-puzzle-model.json");
    const original = await runOriginal({ ...base, policy: { ...(base.policy as object), model: "builtin:tiny-qwen3" } } as Scenario);
    const s = original.model.samples[0]!;
    expect(Math.max(...s.messages.flatMap((m) => [...m.token_ids]))).toBeGreaterThan(265);
    const { plan } = await runFork(original, 0, { turn: 1, edit: { kind: "none" } });
    expect(plan.prefixExact).toBeNull();
    const datum = (plan.scenario as { samples: { message_log: { content: string }[] }[] }).samples[0]!;
    expect(datum.message_log[1]!.content).toBe(s.messages[1]!.content);
  }, 120_000);
});

describe("forks of runs whose tokens are not bytes, and of seeded servers", () => {
  /** Every sample forked at every turn with nothing edited: the same messages, tokens and ending as the original. */
  async function expectSameForks(scenario: Scenario, options: RunScenarioOptions) {
    const model = new RunModel();
    await runScenario(scenario, { ...options, onEvent: (e) => model.apply(e) });
    let forks = 0;
    for (const s of model.samples) {
      for (let turn = 0; turn < s.turns.length; turn++) {
        const plan = planFork({ scenario, sample: s, maxRolloutTurns: model.summary.maxRolloutTurns, policySample: s.sample }, { turn, edit: { kind: "none" } });
        const forked = forkedRunModel({ sample: s, summary: model.summary }, plan);
        await runScenario(parseScenario(JSON.parse(JSON.stringify(plan.scenario))), { ...options, onEvent: forked.apply, wrapPolicy: (p) => forkPolicy(p, plan.continuation) });
        const fork = forked.model.samples[0]!;
        const tokens = (x: typeof s) => x.messages.map((m) => [m.role, m.content, [...m.token_ids]]);
        expect(tokens(fork), `sample ${s.sample} forked at turn ${turn}`).toEqual(tokens(s));
        expect([fork.totalReward, fork.termination]).toEqual([s.totalReward, s.termination]);
        forks += 1;
      }
    }
    expect(forks).toBeGreaterThan(1);
  }

  it("a scripted policy whose prompts Qwen3's tokenizer renders (the scenario's tokenizer): forked at every turn", async () => {
    await expectSameForks(await example("qwen3-calculator-messages.json"), { textTokenizer: loadPolicyTokenizer });
  }, 60_000);

  it("a server policy sampling with a seed: the fork's requests carry the original sample's seeds", async () => {
    const server = await startStandInServer({ model: "builtin:tiny" });
    try {
      const scenario = parseScenario({
        mode: "sync",
        max_seq_len: 1024,
        max_rollout_turns: 3,
        max_new_tokens: 12,
        envs: { puzzle: { env: "sliding_puzzle", config: {} } },
        dataset: { task_name: "puzzle", size: 3, seed: 1, config: { size: 3, shuffle_moves: 6, max_moves: 10 } },
        policy: { kind: "server", base_url: server.url, model: "builtin:tiny", temperature: 1, top_p: 0.95, seed: 3 },
      });
      await expectSameForks(scenario, { serverPolicy: (spec) => nodeServerPolicy(spec) });
    } finally {
      await server.close();
    }
  }, 60_000);
});

describe("the fork's scenario", () => {
  it("holds one explicit datum: the prefix, the state and stop strings at the fork point, and the remaining budget", async () => {
    const original = await runOriginal(await longPuzzle());
    const s = original.model.samples[1]!;
    const turn = 2;
    const plan = planFork({ scenario: original.scenario, sample: s, maxRolloutTurns: 31, policySample: 1 }, { turn, edit: { kind: "none" } });
    const keys = Object.keys(plan.scenario).sort();
    expect(keys).toEqual(["envs", "max_rollout_turns", "max_seq_len", "mode", "policy", "samples"]);
    expect(plan.scenario.max_rollout_turns).toBe(31 - turn);
    const [datum] = plan.scenario.samples!;
    expect(Object.keys(datum!).sort()).toEqual(["extra_env_info", "idx", "message_log", "stop_strings", "task_name"]);
    expect(datum!.idx).toBe(s.idx);
    expect(datum!.stop_strings).toEqual(["</action>"]);
    expect(datum!.extra_env_info).toEqual(s.turns[turn - 1]!.metadata);
    // Prompt + (assistant, observation) per kept turn, each tokenizing to the original's tokens.
    expect(datum!.message_log).toHaveLength(s.promptMessages + 2 * turn);
    datum!.message_log!.forEach((m, i) => expect(byteLevelTokenizer.encode(m.content)).toEqual(s.messages[i]!.token_ids));
    expect(plan.continuation).toEqual({ sampleId: 1, turnOffset: turn });
    expect(plan.keptTurns).toBe(turn);
  });

  it("changes only the policy settings asked for, and names them", async () => {
    const original = await runOriginal(await longPuzzle());
    const source = { scenario: original.scenario, sample: original.model.samples[0]!, maxRolloutTurns: 31, policySample: 0 };
    const plan = planFork(source, { turn: 1, edit: { kind: "none" }, policy: { seed: 5, error_rate: 0.5 } });
    expect(plan.scenario.policy).toEqual({ kind: "oracle", seed: 5, error_rate: 0.5 });
    expect(plan.what).toBe("seed 0 → 5, error_rate 0 → 0.5");
    expect(() => planFork(source, { turn: 1, edit: { kind: "none" }, policy: { temperature: 0.5 } })).toThrow(ForkError);
  });

  it("a scripted policy keeps the forked sample's responses, at position 0", async () => {
    const scenario = await example("mixed-envs.json");
    const original = await runOriginal(scenario);
    const plan = planFork({ scenario, sample: original.model.samples[1]!, maxRolloutTurns: original.model.summary.maxRolloutTurns, policySample: 1 }, { turn: 1, edit: { kind: "none" } });
    const responses = (scenario.policy as { responses: string[][] }).responses;
    expect(plan.scenario.policy).toEqual({ kind: "scripted", responses: [responses[1]] });
    expect(plan.continuation.sampleId).toBe(0);
  });
});

describe("a fork of a saved or imported run", () => {
  it("plans the same fork as the live run: the stop strings per turn survive the JSONL export", async () => {
    const original = await runOriginal(await example("workspace-structured.json"));
    const imported = importJsonl(exportJsonl(original.model, original.scenario)).model;
    for (const [i, s] of original.model.samples.entries()) {
      for (let turn = 0; turn < s.turns.length; turn++) {
        const plan = (model: RunModel) =>
          planFork({ scenario: original.scenario, sample: model.samples[i]!, maxRolloutTurns: model.summary.maxRolloutTurns, policySample: i }, { turn, edit: { kind: "none" } });
        expect(plan(imported).scenario).toEqual(plan(original.model).scenario);
      }
    }
  });
});

describe("a fork of a fork", () => {
  it("continues the original's turns and draws too: a re-run of a re-run is the original", async () => {
    const base = await example("sliding-puzzle-oracle-async.json");
    const original = await runOriginal({ ...base, policy: { kind: "oracle", seed: 11, error_rate: 0.4 } });
    const s = original.model.samples.reduce((a, b) => (b.turns.length > a.turns.length ? b : a));
    expect(s.turns.length).toBeGreaterThanOrEqual(4);
    const first = await runFork(original, s.sample, { turn: 1, edit: { kind: "none" } });
    // The first fork is now the source: its scenario, its one sample, the original's sample for the seeded draws.
    const second = planFork(
      { scenario: first.plan.scenario, sample: first.fork, maxRolloutTurns: first.model.summary.maxRolloutTurns, policySample: s.sample },
      { turn: 3, edit: { kind: "none" } },
    );
    expect(second.scenario.max_rollout_turns).toBe(original.model.summary.maxRolloutTurns - 3);
    const forked = forkedRunModel({ sample: first.fork, summary: first.model.summary }, second);
    await runScenario(parseScenario(JSON.parse(JSON.stringify(second.scenario))), {
      onEvent: forked.apply,
      wrapPolicy: (policy) => forkPolicy(policy, second.continuation),
    });
    expect(outcome(forked.model.samples[0]!)).toEqual(outcome(s));
  });

  it("a fork exported and opened again keeps its continuation (the footer's lab/fork), so its own forks continue the original's draws", async () => {
    const base = await example("sliding-puzzle-oracle-async.json");
    const original = await runOriginal({ ...base, policy: { kind: "oracle", seed: 11, error_rate: 0.4 } });
    const s = original.model.samples.reduce((a, b) => (b.turns.length > a.turns.length ? b : a));
    const first = await runFork(original, s.sample, { turn: 1, edit: { kind: "assistant", text: s.messages[s.turns[1]!.assistantIndex!]!.content } });
    first.model.setForkContinuation(first.plan.continuation);
    const opened = importJsonl(exportJsonl(first.model, first.plan.scenario)).model;
    expect(opened.summary.forkContinuation).toEqual(first.plan.continuation);
    expect(first.plan.continuation).toMatchObject({ sampleId: s.sample, turnOffset: 1, forcedResponse: expect.any(String) });
    // Forked again from the file, as the page does: the row its run kept.
    const second = planFork(
      { scenario: first.plan.scenario, sample: opened.samples[0]!, maxRolloutTurns: opened.summary.maxRolloutTurns, policySample: opened.summary.forkContinuation!.sampleId },
      { turn: 3, edit: { kind: "none" } },
    );
    const forked = forkedRunModel({ sample: opened.samples[0]!, summary: opened.summary }, second);
    await runScenario(parseScenario(JSON.parse(JSON.stringify(second.scenario))), { onEvent: forked.apply, wrapPolicy: (policy) => forkPolicy(policy, second.continuation) });
    expect(outcome(forked.model.samples[0]!).messages).toEqual(outcome(first.fork).messages);
    // A run without one exports none.
    expect(importJsonl(exportJsonl(original.model, original.scenario)).model.summary.forkContinuation).toBeNull();
  });
});

describe("the fork as the lab shows it", () => {
  it("counts the kept turns in its total reward and metrics; the fork's own result counts only the new turns", async () => {
    const original = await runOriginal(await longPuzzle());
    const s = original.model.samples[1]!;
    const turn = 4;
    const { model, result } = await runFork(original, 1, { turn, edit: { kind: "none" } });
    const alone = new RunModel();
    // The original's sample alone, as a one-sample run, has the same metrics as the fork.
    alone.apply({ type: "rollout_start", t: 0, mode: "sync", samples: [], maxRolloutTurns: 31, maxSeqLen: 4096 });
    alone.samples.push(structuredClone(s));
    expect(model.summary.metrics).toEqual(liveMetrics(alone, { invalidActionEnabled: false }));
    expect(model.summary.metrics!.total_turns).toBe(s.turns.length);
    expect(result.metrics.total_turns).toBe(s.turns.length - turn);
    expect(model.finalBatch!.total_reward).toEqual([s.totalReward]);
  });
});

describe("editing an assistant turn", () => {
  it("forces the edited text as the turn's response: the environment reacts to it, then the policy goes on", async () => {
    const original = await runOriginal(await longPuzzle());
    const s = original.model.samples[1]!;
    const turn = Math.floor(s.turns.length / 2);
    expect(turn).toBeGreaterThanOrEqual(2);
    const edited = "I will look first.\n<action>view</action> and this is cut off";
    const { plan, fork, result } = await runFork(original, 1, { turn, edit: { kind: "assistant", text: edited } });
    expect(plan.what).toBe("edited assistant text");
    expect(plan.firstNewTurn).toBe(turn);
    expect(plan.continuation).toEqual({ sampleId: 1, turnOffset: turn, forcedResponse: edited });

    // The turns before the fork are the original's, numbered as they were.
    expect(fork.turns.slice(0, turn).map((t) => t.turn)).toEqual(s.turns.slice(0, turn).map((t) => t.turn));
    expect(fork.messages.slice(0, s.turns[turn]!.assistantIndex!)).toEqual(s.messages.slice(0, s.turns[turn]!.assistantIndex!));
    // Turn `turn` is the edited text, cut after the stop string as an engine cuts it.
    const t = fork.turns[turn]!;
    expect(t.turn).toBe(turn);
    const assistant = fork.messages[t.assistantIndex!]!;
    expect(assistant.content).toBe("I will look first.\n<action>view</action>");
    expect(assistant.token_ids).toEqual(byteLevelTokenizer.encode("I will look first.\n<action>view</action>"));
    // The environment answered the edited action: a view, no move, the same board as before the turn.
    expect(fork.messages[t.observationIndex!]!.content).toContain("Viewing the board. No move made.");
    expect(t.metadata).toEqual(s.turns[turn - 1]!.metadata);
    // Then the oracle went on and still solved it, one turn later than the original.
    expect(fork.termination).toBe("terminated");
    expect(fork.turns.length).toBe(s.turns.length + 1);
    expect(fork.totalReward).toBe(1);
    // The fork's own result: the prefix in its log, and only the new turns counted.
    expect(result.samples[0]!.message_log.filter((m) => m.role === "assistant")).toHaveLength(s.turns.length + 1);
    expect(result.metrics.total_turns).toBe(s.turns.length + 1 - turn);
  });

  it("a move the original did not make changes the board accordingly", async () => {
    const original = await runOriginal(await longPuzzle());
    const s = original.model.samples[1]!;
    const turn = 2;
    const before = s.turns[turn - 1]!.metadata as { game_state: { grid: number[][]; empty_pos: [number, number] } };
    const [r, c] = before.game_state.empty_pos;
    // "down" slides the tile above the blank down, when there is one; else "up".
    const action = r > 0 ? "down" : "up";
    const tile = before.game_state.grid[action === "down" ? r - 1 : r + 1]![c]!;
    const { fork } = await runFork(original, 1, { turn, edit: { kind: "assistant", text: `<action>${action}</action>` } });
    const t = fork.turns[turn]!;
    expect(fork.messages[t.observationIndex!]!.content).toContain(`Slid tile ${tile} ${action}.`);
    const after = t.metadata as { game_state: { grid: number[][] } };
    expect(after.game_state.grid[r]![c]).toBe(tile);
  });
});

describe("editing an observation", () => {
  it("goes on after the turn with the edited observation in the log and the state after the turn", async () => {
    const original = await runOriginal(await longPuzzle());
    const s = original.model.samples[3]!;
    const turn = 1;
    const text = "<environment>\nThe tiles are glued. (edited)\n</environment>\n";
    const { plan, fork } = await runFork(original, 3, { turn, edit: { kind: "observation", text } });
    expect(plan.what).toBe("edited observation");
    expect(plan.firstNewTurn).toBe(turn + 1);
    expect(plan.continuation).toEqual({ sampleId: 3, turnOffset: turn + 1 });
    const datum = plan.scenario.samples![0]!;
    expect(datum.message_log!.at(-1)!.content).toBe(text);
    expect(datum.extra_env_info).toEqual(s.turns[turn]!.metadata);
    expect(plan.scenario.max_rollout_turns).toBe(31 - (turn + 1));
    // The forked turn keeps its reward and state and shows the edited observation; new turns follow it.
    const t = fork.turns[turn]!;
    expect(fork.messages[t.observationIndex!]!.content).toBe(text);
    expect(t.reward).toBe(s.turns[turn]!.reward);
    expect(fork.turns[turn + 1]!.turn).toBe(turn + 1);
    expect(fork.turns[turn + 1]!.inputTokens).toBe(byteLevelTokenizer.encode(datum.message_log!.map((m) => m.content).join("")).length);
  });

  it("wraps the edited observation in the tool-response envelope when structured tools are on", async () => {
    const original = await runOriginal(await example("workspace-structured.json"));
    const s = original.model.samples.find((x) => x.turns.length >= 3)!;
    const plan = planFork(
      { scenario: original.scenario, sample: s, maxRolloutTurns: 8, policySample: s.sample },
      { turn: 0, edit: { kind: "observation", text: "edited output" } },
    );
    expect(plan.scenario.samples![0]!.message_log!.at(-1)!.content).toContain("<tool_response>\nedited output\n</tool_response>");
    expect(plan.editedObservation!.content).toBe("edited output");
  });

  it("is refused where the episode ended at that turn", async () => {
    const original = await runOriginal(await longPuzzle());
    const s = original.model.samples[0]!;
    const last = s.turns.length - 1;
    expect(forkOptions(s, last, 31).observation).toMatch(/ended at turn/);
    expect(forkOptions(s, last, 31).fork).toBeNull();
    expect(() => planFork({ scenario: original.scenario, sample: s, maxRolloutTurns: 31, policySample: 0 }, { turn: last, edit: { kind: "observation", text: "x" } })).toThrow(ForkError);
  });
});

describe("the fork's policy wrapper", () => {
  class Spy implements GenerationInterface {
    calls: GenerationDatumSpec[] = [];
    async generate(data: GenerationDatumSpec): Promise<GenerationOutputSpec> {
      this.calls.push(data);
      const ids = [...byteLevelTokenizer.encode("ok"), byteLevelTokenizer.eosTokenId];
      return {
        output_ids: data.input_ids.map((row, i) => Int32Array.from([...row.subarray(0, data.input_lengths[i]), ...ids])),
        logprobs: data.input_ids.map((_, i) => new Float64Array(data.input_lengths[i]! + ids.length).fill(-1)),
        generation_lengths: data.input_ids.map(() => ids.length),
        unpadded_sequence_lengths: data.input_lengths.map((n) => n + ids.length),
        truncated: data.input_ids.map(() => false),
      };
    }
  }
  const input = (turn: number): GenerationDatumSpec => ({
    input_ids: [Int32Array.of(1, 2, 3)],
    input_lengths: [3],
    stop_strings: [["</action>"]],
    max_new_tokens: [100],
    sample_ids: [0],
    turns: [turn],
  });

  it("answers the first generation with the edited text (EOS once), then asks the policy with the original's sample and turns", async () => {
    const spy = new Spy();
    const wrapped = forkPolicy({ generation: spy, tokenizer: byteLevelTokenizer }, { sampleId: 3, turnOffset: 4, forcedResponse: "hello<|im_end|>" });
    const first = await wrapped.generation.generate(input(0), false);
    expect(Array.from(first.output_ids[0]!.subarray(3))).toEqual([...byteLevelTokenizer.encode("hello"), byteLevelTokenizer.eosTokenId]);
    expect(first.logprobs[0]!.slice(3).every((x) => x === 0)).toBe(true);
    expect(spy.calls).toHaveLength(0);
    await wrapped.generation.generate(input(1), false);
    expect(spy.calls[0]!.sample_ids).toEqual([3]);
    expect(spy.calls[0]!.turns).toEqual([5]);
  });

  it("without an edit, every generation is the policy's", async () => {
    const spy = new Spy();
    const wrapped = forkPolicy({ generation: spy, tokenizer: byteLevelTokenizer }, { sampleId: 1, turnOffset: 2 });
    await wrapped.generation.generate(input(0), false);
    expect(spy.calls[0]!.sample_ids).toEqual([1]);
    expect(spy.calls[0]!.turns).toEqual([2]);
  });
});
