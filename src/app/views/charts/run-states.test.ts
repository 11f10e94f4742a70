import { describe, expect, it } from "vitest";
import type { RolloutEvent } from "../../../core/index.js";
import { RunModel } from "../../run/run-model.js";
import { cellKind, envStateAt, laneEnd, laneSpans, sampleSignature, sampleStateWords, turnCells } from "./run-states.js";

const msg = (role: string, n: number) => ({ role, content: "x", token_ids: Array.from({ length: n }, () => 1) });

function model(maxRolloutTurns: number, samples = 2): RunModel {
  const m = new RunModel();
  m.apply({
    type: "rollout_start",
    t: 0,
    mode: "async",
    samples: Array.from({ length: samples }, (_, sample) => ({ sample, idx: sample, task_name: "t", message_log: [], extra_env_info: null })),
    maxRolloutTurns,
    maxSeqLen: 100,
  });
  return m;
}

const turnStart = (sample: number, turn: number, t: number): RolloutEvent => ({ type: "turn_start", t, sample, turn, inputTokens: 1 });
const assistant = (sample: number, turn: number, t: number): RolloutEvent => ({
  type: "assistant_message",
  t,
  sample,
  turn,
  message: msg("assistant", 2),
  truncated: false,
});
const envStep = (sample: number, turn: number, t: number, terminated = false): RolloutEvent => ({
  type: "env_step",
  t,
  sample,
  turn,
  observation: msg("environment", 1),
  reward: 0,
  rewardComponents: null,
  terminated,
  truncatedContext: false,
  violations: [],
  metadata: null,
});
const end = (sample: number, t: number, termination: "terminated" | "error" | "cancelled", error: string | null = null): RolloutEvent => ({
  type: "sample_end",
  t,
  sample,
  idx: sample,
  termination,
  error,
  totalReward: 0,
  turns: 0,
});

describe("turn cells", () => {
  it("follow a sample through its turns", () => {
    const m = model(4);
    const s = m.samples[0]!;
    expect(turnCells(s, 4)).toEqual({ kinds: ["pending", "pending", "pending", "pending"], overflow: 0 });
    expect(sampleStateWords(s)).toBe("waiting to start");
    m.apply(turnStart(0, 0, 1));
    expect(cellKind(s, 0)).toBe("generating");
    expect(sampleStateWords(s)).toBe("generating turn 0");
    m.apply(assistant(0, 0, 2));
    expect(cellKind(s, 0)).toBe("environment");
    m.apply(envStep(0, 0, 3));
    expect(cellKind(s, 0)).toBe("ok");
    expect(sampleStateWords(s)).toBe("waiting for turn 1");
    m.apply(turnStart(0, 1, 4));
    m.apply(assistant(0, 1, 5));
    m.apply(envStep(0, 1, 6, true));
    m.apply(end(0, 7, "terminated"));
    expect(turnCells(s, 4)).toEqual({ kinds: ["ok", "terminated", null, null], overflow: 0 });
    expect(sampleStateWords(s)).toBe("terminated by the environment");
  });

  it("colour a failed last turn by the error and say it in words", () => {
    const m = model(3);
    m.apply(turnStart(1, 0, 1));
    m.apply(end(1, 2, "error", "generation failed: boom"));
    expect(turnCells(m.samples[1]!, 3).kinds).toEqual(["error", null, null]);
    expect(sampleStateWords(m.samples[1]!)).toBe("error: generation failed: boom");
  });

  it("cap the cells and count the overflow", () => {
    const m = model(999999);
    for (let k = 0; k < 30; k++) {
      m.apply(turnStart(0, k, 3 * k));
      m.apply(assistant(0, k, 3 * k + 1));
      m.apply(envStep(0, k, 3 * k + 2));
    }
    const cells = turnCells(m.samples[0]!, 999999, 24);
    expect(cells.kinds).toHaveLength(24);
    expect(cells.overflow).toBe(6);
    expect(turnCells(m.samples[1]!, 999999, 24).kinds).toHaveLength(24);
  });
});

