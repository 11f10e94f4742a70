import { describe, expect, it } from "vitest";
import {
  parseHermesToolCalls,
  Rng,
  templateToolResponseEnvelope,
  wrapToolResponseEnvelope,
  type EnvMessage,
  type Metadata,
} from "../../core/index.js";
import { WorkspaceEnv, workspaceEnvironment, type WorkspaceMetadata } from "../../envs/workspace/index.js";
import type { DatasetDatum } from "../../envs/types.js";
import { makeWorkspaceOracle, workspaceOracle } from "./workspace.js";
import type { OracleSolver } from "./types.js";

/** How the rollout appends an observation to the context (decision 8): raw, the fork's envelope, or the template's. */
type Envelope = "raw" | "fork" | "template-think";

interface Episode {
  reward: number;
  turns: number;
  responses: string[];
  observations: string[];
  invalid: boolean[];
  metadata: WorkspaceMetadata;
}

/** Drives the oracle against the environment as a rollout would: the context is prompt + responses + observations. */
function play(
  datum: DatasetDatum,
  options: { seed?: number; errorRate?: number; envelope?: Envelope; structured?: boolean; maxTurns?: number; solver?: OracleSolver } = {},
): Episode {
  const { seed = 0, errorRate = 0, envelope = "fork", structured = true, maxTurns = 8, solver = workspaceOracle } = options;
  const env = new WorkspaceEnv({ structured_tools: structured, max_turns: maxTurns });
  let context = datum.message_log[0]!.content + (envelope === "template-think" ? "<think>\n" : "");
  const log: EnvMessage[] = [{ role: "user", content: datum.message_log[0]!.content }];
  let metadata: Metadata = datum.extra_env_info;
  const episode: Episode = { reward: 0, turns: 0, responses: [], observations: [], invalid: [], metadata: metadata as WorkspaceMetadata };
  for (let turn = 0; turn < 60; turn++) {
    expect(solver.matches(context)).toBe(true);
    const text = solver.respond({ promptText: context, stopStrings: null, rng: Rng.derive(seed, 0, turn), errorRate });
    const assistant = `${text}<|im_end|>`; // no stop strings: the engine ends the turn with EOS
    context += assistant;
    log.push({ role: "assistant", content: text });
    episode.responses.push(text);
    const out = env.step([log], [metadata]);
    const observation = out.observations[0]!;
    log.push(observation);
    episode.observations.push(observation.content);
    episode.turns++;
    episode.reward += (out.rewards as number[])[0]!;
    episode.metadata = out.metadata[0] as WorkspaceMetadata;
    episode.invalid.push(Boolean(episode.metadata.invalid_action));
    if (envelope === "raw") context += observation.content;
    else if (envelope === "fork") context += wrapToolResponseEnvelope(observation.content);
    else context += templateToolResponseEnvelope(observation.content, { assistantText: assistant, generationPrefill: "<think>\n" });
    if (out.terminateds[0]) return episode;
    metadata = out.metadata[0] ?? metadata;
  }
  throw new Error("the episode did not end");
}

/** The environment's observation and metadata after one response to the datum's prompt. */
function stepOnce(datum: DatasetDatum, text: string): { content: string; metadata: WorkspaceMetadata } {
  const env = new WorkspaceEnv({ structured_tools: true, max_turns: 8 });
  const out = env.step([[{ role: "user", content: datum.message_log[0]!.content }, { role: "assistant", content: text }]], [datum.extra_env_info]);
  return { content: out.observations[0]!.content, metadata: out.metadata[0] as WorkspaceMetadata };
}

const dataset = (config: Record<string, unknown> = {}, seed = 11, size = 8) =>
  workspaceEnvironment.generateDataset({ size, seed, config, taskName: "workspace" });
const kindOf = (d: DatasetDatum) => (d.extra_env_info as WorkspaceMetadata).task.kind;

