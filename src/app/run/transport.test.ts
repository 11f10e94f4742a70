/**
 * The page's large-run paths give the same run as the plain ones: events sent by the worker in batches with typed
 * arrays (src/app/worker/event-batch.ts), the result sent compact with its JSON text, an export written in slices
 * (./export-slices.ts), an import rebuilt in slices (./build-slices.ts), and a run model's compact storage
 * (./compact-messages.ts) shared with an import's samples; an imported file's numbers come out as they went in.
 */

import { describe, expect, it, vi } from "vitest";
import type { Message, RolloutEvent } from "../../core/index.js";
import { runScenario } from "../../scenario/run.js";
import { parseScenario } from "../../scenario/schema.js";
import calculator from "../../scenario/examples/calculator-scripted.json";
import workspace from "../../scenario/examples/workspace-structured.json";
import { BATCH_EVENTS, EventBatcher, packEvent, packLog, packResult, plainEvent, unpackResult } from "../worker/event-batch.js";
import { buildRunInSlices } from "./build-slices.js";
import { compactLog, compactMessage, isCompact, packOf, TokenPack, type PackedEvent } from "./compact-messages.js";
import { exportJsonlInSlices } from "./export-slices.js";
import { buildRun, exportJsonl, importJsonl, readJsonl } from "./jsonl.js";
import { resultText, setResultText } from "./result-text.js";
import { RunModel, tokenCount } from "./run-model.js";

async function recorded(source: unknown) {
  const scenario = parseScenario(source);
  const events: RolloutEvent[] = [];
  const result = await runScenario(scenario, { onEvent: (e) => events.push(structuredClone(e)) });
  return { scenario, events, result };
}

const nextTurn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

