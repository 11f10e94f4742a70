/**
 * What the page keeps of a run that ends (./recovery.ts), against an IndexedDB that fails as Chromium does under a
 * full quota (./fake-idb.fixture.ts): a run counts as saved only once its save committed, and its checkpoint goes
 * only then; a save that aborts keeps the checkpoint, and the page says so with the reason, an Export and another
 * try. A live run something else replaced is kept once it has ended, as Stop keeps it.
 */

import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { FakeIndexedDB } from "./fake-idb.fixture.js";
import { RunModel } from "./run-model.js";

const fake = new FakeIndexedDB();
(globalThis as { indexedDB?: unknown }).indexedDB = fake;
afterAll(() => {
  delete (globalThis as { indexedDB?: unknown }).indexedDB;
});

// The page's modules, with the fake in place; the keeping follows a session of its own (its worker stood in for).
const { keepRunsOf, listRecoverable } = await import("./recovery.js");
const { useKeepNotices } = await import("./kept.js");
const { RunSession } = await import("../session/run-session.js");
const { FakeRunClient, nextTurn, plainSelection, rolloutStart, sampleEnd } = await import("../session/fake-client.fixture.js");
const { keptAsOf, setKeptAs } = await import("./kept-as.js");
const { importJsonl } = await import("./jsonl.js");
const { parseScenario } = await import("../../scenario/schema.js");
const calculator = (await import("../../scenario/examples/calculator-scripted.json")).default;

const client = new FakeRunClient();
const session = new RunSession(client, { selection: plainSelection(), environments: { settled: async () => undefined, connect: () => ({ ports: [], overdue: () => {}, release: () => {} }) } });
keepRunsOf(session);
const scenario = parseScenario(calculator);

beforeAll(() => {
  vi.useRealTimers();
});

/** A run the session started, under way: sample 0 ended, sample 1 going. */
async function liveRun() {
  const model = session.start(scenario);
  await nextTurn();
  const run = client.last;
  run.emit(rolloutStart(2), sampleEnd(0));
  return { model, run };
}

const store = (db: string, name: string) => fake.databases.get(db)?.get(name) ?? new Map();
const checkpoints = () => [...store("rollout-lab-recovery", "checkpoints").values()] as { id: string; finished: number }[];
const savedRuns = () => [...store("rollout-lab", "runs").values()] as { title: string }[];

/** Waits for the first checkpoint of the live run to commit. */
async function checkpointed() {
  await vi.waitFor(() => expect(checkpoints()).toHaveLength(1), { timeout: 5000, interval: 50 });
  return checkpoints()[0]!.id;
}

