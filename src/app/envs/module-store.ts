/**
 * Modules loaded from a file or a URL are kept in this browser (IndexedDB), so a reload of the page offers them
 * again: the text as it was loaded (a URL's as fetched, so loading the kept copy fetches nothing), its version, and
 * how its last load went (a module that did not load keeps its error, a syntax error's line and column included).
 *
 * Writes and deletes go one after the other in the order asked (a module kept, then forgotten, stays forgotten).
 * Each is done when its transaction commits; it rejects with a `StorageError` naming why otherwise (../run/idb.ts).
 */

import { openKeyedStore, StorageError, transact } from "../run/idb.js";
import type { ModuleVersion } from "./module-version.js";

const DB_NAME = "rollout-lab-modules";
const STORE = "modules";

export interface KeptModule {
  /** The origin: one kept copy per file name or URL. */
  id: string;
  origin: string;
  source: "file" | "url";
  /** The module's text as loaded. */
  text: string;
  /** Its version when it was kept (null: a record without one). */
  version: ModuleVersion | null;
  /** What it described itself as at its last load (null: it did not load). */
  name: string | null;
  title: string | null;
  /** Why its last load failed (null: it loaded). */
  error: { message: string; stack: string } | null;
  keptAt: number;
}

async function withStore<T>(mode: IDBTransactionMode, what: string, act: (store: IDBObjectStore) => IDBRequest<T>): Promise<T> {
  let db: IDBDatabase;
  try {
    if (typeof indexedDB === "undefined") throw new Error("this browser gives the page no IndexedDB");
    db = await openKeyedStore(DB_NAME, STORE);
  } catch (e) {
    // Said as what was being done, not as the database's name.
    throw new StorageError(what, e instanceof StorageError ? e.original : e);
  }
  try {
    return await transact(db, STORE, mode, what, act);
  } finally {
    db.close();
  }
}

let queue: Promise<unknown> = Promise.resolve();
/** Runs `task` after every storage task asked before it, failed or not. */
function inTurn<T>(task: () => Promise<T>): Promise<T> {
  const run = queue.then(task, task);
  queue = run.catch(() => undefined);
  return run;
}

/** Keeps `module` (replacing the kept copy of its origin). */
export function keepModule(module: KeptModule): Promise<void> {
  return inTurn(async () => {
    await withStore("readwrite", `could not keep ${module.origin} in this browser`, (store) => store.put(module));
  });
}

export function forgetModule(origin: string): Promise<void> {
  return inTurn(async () => {
    await withStore("readwrite", `could not forget the kept copy of ${origin}`, (store) => store.delete(origin));
  });
}

/** Every kept module, by origin; records that are no module (another version of the lab's) are left out. */
export function listKeptModules(): Promise<KeptModule[]> {
  return inTurn(async () => {
    const records = await withStore<unknown[]>("readonly", "could not list the modules kept in this browser", (store) => store.getAll());
    return records.flatMap((r) => readKept(r) ?? []).sort((a, b) => a.origin.localeCompare(b.origin));
  });
}

/** A stored record as a kept module, or null when it is not one (its fields that are not as expected are dropped). */
export function readKept(record: unknown): KeptModule | null {
  const r = record as Partial<Record<keyof KeptModule, unknown>> | null;
  if (!r || typeof r.origin !== "string" || typeof r.text !== "string" || (r.source !== "file" && r.source !== "url")) return null;
  const v = r.version as Partial<ModuleVersion> | null | undefined;
  const version =
    v && typeof v.number === "number" && typeof v.loadedAt === "number" && typeof v.fingerprint === "string"
      ? { number: v.number, loadedAt: v.loadedAt, fingerprint: v.fingerprint, previous: v.previous ?? null }
      : null;
  const e = r.error as { message?: unknown; stack?: unknown } | null | undefined;
  const error = e && typeof e.message === "string" ? { message: e.message, stack: typeof e.stack === "string" ? e.stack : "" } : null;
  const text = (x: unknown) => (typeof x === "string" ? x : null);
  return {
    id: r.origin,
    origin: r.origin,
    source: r.source,
    text: r.text,
    version,
    name: text(r.name),
    title: text(r.title),
    error,
    keptAt: typeof r.keptAt === "number" ? r.keptAt : 0,
  };
}
