/**
 * Checkpoints of runs under way, in IndexedDB (a database of their own, beside the saved runs'): the run's JSONL
 * export so far, rewritten at most about once a second while it runs and when the page is hidden or left. A run
 * that ends normally deletes its checkpoint (it is saved as a run); a checkpoint still there when a page opens is
 * a run that a closed or reloaded page interrupted, and the page offers it (src/app/RecoveredRuns.tsx).
 *
 * While its run is live, a page holds the Web Lock `rollout-lab-live-<id>`: another tab of the lab does not offer
 * a checkpoint whose run is still going in this one.
 */

import { openKeyedStore, transact } from "./idb.js";

const DB_NAME = "rollout-lab-recovery";
const STORE = "checkpoints";

export interface CheckpointSummary {
  id: string;
  /** When the run started and when this checkpoint was written (ms since the epoch). */
  startedAt: number;
  updatedAt: number;
  mode: string | null;
  finished: number;
  total: number;
}

export interface Checkpoint extends CheckpointSummary {
  jsonl: string;
}

/** A checkpoint as it is written: its export may be a Blob (a handle for IndexedDB, not a clone of the text). */
export type CheckpointWrite = Omit<Checkpoint, "jsonl"> & { jsonl: string | Blob };

const open = () => openKeyedStore(DB_NAME, STORE);

let db: Promise<IDBDatabase> | null = null;

/** One connection for the page (a checkpoint written as the page goes away must not wait for an open). */
function connection(): Promise<IDBDatabase> {
  db ??= open().then((d) => {
    d.onclose = () => (db = null);
    d.onversionchange = () => {
      d.close();
      db = null;
    };
    return d;
  });
  db.catch(() => (db = null));
  return db;
}

/** Settles when the transaction commits (a write is done only then: ./idb.ts), or fails with a `StorageError`. */
async function withStore<T>(mode: IDBTransactionMode, what: string, act: (store: IDBObjectStore) => IDBRequest<T>): Promise<T> {
  return transact(await connection(), STORE, mode, what, act);
}

export const lockName = (id: string) => `rollout-lab-live-${id}`;

export async function writeCheckpoint(checkpoint: CheckpointWrite): Promise<void> {
  await withStore("readwrite", "could not write the run's checkpoint", (store) => store.put(checkpoint));
}

export async function deleteCheckpoint(id: string): Promise<void> {
  await withStore("readwrite", "could not delete the checkpoint", (store) => store.delete(id));
}

export async function readCheckpoint(id: string): Promise<Checkpoint | null> {
  const stored = await withStore<CheckpointWrite | undefined>("readonly", "could not read the checkpoint", (store) => store.get(id) as IDBRequest<CheckpointWrite | undefined>);
  if (!stored) return null;
  return typeof stored.jsonl === "string" ? (stored as Checkpoint) : { ...stored, jsonl: await stored.jsonl.text() };
}

/** Checkpoints of runs no page is running now (newest first): the runs a closed or reloaded page interrupted. */
export async function listInterrupted(): Promise<CheckpointSummary[]> {
  const all = await withStore<Checkpoint[]>("readonly", "could not list the checkpoints", (store) => store.getAll() as IDBRequest<Checkpoint[]>);
  const locks = (globalThis.navigator as { locks?: LockManager } | undefined)?.locks;
  const held = new Set(locks ? ((await locks.query()).held ?? []).map((l) => l.name) : []);
  return all
    .filter((c) => !held.has(lockName(c.id)))
    .map(({ jsonl: _text, ...summary }) => summary)
    .sort((a, b) => b.updatedAt - a.updatedAt);
}
