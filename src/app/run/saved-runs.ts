/**
 * Finished runs survive a reload: each is kept in IndexedDB as its JSONL export (the same text the user can
 * download), with a small summary for the list. The export is stored as a Blob when the page has one (a string
 * value is cloned on the main thread when it is put, and again when the list is read: seconds for a large run).
 *
 * A run is saved when its transaction commits, not when its request succeeds (a full quota aborts the transaction
 * after the request's success): `saveRun` resolves only then, and rejects with a `StorageError` naming the reason
 * otherwise (./idb.ts).
 */

import { openKeyedStore, transact } from "./idb.js";

const DB_NAME = "rollout-lab";
const STORE = "runs";

export interface SavedRunSummary {
  id: string;
  savedAt: number;
  title: string;
  samples: number;
  meanReward: number | null;
  /**
   * The checkpoint this save supersedes (the live or recovered run's): it is deleted after the save commits, and
   * should that delete fail, the checkpoint is still never offered as interrupted (./recovery.ts `listRecoverable`).
   */
  checkpoint?: string;
}

interface SavedRun extends SavedRunSummary {
  jsonl: string | Blob;
}

const open = () => openKeyedStore(DB_NAME, STORE);

async function withStore<T>(mode: IDBTransactionMode, what: string, act: (store: IDBObjectStore) => IDBRequest<T>): Promise<T> {
  const db = await open();
  try {
    return await transact(db, STORE, mode, what, act);
  } finally {
    db.close();
  }
}

const listeners = new Set<() => void>();

/** Calls `listener` after each save or delete (the lists of saved runs in the page refresh themselves). */
export function onSavedRunsChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

const changed = () => listeners.forEach((l) => l());

export async function saveRun(summary: Omit<SavedRunSummary, "id" | "savedAt">, jsonl: string | Blob): Promise<SavedRunSummary> {
  const run: SavedRun = { ...summary, id: `${Date.now()}-${Math.random().toString(36).slice(2, 8)}`, savedAt: Date.now(), jsonl };
  await withStore("readwrite", "could not save the run in this browser", (store) => store.put(run));
  changed();
  const { jsonl: _text, ...rest } = run;
  return rest;
}

export async function listRuns(): Promise<SavedRunSummary[]> {
  const runs = await withStore<SavedRun[]>("readonly", "could not list the saved runs", (store) => store.getAll() as IDBRequest<SavedRun[]>);
  return runs.map(({ jsonl: _text, ...summary }) => summary).sort((a, b) => b.savedAt - a.savedAt);
}

export async function loadRun(id: string): Promise<string | null> {
  const run = await withStore<SavedRun | undefined>("readonly", "could not read the saved run", (store) => store.get(id) as IDBRequest<SavedRun | undefined>);
  if (!run) return null;
  return typeof run.jsonl === "string" ? run.jsonl : run.jsonl.text();
}

/** Gives a saved run another title (the list shows it); false when the run is no longer saved. */
export async function renameRun(id: string, title: string): Promise<boolean> {
  const run = await withStore<SavedRun | undefined>("readonly", "could not read the saved run", (store) => store.get(id) as IDBRequest<SavedRun | undefined>);
  if (!run) return false;
  await withStore("readwrite", "could not rename the saved run", (store) => store.put({ ...run, title }));
  changed();
  return true;
}

export async function deleteRun(id: string): Promise<void> {
  await withStore("readwrite", "could not delete the saved run", (store) => store.delete(id));
  changed();
}

/** The export of a saved run as a Blob (to be read in a Worker: ./jsonl-offthread.ts). */
export async function loadRunBlob(id: string): Promise<Blob | null> {
  const run = await withStore<SavedRun | undefined>("readonly", "could not read the saved run", (store) => store.get(id) as IDBRequest<SavedRun | undefined>);
  if (!run) return null;
  return typeof run.jsonl === "string" ? new Blob([run.jsonl], { type: "application/x-ndjson" }) : run.jsonl;
}