describe("large-run paths", () => {
  for (const [name, source] of [["calculator", calculator], ["workspace", workspace]] as const) {
    it(`${name}: packed events (typed arrays, as the worker sends them) build the same run as plain ones`, async () => {
      const { scenario, events } = await recorded(source);
      const plain = new RunModel();
      for (const e of events) plain.apply(e);
      const packed = new RunModel();
      for (const e of events) {
        const transfer: ArrayBuffer[] = [];
        const p = structuredClone(packEvent(e, transfer), { transfer });
        packed.apply(p);
        if (e.type === "rollout_end") {
          // Sent without its message logs (every message reached the page in its own event): no buffer for them.
          expect(transfer).toEqual([]);
          const { message_log: _logs, ...batch } = e.batch;
          expect(plainEvent(p)).toEqual({ ...e, batch });
        } else expect(plainEvent(p)).toEqual(e);
      }
      expect(exportJsonl(packed, scenario)).toBe(exportJsonl(plain, scenario));
      // No second copy of the messages: the samples' own are the run's message logs.
      expect(packed.finalBatch!.message_log).toBeUndefined();
      expect(plain.finalBatch!.message_log).toBeUndefined();
      expect(Object.keys(packed.finalBatch!)).toEqual(Object.keys(plain.finalBatch!));
      for (const s of packed.samples) for (const m of s.messages) expect(isCompact(m)).toBe(true);
      expect(tokenCount(packed.samples[0]!.messages[0]!)).toBe(events.find((e) => e.type === "rollout_start")!.samples[0]!.message_log[0]!.token_ids.length);
    });

    it(`${name}: the result sent compact reads the same, and its JSON text is the worker's`, async () => {
      const { result } = await recorded(source);
      const transfer: ArrayBuffer[] = [];
      const packed = packResult(result, transfer);
      expect(packed.text).toBe(JSON.stringify(result));
      const unpacked = await unpackResult(structuredClone(packed.result, { transfer }), nextTurn, 0);
      expect(JSON.parse(JSON.stringify(unpacked))).toEqual(JSON.parse(packed.text));
      setResultText(unpacked, packed.text);
      expect(resultText(unpacked)).toBe(packed.text);
      expect(resultText(null)).toBe("null");
    });

    it(`${name}: an export written in slices is the export; an import rebuilt in slices is the import`, async () => {
      const { scenario, events } = await recorded(source);
      const model = new RunModel();
      for (const e of events) model.apply(e);
      const text = exportJsonl(model, scenario);
      const sliced = await exportJsonlInSlices(model, scenario, { sliceMs: 0, yieldToPage: nextTurn });
      expect(await sliced.blob.text()).toBe(text);
      // One slice per sample at least (the footer, a scenario, is written in slices too).
      expect(sliced.slices).toBeGreaterThanOrEqual(model.samples.length);
      const read = await readJsonl(new Blob([text]));
      const rebuilt = await buildRunInSlices(read, { sliceMs: 0, yieldToPage: nextTurn });
      expect(exportJsonl(rebuilt.model, rebuilt.scenario)).toBe(exportJsonl(buildRun(read).model, buildRun(read).scenario));
    });
  }

  it("a run model takes over an import's packs (compact messages, one pack per sample) without copying them", () => {
    const { model: source, scenario } = importJsonl(exportJsonl(liveLikeModel(), { note: "x" }));
    const read = {
      samples: source.samples.map((s) => {
        const pack = new TokenPack();
        return { idx: s.idx, task_name: s.task, message_log: s.messages.map((m) => compactMessage(m, pack)), "lab/prompt_messages": s.promptMessages };
      }),
      footer: { scenario },
    };
    const { model } = buildRun(read);
    expect(model.samples[0]!.messages[0]).toBe(read.samples[0]!.message_log[0]);
    expect(model.samples[0]!.messages.map((m) => m.token_ids)).toEqual(source.samples[0]!.messages.map((m) => m.token_ids));
    // A second model of the same read copies (the packs have an owner now).
    const again = buildRun(read).model;
    expect(again.samples[0]!.messages[0]).not.toBe(read.samples[0]!.message_log[0]);
    expect(again.samples[0]!.messages).toEqual(model.samples[0]!.messages);
  });

  it("the batcher keeps the events' order, sends a full batch at once, and the rest when flushed", () => {
    let now = 0;
    const sent: { runId: number; events: PackedEvent[] }[] = [];
    const batcher = new EventBatcher((runId, events) => sent.push({ runId, events }), () => now);
    const token = (i: number): RolloutEvent => ({ type: "token", t: i, sample: 0, turn: 0, tokenId: i, text: "x" });
    for (let i = 0; i < BATCH_EVENTS + 3; i++) batcher.push(1, token(i));
    expect(sent.map((b) => b.events.length)).toEqual([BATCH_EVENTS]);
    now = 100;
    batcher.push(1, token(-1)); // the oldest queued event is old: everything goes
    expect(sent.map((b) => b.events.length)).toEqual([BATCH_EVENTS, 4]);
    batcher.push(2, token(0));
    batcher.push(3, token(1)); // another run: its own batch
    batcher.flush();
    expect(sent.map((b) => [b.runId, b.events.length])).toEqual([[1, BATCH_EVENTS], [1, 4], [2, 1], [3, 1]]);
    expect(sent.flatMap((b) => b.events).map((e) => e.t)).toEqual([...Array.from({ length: BATCH_EVENTS + 3 }, (_, i) => i), -1, 0, 1]);
  });

  it("the batcher sends at once what is queued with a sample's end, the rollout's end or its error (no 16 ms wait)", () => {
    vi.useFakeTimers();
    try {
      const sent: PackedEvent[][] = [];
      const batcher = new EventBatcher((_runId, events) => sent.push(events), () => 0);
      const token: RolloutEvent = { type: "token", t: 1, sample: 0, turn: 0, tokenId: 1, text: "x" };
      batcher.push(1, token);
      expect(sent).toEqual([]);
      batcher.push(1, { type: "sample_end", t: 2, sample: 0, idx: 0, termination: "terminated", error: null, totalReward: 1, turns: 1 });
      expect(sent.map((b) => b.map((e) => e.type))).toEqual([["token", "sample_end"]]);
      batcher.push(1, token);
      batcher.push(1, { type: "rollout_end", t: 3, batch: { total_reward: [1] }, metrics: {}, partial: false });
      expect(sent.map((b) => b.map((e) => e.type))).toEqual([["token", "sample_end"], ["token", "rollout_end"]]);
      batcher.push(2, { type: "rollout_error", t: 4, error: "boom" });
      expect(sent.at(-1)!.map((e) => e.type)).toEqual(["rollout_error"]);
      // Nothing left for the timer: a worker that dies now has lost nothing of it.
      const before = sent.length;
      vi.advanceTimersByTime(100);
      expect(sent.length).toBe(before);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("an imported file's numbers are exported as they were read", () => {
  /** A run whose log-probabilities are no float32 (as another tool writes them), and ids up to the largest. */
  const file = () => {
    const sample = (idx: number) =>
      JSON.stringify({
        idx,
        task_name: "t",
        message_log: [
          { role: "user", content: "q", token_ids: [1, 2147483647] },
          { role: "assistant", content: "a", token_ids: [5, 6, 7], generation_logprobs: [-0.1, -1e-9, -1 / 3] },
          { role: "environment", content: "o", token_ids: [8] },
          { role: "assistant", content: "b", token_ids: [9], generation_logprobs: [Math.fround(-0.5)] },
        ],
        total_reward: 0,
        termination: "max_turns",
        "lab/prompt_messages": 1,
      });
    return `${[sample(0), sample(1), JSON.stringify({ "lab/format": "rollout-lab-run/1", mode: "sync", metrics: {}, scenario: null })].join("\n")}\n`;
  };
  const numbers = (jsonl: string) =>
    jsonl
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { message_log?: Message[] })
      .filter((l) => l.message_log)
      .map((l) => l.message_log!.map((m) => [m.token_ids, m.generation_logprobs ?? null]));

  it("read in memory (importJsonl) and exported again", () => {
    const { model, scenario } = importJsonl(file());
    expect(numbers(exportJsonl(model, scenario))).toEqual(numbers(file()));
    expect(model.samples[0]!.messages[1]!.generation_logprobs).toEqual([-0.1, -1e-9, -1 / 3]);
  });

  it("read as the page reads it (packed in the reader's Worker, compact on the page), rebuilt in slices and exported", async () => {
    const read = await readJsonl(new Blob([file()]));
    // What ./jsonl-worker.ts sends and ./jsonl-offthread.ts takes in.
    const transfer: ArrayBuffer[] = [];
    const packed = read.samples.map((s) => ({ ...s, message_log: packLog(s.message_log, transfer) as Message[] }));
    const arrived = structuredClone(packed, { transfer });
    const samples = arrived.map((s) => ({ ...s, message_log: compactLog(s.message_log) }));
    const rebuilt = await buildRunInSlices({ samples, footer: read.footer }, { sliceMs: 0, yieldToPage: nextTurn });
    expect(numbers(exportJsonl(rebuilt.model, rebuilt.scenario))).toEqual(numbers(file()));
    // And the export of that saved run, opened again, is the same text.
    const text = exportJsonl(rebuilt.model, rebuilt.scenario);
    const reopened = importJsonl(text);
    expect(exportJsonl(reopened.model, reopened.scenario)).toBe(text);
  });

  it("a model's float32 log-probabilities still travel and are kept as float32 (4 bytes each)", () => {
    const transfer: ArrayBuffer[] = [];
    const model = [{ role: "assistant", content: "a", token_ids: [1, 2], generation_logprobs: [Math.fround(-0.1), 0] }];
    const packed = packLog(model, transfer) as Message[];
    expect(packed[0]!.generation_logprobs).toBeInstanceOf(Float32Array);
    const imported = packLog([{ ...model[0]!, generation_logprobs: [-0.1, 0] }], []) as Message[];
    expect(imported[0]!.generation_logprobs).toBeInstanceOf(Float64Array);
    const compact = compactLog(packed);
    expect(packOf(compact[0]!)!.logprobs).toBeInstanceOf(Float32Array);
    expect(compact[0]!.generation_logprobs).toEqual([Math.fround(-0.1), 0]);
  });
});

/** A small finished run (two samples, two turns), built from events. */
function liveLikeModel(): RunModel {
  const model = new RunModel();
  const msg = (role: string, content: string, logprobs = false) => ({
    role,
    content,
    token_ids: [...content].map((c) => c.charCodeAt(0)),
    ...(logprobs ? { generation_logprobs: [...content].map((_, i) => Math.fround(-i / 8)) } : {}),
  });
  model.apply({
    type: "rollout_start",
    t: 0,
    mode: "sync",
    maxRolloutTurns: 2,
    maxSeqLen: 100,
    samples: [0, 1].map((sample) => ({ sample, idx: sample, task_name: "t", message_log: [msg("user", `go ${sample}`)], extra_env_info: { n: sample } })),
  } as RolloutEvent);
  for (const sample of [0, 1]) {
    for (const turn of [0, 1]) {
      model.apply({ type: "turn_start", t: 1, sample, turn, inputTokens: 4 });
      model.apply({ type: "assistant_message", t: 2, sample, turn, message: msg("assistant", `a${sample}${turn}`, true), truncated: false } as RolloutEvent);
      model.apply({
        type: "env_step",
        t: 3,
        sample,
        turn,
        observation: msg("environment", `o${sample}${turn}`),
        reward: 1,
        rewardComponents: null,
        terminated: turn === 1,
        truncatedContext: false,
        violations: [],
        metadata: { n: turn },
      } as RolloutEvent);
    }
    model.apply({ type: "sample_end", t: 4, sample, idx: sample, termination: "terminated", error: null, totalReward: 2, turns: 2 } as RolloutEvent);
  }
  return model;
}
