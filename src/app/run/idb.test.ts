/**
 * A write to IndexedDB is done when its transaction commits, not when its request succeeds: a full quota aborts the
 * transaction at commit, after the request's `success` (what Chromium does with a small quota: the request succeeds,
 * then the transaction aborts with QuotaExceededError). A fake IndexedDB that does exactly that checks the saved
 * runs and the checkpoints report such a write as failed, with the reason in words, and never as saved.
 */

import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeIndexedDB } from "./fake-idb.fixture.js";
import { describeStorageError, StorageError, transact } from "./idb.js";

let fake: FakeIndexedDB;
beforeEach(() => {
  fake = new FakeIndexedDB();
  (globalThis as { indexedDB?: unknown }).indexedDB = fake;
});
afterEach(() => {
  delete (globalThis as { indexedDB?: unknown }).indexedDB;
});

const db = async () => {
  const { openKeyedStore } = await import("./idb.js");
  return openKeyedStore("test", "records");
};

describe("transact", () => {
  it("resolves when the transaction commits, after the request's success", async () => {
    const d = await db();
    const id = await transact(d, "records", "readwrite", "could not write", (s) => s.put({ id: "a" }));
    expect(id).toBe("a");
    expect(fake.events).toEqual(["request success", "complete"]);
    expect(fake.databases.get("test")!.get("records")!.has("a")).toBe(true);
  });

  it("rejects when the transaction aborts at commit (a full quota), though the request succeeded", async () => {
    const d = await db();
    fake.plan = ["quota"];
    const write = transact(d, "records", "readwrite", "could not save the run in this browser", (s) => s.put({ id: "a" }));
    await expect(write).rejects.toBeInstanceOf(StorageError);
    await expect(write).rejects.toMatchObject({
      quota: true,
      reason: "the browser's storage for this site is full (QuotaExceededError)",
      message: "could not save the run in this browser: the browser's storage for this site is full (QuotaExceededError)",
    });
    expect(fake.events).toEqual(["request success", "abort"]);
    expect(fake.databases.get("test")!.get("records")!.has("a")).toBe(false);
  });

  it("rejects when the request fails (and the transaction with it)", async () => {
    const d = await db();
    fake.plan = ["request-error"];
    await expect(transact(d, "records", "readwrite", "could not write", (s) => s.put({ id: "a" }))).rejects.toMatchObject({
      quota: false,
      message: "could not write: DataError: the request failed",
    });
  });

  it("rejects (does not throw) when the transaction cannot even start (a closed connection)", async () => {
    const closed = { transaction: () => { throw new DOMException("The database connection is closing.", "InvalidStateError"); } } as unknown as IDBDatabase;
    await expect(transact(closed, "records", "readonly", "could not list", (s) => s.getAll())).rejects.toMatchObject({
      message: "could not list: the browser's storage failed (InvalidStateError: The database connection is closing.)",
    });
  });

  it("describes errors in words", () => {
    expect(describeStorageError(new DOMException("quota", "QuotaExceededError"))).toBe("the browser's storage for this site is full (QuotaExceededError: quota)");
    expect(describeStorageError(new Error("plain"))).toBe("plain");
    expect(describeStorageError(null)).toBe("unknown error");
  });
});

describe("the saved runs and the checkpoints wait for the commit", () => {
  it("saveRun: a full quota rejects with the reason, stores nothing and tells no list it changed; a commit saves", async () => {
    const { saveRun, onSavedRunsChange } = await import("./saved-runs.js");
    let changes = 0;
    const off = onSavedRunsChange(() => (changes += 1));
    try {
      fake.plan = ["quota"];
      await expect(saveRun({ title: "t", samples: 1, meanReward: 0 }, "{}\n")).rejects.toMatchObject({ quota: true });
      expect(changes).toBe(0);
      expect([...fake.databases.get("rollout-lab")!.get("runs")!.values()]).toEqual([]);
      const saved = await saveRun({ title: "t", samples: 1, meanReward: 0 }, "{}\n");
      expect(changes).toBe(1);
      expect([...fake.databases.get("rollout-lab")!.get("runs")!.keys()]).toEqual([saved.id]);
    } finally {
      off();
    }
  });

  it("deleteRun: an aborted delete is no delete", async () => {
    const { saveRun, deleteRun, listRuns } = await import("./saved-runs.js");
    const saved = await saveRun({ title: "t", samples: 1, meanReward: 0 }, "{}\n");
    fake.plan = ["quota"];
    await expect(deleteRun(saved.id)).rejects.toBeInstanceOf(StorageError);
    expect((await listRuns()).map((r) => r.id)).toEqual([saved.id]);
  });

  it("writeCheckpoint: a full quota rejects, and the checkpoint written before stays", async () => {
    const { writeCheckpoint, readCheckpoint } = await import("./checkpoints.js");
    const checkpoint = { id: "c", startedAt: 1, updatedAt: 2, mode: "sync", finished: 1, total: 3, jsonl: "first" };
    await writeCheckpoint(checkpoint);
    fake.plan = ["quota"];
    await expect(writeCheckpoint({ ...checkpoint, updatedAt: 3, jsonl: "second" })).rejects.toMatchObject({
      quota: true,
      message: "could not write the run's checkpoint: the browser's storage for this site is full (QuotaExceededError)",
    });
    expect((await readCheckpoint("c"))?.jsonl).toBe("first");
  });
});