describe("keeping a run that ends", () => {
  it("a save that aborts at commit (a full quota): nothing is saved, the checkpoint stays, the page says why and offers the export; another try saves it, and only then does the checkpoint go", async () => {
    const { model, run } = await liveRun();
    const id = await checkpointed();
    // The save aborts at commit; so does the checkpoint of the run as it ended (the storage is full).
    fake.plan = ["quota", "quota"];
    run.finish();
    await vi.waitFor(() => expect(useKeepNotices.getState().notices).toHaveLength(1), { timeout: 5000, interval: 20 });
    const [notice] = useKeepNotices.getState().notices;
    expect(notice!.tone).toBe("error");
    expect(notice!.text).toMatch(/^The run “sync · 2 samples · .+” is not saved in this browser: the browser's storage for this site is full \(QuotaExceededError\)\. /);
    expect(notice!.text).toMatch(/Its last checkpoint \(1 of 2 samples finished, at .+\) is kept: a reload of the page offers it/);
    expect(savedRuns()).toEqual([]);
    expect(checkpoints().map((c) => c.id)).toEqual([id]);
    expect(keptAsOf(model)).toEqual({ state: "unsaved" });
    // The export is the whole run.
    const text = await (await notice!.exportRun!.blob()).text();
    expect(text.trim().split("\n")).toHaveLength(3);

    fake.settled.length = 0;
    await notice!.retry!.run();
    expect(savedRuns().map((r) => r.title)).toEqual([expect.stringMatching(/^sync · 2 samples/)]);
    expect(checkpoints()).toEqual([]);
    expect(fake.settled).toEqual(["complete put runs", "complete delete checkpoints"]);
    expect(useKeepNotices.getState().notices).toEqual([]);
  });

  it("a save that commits: the checkpoint is deleted after the commit, not before", async () => {
    const { run } = await liveRun();
    await checkpointed();
    fake.settled.length = 0;
    run.finish();
    await vi.waitFor(() => expect(checkpoints()).toEqual([]), { timeout: 5000, interval: 20 });
    expect(fake.settled.filter((s) => !s.startsWith("complete read"))).toEqual(["complete put runs", "complete delete checkpoints"]);
    expect(useKeepNotices.getState().notices).toEqual([]);
  });

  it("a save that commits and a checkpoint delete that fails after it: the checkpoint is never offered as an interrupted run, and goes at the next listing", async () => {
    const { run } = await liveRun();
    const id = await checkpointed();
    fake.plan = ["commit", "request-error"]; // the save commits; the checkpoint's delete fails
    run.finish();
    await vi.waitFor(() => expect(savedRuns().some((r) => (r as { checkpoint?: string }).checkpoint === id)).toBe(true), { timeout: 5000, interval: 20 });
    await vi.waitFor(() => expect(fake.settled.at(-1)).toMatch(/delete checkpoints/), { timeout: 5000, interval: 20 });
    expect(checkpoints().map((c) => c.id)).toContain(id);
    // Before: a reload offered the stale checkpoint (the run as it was a turn before its end) beside the saved run.
    expect((await listRecoverable()).map((c) => c.id)).not.toContain(id);
    await vi.waitFor(() => expect(checkpoints().map((c) => c.id)).not.toContain(id), { timeout: 5000, interval: 20 });
  });

  it("a live run replaced by another shown run is saved once it has ended (as Stop keeps it), then its checkpoint goes", async () => {
    const { run } = await liveRun();
    await checkpointed();
    const before = savedRuns().length;
    const other = new RunModel();
    other.apply(rolloutStart(1));
    setKeptAs(other, { state: "saved", id: "elsewhere" });
    session.show({ model: other, scenario: null, kind: "saved" });
    expect(run.asked).toEqual(["stop"]);
    // Still live (its worker has not ended it): checkpointed on (its next checkpoint has sample 1 ended), not saved.
    run.emit(sampleEnd(1, "cancelled", 0));
    const stored = async () => {
      const jsonl = (checkpoints()[0] as unknown as { jsonl: string | Blob }).jsonl;
      return typeof jsonl === "string" ? jsonl : jsonl.text();
    };
    await vi.waitFor(async () => expect(await stored()).toContain('"termination":"cancelled"'), { timeout: 5000, interval: 20 });
    expect(savedRuns()).toHaveLength(before);
    run.finish();
    await vi.waitFor(() => expect(checkpoints()).toEqual([]), { timeout: 5000, interval: 20 });
    expect(savedRuns()).toHaveLength(before + 1);
  });

  it("an imported run is saved, a failed one too (its export says why it failed), under a title that says so", async () => {
    const sample = JSON.stringify({ idx: 0, task_name: "t", message_log: [{ role: "user", content: "hi" }], total_reward: 0, termination: "error", error: "boom" });
    const footer = (extra: object) => JSON.stringify({ "lab/format": "rollout-lab-run/1", mode: "sync", max_rollout_turns: 2, max_seq_len: 256, partial: false, metrics: {}, scenario: null, ...extra });
    for (const [extra, title] of [[{}, /^sync · 1 samples/], [{ "lab/run_error": "the rollout worker crashed: boom" }, /^failed · sync · 1 of 1 samples finished/]] as const) {
      const before = savedRuns().length;
      const { model } = importJsonl(`${sample}\n${footer(extra)}\n`);
      session.show({ model, scenario: null, kind: "imported" });
      await vi.waitFor(() => expect(savedRuns()).toHaveLength(before + 1), { timeout: 5000, interval: 20 });
      expect(savedRuns().map((r) => r.title).filter((t) => title.test(t)), savedRuns().map((r) => r.title).join(" / ")).toHaveLength(1);
    }
  });
});