describe("workspace oracle, structured tools", () => {
  for (const envelope of ["fork", "raw", "template-think"] as const) {
    it(`solves every task kind in three turns (${envelope} observations)`, () => {
      for (const datum of dataset()) {
        const episode = play(datum, { envelope });
        expect(episode, `${kindOf(datum)}: ${episode.observations.join(" | ")}`).toMatchObject({ reward: 1, turns: 3 });
        expect(episode.invalid).toEqual([false, false, false]);
      }
    });
  }

  it("answers with one Hermes call per turn: a lookup, write_file, then task_complete", () => {
    const datum = dataset({ tasks: ["count_errors"] })[0]!;
    const episode = play(datum);
    const names = episode.responses.map((r) => parseHermesToolCalls(r).tool_calls.map((c) => c.name));
    expect(names).toEqual([["run_shell"], ["write_file"], ["task_complete"]]);
    const meta = datum.extra_env_info as WorkspaceMetadata;
    const task = meta.task as Extract<WorkspaceMetadata["task"], { kind: "count_errors" }>;
    expect(episode.responses[0]).toBe(
      `<tool_call>\n{"name": "run_shell", "arguments": {"command": "grep -c ERROR ${task.log_path}"}}\n</tool_call>`,
    );
    expect(episode.observations[0]).toBe(`[exit=0]\n${task.expected_count}\n`);
    expect(episode.observations[1]).toBe(`[exit=0]\nwrote ${String(task.expected_count).length + 1} bytes to /workspace/answer.txt\n`);
    expect(episode.observations[2]).toBe("[graded] task solved: reward 1.0");
    expect(episode.metadata.fs.files["/workspace/answer.txt"]).toBe(`${task.expected_count}\n`);
  });

  it("closes a think block the template prefilled", () => {
    const episode = play(dataset()[0]!, { envelope: "template-think" });
    expect(episode.responses[0]!.startsWith("</think>\n\n<tool_call>")).toBe(true);
  });

  it("does not solve the task when told to finish early", () => {
    const early = makeWorkspaceOracle({ finishAfterSteps: 1 });
    for (const datum of dataset({}, 11, 4)) {
      const episode = play(datum, { solver: early });
      expect(episode).toMatchObject({ reward: 0, turns: 2 });
      expect(episode.observations[1]).toMatch(/^\[graded\] task not solved: .+; reward 0\.0$/);
    }
  });

  it("recovers from seeded mistakes of every kind and still solves the tasks", () => {
    const seen = new Set<string>();
    for (const [i, datum] of dataset({}, 5, 16).entries()) {
      const episode = play(datum, { seed: 100 + i, errorRate: 0.4, maxTurns: 30 });
      expect(episode.reward, episode.responses.join("\n---\n")).toBe(1);
      for (const r of episode.responses) {
        if (!r.includes("<tool_call>")) seen.add("prose");
        else if (r.startsWith("<think>")) seen.add("unclosed think");
        else if (r.includes('{"command": 5}') || r.includes('"arguments": {}}') && !r.includes("task_complete")) seen.add("bad argument");
        else if (parseHermesToolCalls(r).error) seen.add("malformed json");
      }
      // A mistaken turn other than an unclosed think costs a turn: invalid, or a look-up that finds no file.
      const missed = episode.observations.filter((o) => o.includes("No such file")).length;
      if (missed) seen.add("wrong path");
      expect(episode.turns).toBe(3 + episode.invalid.filter(Boolean).length + missed);
    }
    expect([...seen].sort()).toEqual(["bad argument", "malformed json", "prose", "unclosed think", "wrong path"]);
  });

  it("mistakes a look-up's file for a look-alike, a well-formed call that finds nothing, then looks up the right one", () => {
    const wrongPaths = new Set<string>();
    for (const datum of dataset({ tasks: ["count_errors", "fix_config"] }, 3, 6)) {
      const task = (datum.extra_env_info as WorkspaceMetadata).task;
      const right = task.kind === "count_errors" ? task.log_path : task.kind === "fix_config" ? task.config_path : "";
      const prompt = datum.message_log[0]!.content;
      for (let seed = 0; seed < 40; seed++) {
        const text = workspaceOracle.respond({ promptText: prompt, stopStrings: null, rng: Rng.derive(seed, 0, 0), errorRate: 1 });
        const call = parseHermesToolCalls(text).tool_calls[0];
        const args = JSON.stringify(call?.arguments ?? {});
        if (!call || args.includes(right) || !/No such file/.test(stepOnce(datum, text).content)) continue;
        const path = (call.arguments as { path?: string; command?: string }).path ?? (call.arguments as { command: string }).command.split(" ").at(-1)!;
        // A sibling in the same directory, with the look-up's own tool.
        expect(path.slice(0, path.lastIndexOf("/"))).toBe(right.slice(0, right.lastIndexOf("/")));
        expect(call.name).toBe(task.kind === "count_errors" ? "run_shell" : "read_file");
        expect(stepOnce(datum, text).metadata.invalid_action).toBeFalsy();
        wrongPaths.add(path);
        // The plan has not moved: the next turn is the planned look-up.
        const context = `${prompt}${text}<|im_end|>${wrapToolResponseEnvelope(stepOnce(datum, text).content)}`;
        const next = workspaceOracle.respond({ promptText: context, stopStrings: null, rng: Rng.derive(seed, 0, 1), errorRate: 0 });
        expect(next).toBe(workspaceOracle.respond({ promptText: prompt, stopStrings: null, rng: Rng.derive(seed, 0, 0), errorRate: 0 }));
      }
    }
    expect(wrongPaths.size).toBeGreaterThanOrEqual(3);
  });

  it("lookAlikeWeight makes the look-alike look-up that many times as likely, at the same error rate, and 1 is the lab's oracle", () => {
    const weighted = makeWorkspaceOracle({ lookAlikeWeight: 8 });
    const plain = makeWorkspaceOracle({ lookAlikeWeight: 1 });
    const counts = { weighted: 0, plain: 0, erring: 0 };
    const data = dataset({ tasks: ["count_errors", "fix_config"] }, 3, 6);
    // A turn's draws depend on the seed only: one datum per seed, 300 independent draws.
    for (let seed = 0; seed < 300; seed++) {
      const datum = data[seed % data.length]!;
      const prompt = datum.message_log[0]!.content;
      const ask = (solver: OracleSolver, errorRate: number) => solver.respond({ promptText: prompt, stopStrings: null, rng: Rng.derive(seed, 0, 0), errorRate });
      const lookedUpNothing = (text: string) => /No such file/.test(stepOnce(datum, text).content);
      counts.weighted += Number(lookedUpNothing(ask(weighted, 1)));
      counts.plain += Number(lookedUpNothing(ask(plain, 1)));
      // Weight 1 draws exactly as the default oracle does; with no errors the weight changes nothing.
      expect(ask(plain, 0.3)).toBe(ask(workspaceOracle, 0.3));
      expect(ask(weighted, 0)).toBe(ask(workspaceOracle, 0));
      // The same turns err (whether to err is drawn first).
      const erred = ask(weighted, 0.3) !== ask(weighted, 0);
      expect(erred).toBe(ask(workspaceOracle, 0.3) !== ask(workspaceOracle, 0));
      counts.erring += Number(erred);
    }
    // Every turn errs at rate 1: the look-alike is 1 kind in 5 at weight 1 (~60 of 300), 8 in 12 at weight 8 (~200).
    expect(counts.plain).toBeGreaterThan(30);
    expect(counts.plain).toBeLessThan(90);
    expect(counts.weighted).toBeGreaterThan(170);
    expect(counts.weighted).toBeLessThan(230);
    expect(counts.erring).toBeGreaterThan(60);
    expect(counts.erring).toBeLessThan(120);
    expect(() => makeWorkspaceOracle({ lookAlikeWeight: 0 })).toThrow(/lookAlikeWeight must be a whole number ≥ 1, got 0/);
    expect(() => makeWorkspaceOracle({ lookAlikeWeight: 1.5 })).toThrow(/lookAlikeWeight/);
  });

  it("contentFirstWrites names write_file's content before its path; the environment runs it and the task is solved", () => {
    const contentFirst = makeWorkspaceOracle({ contentFirstWrites: true });
    for (const datum of dataset({ tasks: ["fix_config"] }).slice(0, 3)) {
      const keysOfWrites = (episode: Episode) =>
        episode.responses
          .map((r) => parseHermesToolCalls(r).tool_calls[0])
          .filter((call) => call?.name === "write_file")
          .map((call) => Object.keys(call!.arguments as Record<string, unknown>));
      const reordered = play(datum, { solver: contentFirst });
      expect(reordered.reward).toBe(1);
      expect(reordered.invalid.every((i) => !i)).toBe(true);
      expect(keysOfWrites(reordered)).toEqual([["content", "path"]]);
      // The lab's oracle: the path first, the same plan and turns otherwise.
      const lab = play(datum);
      expect(keysOfWrites(lab)).toEqual([["path", "content"]]);
      expect(reordered.turns).toBe(lab.turns);
    }
  });

  it("pathOnlyWriteWeight adds a write_file call with its path and no content, only before a write, and 0 is the lab's oracle", () => {
    const weighted = makeWorkspaceOracle({ pathOnlyWriteWeight: 4 });
    const none = makeWorkspaceOracle({ pathOnlyWriteWeight: 0 });
    const datum = dataset({ tasks: ["fix_config"] })[0]!;
    const episode = play(datum);
    const writeTurn = episode.responses.findIndex((r) => parseHermesToolCalls(r).tool_calls[0]?.name === "write_file");
    expect(writeTurn).toBeGreaterThan(0);
    // The context before the write, as play builds it (fork envelope).
    let context = datum.message_log[0]!.content;
    for (let i = 0; i < writeTurn; i++) context += `${episode.responses[i]}<|im_end|>${wrapToolResponseEnvelope(episode.observations[i]!)}`;
    const planned = parseHermesToolCalls(episode.responses[writeTurn]!).tool_calls[0]!;
    const prompt = datum.message_log[0]!.content;
    let pathOnly = 0;
    for (let seed = 0; seed < 300; seed++) {
      const ask = (solver: OracleSolver, text: string, errorRate: number) => solver.respond({ promptText: text, stopStrings: null, rng: Rng.derive(seed, 0, 0), errorRate });
      const text = ask(weighted, context, 1);
      const call = parseHermesToolCalls(text).tool_calls[0];
      if (call?.name === "write_file" && !("content" in (call.arguments as object))) {
        expect(call.arguments).toEqual({ path: (planned.arguments as { path: string }).path });
        // The environment's schema rejects it: the penalty the slip costs, and the prompt to try again.
        expect(stepOnce(datum, text).content).toMatch(/^No runnable tool call found/);
        pathOnly++;
      }
      // Weight 0 draws as the lab's oracle; before a look-up the weight changes nothing.
      expect(ask(none, context, 0.3)).toBe(ask(workspaceOracle, context, 0.3));
      expect(ask(weighted, prompt, 1)).toBe(ask(workspaceOracle, prompt, 1));
      expect(ask(workspaceOracle, context, 1)).not.toMatch(/^<tool_call>\n\{"name": "write_file", "arguments": \{"path": "[^"]*"\}\}/);
    }
    // Every turn errs: the path-only write is 4 kinds in 8 before a write (~150 of 300).
    expect(pathOnly).toBeGreaterThan(110);
    expect(pathOnly).toBeLessThan(190);
    expect(() => makeWorkspaceOracle({ pathOnlyWriteWeight: -1 })).toThrow(/pathOnlyWriteWeight must be a whole number ≥ 0, got -1/);
    expect(() => makeWorkspaceOracle({ pathOnlyWriteWeight: 0.5 })).toThrow(/pathOnlyWriteWeight/);
  });

  it("is deterministic by seed", () => {
    const datum = dataset()[1]!;
    expect(play(datum, { seed: 3, errorRate: 0.5, maxTurns: 20 })).toEqual(play(datum, { seed: 3, errorRate: 0.5, maxTurns: 20 }));
  });
});

describe("workspace oracle, legacy fenced bash", () => {
  for (const envelope of ["raw", "fork"] as const) {
    it(`solves every task kind with bash blocks and TASK_COMPLETE (${envelope} observations)`, () => {
      for (const datum of dataset({ structured_tools: false })) {
        const episode = play(datum, { structured: false, envelope });
        expect(episode, `${kindOf(datum)}: ${episode.observations.join(" | ")}`).toMatchObject({ reward: 1, turns: 3 });
        expect(episode.responses[0]!.startsWith("```bash\n")).toBe(true);
        expect(episode.responses[2]).toBe("TASK_COMPLETE");
      }
    });
  }

  it("recovers from seeded mistakes", () => {
    for (const [i, datum] of dataset({ structured_tools: false }, 6, 4).entries()) {
      const episode = play(datum, { structured: false, envelope: "raw", seed: i, errorRate: 0.4, maxTurns: 30 });
      expect(episode.reward).toBe(1);
    }
  });
});

describe("workspaceOracle.matches", () => {
  it("recognises workspace prompts only", () => {
    expect(workspaceOracle.matches(dataset()[0]!.message_log[0]!.content)).toBe(true);
    expect(workspaceOracle.matches("<|im_start|>user\nSolve: 1 + 2<|im_end|>\n")).toBe(false);
  });
});