describe("lane spans", () => {
  it("draw generation and environment spans, open ones up to now", () => {
    const m = model(3);
    m.apply(turnStart(0, 0, 10));
    m.apply(assistant(0, 0, 30));
    m.apply(envStep(0, 0, 35));
    m.apply(turnStart(0, 1, 40));
    const s = m.samples[0]!;
    expect(laneSpans(s, 50)).toEqual([
      { kind: "gen", turn: 0, start: 10, end: 30, open: false },
      { kind: "env", turn: 0, start: 30, end: 35, open: false },
      { kind: "gen", turn: 1, start: 40, end: 50, open: true },
    ]);
    expect(laneEnd(s, laneSpans(s, 50))).toBeNull();
    m.apply(assistant(0, 1, 60));
    expect(laneSpans(s, 70).at(-1)).toEqual({ kind: "env", turn: 1, start: 60, end: 70, open: true });
    // Cancelled while with the environment: no span for the unanswered step, the lane ends at the generation.
    m.apply(end(0, 80, "cancelled"));
    const spans = laneSpans(s, 90);
    expect(spans.at(-1)).toEqual({ kind: "gen", turn: 1, start: 40, end: 60, open: false });
    expect(laneEnd(s, spans)).toBe(60);
  });
});

describe("envStateAt", () => {
  it("names the state it shows, before, during and after turns", () => {
    const m = new RunModel();
    m.apply({
      type: "rollout_start",
      t: 0,
      mode: "sync",
      samples: [{ sample: 0, idx: 0, task_name: "t", message_log: [], extra_env_info: { step: 0 } }],
      maxRolloutTurns: 5,
      maxSeqLen: 100,
    });
    expect(envStateAt(m, 0, null)).toEqual({ metadata: { step: 0 }, when: "latest: initial state, before the first turn", task: "t" });
    expect(envStateAt(m, 3, null)).toBeNull();
    m.apply(turnStart(0, 0, 1));
    expect(envStateAt(m, 0, null)!.when).toBe("latest: initial state (turn 0 is in progress)");
    m.apply(assistant(0, 0, 2));
    m.apply({ ...(envStep(0, 0, 3) as Extract<RolloutEvent, { type: "env_step" }>), metadata: { step: 1 } });
    expect(envStateAt(m, 0, 0)).toEqual({ metadata: { step: 1 }, when: "state after turn 0", task: "t" });
    m.apply(turnStart(0, 1, 4));
    m.apply(assistant(0, 1, 5));
    // The last step of an episode carries the state it started from.
    m.apply({ ...(envStep(0, 1, 6, true) as Extract<RolloutEvent, { type: "env_step" }>), metadata: { step: 1 } });
    m.apply(end(0, 7, "terminated"));
    expect(envStateAt(m, 0, null)).toEqual({
      metadata: { step: 1 },
      when: "latest: state after turn 0: the episode ended at turn 1, and its final state is not kept",
      task: "t",
    });
    expect(envStateAt(m, 0, 9)!.when).toContain("ended at turn 1");
    expect(envStateAt(m, 0, 0)!.metadata).toEqual({ step: 1 });
  });

  it("a turn whose step failed says it ended the sample with the error, not that it never reached the environment", () => {
    const m = model(3, 1);
    m.apply(turnStart(0, 0, 1));
    m.apply(assistant(0, 0, 2));
    m.apply(end(0, 3, "error", "environment 'picky_env' step failed: Error: odd sample 0"));
    expect(envStateAt(m, 0, 0)!.when).toBe("initial state (turn 0 ended the sample with an error: environment 'picky_env' step failed: Error: odd sample 0)");
  });
});

describe("sampleSignature", () => {
  it("changes with every step that changes the drawing", () => {
    const m = model(3);
    const s = m.samples[0]!;
    const seen = new Set([sampleSignature(s)]);
    for (const e of [turnStart(0, 0, 1), assistant(0, 0, 2), envStep(0, 0, 3), turnStart(0, 1, 4), end(0, 5, "cancelled")]) {
      m.apply(e);
      const sig = sampleSignature(s);
      expect(seen.has(sig)).toBe(false);
      seen.add(sig);
    }
    // Tokens streaming into a turn do not change the row or the lane.
    const before = sampleSignature(m.samples[1]!);
    m.apply(turnStart(1, 0, 6));
    const started = sampleSignature(m.samples[1]!);
    expect(started).not.toBe(before);
    m.apply({ type: "token", t: 7, sample: 1, turn: 0, tokenId: 1, text: "a" });
    expect(sampleSignature(m.samples[1]!)).toBe(started);
  });
});
