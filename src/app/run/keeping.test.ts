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

// The page's modules, with the fake in place (recovery.ts watches the store from its import on).
const { useLab } = await import("../store.js");
await import("./recovery.js");
const { useKeepNotices } = await import("./kept.js");

beforeAll(() => {
  vi.useRealTimers();
});

let runs = 0;
/** A run under way: sample 0 ended, sample 1 going. */
function liveRun(): RunModel {
  const model = new RunModel();
  model.apply({ type: "rollout_start", t: 0, mode: "sync", maxRolloutTurns: 3, maxSeqLen: 64, samples: [] });
  model.appendSamples([0, 1].map((i) => ({ sample: i, idx: i, task_name: `t${++runs}`, message_log: [], extra_env_info: null })));
  model.apply({ type: "sample_end", t: 1, sample: 0, idx: 0, termination: "terminated", error: null, totalReward: 1, turns: 0 } as never);
  return model;
}
const end = (model: RunModel) => model.apply({ type: "rollout_end", t: 2, batch: {}, metrics: {}, partial: true });

const store = (db: string, name: string) => fake.databases.get(db)?.get(name) ?? new Map();
const checkpoints = () => [...store("rollout-lab-recovery", "checkpoints").values()] as { id: string; finished: number }[];
const savedRuns = () => [...store("rollout-lab", "runs").values()] as { title: string }[];

/** Shows `model` as the page's live run and waits for its first checkpoint to commit. */
async function checkpointed(model: RunModel) {
  useLab.setState({ model, status: "running", runScenario: null, version: model.version });
  await vi.waitFor(() => expect(checkpoints()).toHaveLength(1), { timeout: 5000, interval: 50 });
  return checkpoints()[0]!.id;
}

describe("keeping a run that ends", () => {
  it("a save that aborts at commit (a full quota): nothing is saved, the checkpoint stays, the page says why and offers the export; another try saves it, and only then does the checkpoint go", async () => {
    const model = liveRun();
    const id = await checkpointed(model);
    // The save aborts at commit; so does the checkpoint of the run as it ended (the storage is full).
    fake.plan = ["quota", "quota"];
    end(model);
    useLab.setState({ status: "finished" });
    await vi.waitFor(() => expect(useKeepNotices.getState().notices).toHaveLength(1), { timeout: 5000, interval: 20 });
    const [notice] = useKeepNotices.getState().notices;
    expect(notice!.tone).toBe("error");
    expect(notice!.text).toMatch(/^The run “sync · 2 samples · .+” is not saved in this browser: the browser's storage for this site is full \(QuotaExceededError\)\. /);
    expect(notice!.text).toMatch(/Its last checkpoint \(1 of 2 samples finished, at .+\) is kept: a reload of the page offers it/);
    expect(savedRuns()).toEqual([]);
    expect(checkpoints().map((c) => c.id)).toEqual([id]);
    expect((model as { savedAs?: string }).savedAs).toBe("unsaved");
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
    const model = liveRun();
    await checkpointed(model);
    fake.settled.length = 0;
    end(model);
    useLab.setState({ status: "finished" });
    await vi.waitFor(() => expect(checkpoints()).toEqual([]), { timeout: 5000, interval: 20 });
    expect(fake.settled.filter((s) => !s.startsWith("complete read"))).toEqual(["complete put runs", "complete delete checkpoints"]);
    expect(useKeepNotices.getState().notices).toEqual([]);
  });

  it("a live run replaced by another shown run is saved once it has ended (as Stop keeps it), then its checkpoint goes", async () => {
    const model = liveRun();
    await checkpointed(model);
    const before = savedRuns().length;
    const other = liveRun();
    (other as { savedAs?: string }).savedAs = "elsewhere";
    end(other);
    useLab.setState({ model: other, status: "finished" });
    // Still live (its worker has not ended it): checkpointed on (its next checkpoint has sample 1 ended), not saved.
    model.apply({ type: "sample_end", t: 2, sample: 1, idx: 1, termination: "cancelled", error: "stopped", totalReward: 0, turns: 0 } as never);
    const stored = async () => {
      const jsonl = (checkpoints()[0] as unknown as { jsonl: string | Blob }).jsonl;
      return typeof jsonl === "string" ? jsonl : jsonl.text();
    };
    await vi.waitFor(async () => expect(await stored()).toContain('"termination":"cancelled"'), { timeout: 5000, interval: 20 });
    expect(savedRuns()).toHaveLength(before);
    end(model);
    await vi.waitFor(() => expect(checkpoints()).toEqual([]), { timeout: 5000, interval: 20 });
    expect(savedRuns()).toHaveLength(before + 1);
  });
});
