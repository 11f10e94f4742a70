/**
 * The page's IndexedDB access, shared by the saved runs (./saved-runs.ts) and the checkpoints (./checkpoints.ts).
 *
 * A write counts as done only when its transaction commits: a request's `success` says only that the request was
 * accepted, and the transaction may still abort after it (a full quota aborts at commit with `QuotaExceededError`,
 * after every request of it succeeded). `transact` therefore resolves on `complete` and rejects on `abort` or
 * `error`, with a `StorageError` whose message names the reason in words.
 */

import { LabError } from "../../core/index.js";

/** Opens (creating on first use) an IndexedDB database holding one object store of records keyed by `id`. */
export function openKeyedStore(dbName: string, storeName: string): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    let request: IDBOpenDBRequest;
    try {
      request = indexedDB.open(dbName, 1);
    } catch (e) {
      reject(new StorageError(`cannot open ${dbName}`, e));
      return;
    }
    request.onupgradeneeded = () => request.result.createObjectStore(storeName, { keyPath: "id" });
    request.onsuccess = () => {
      const db = request.result;
      // Another tab upgrading (or deleting) the database: let it, rather than block it.
      db.onversionchange = () => db.close();
      resolve(db);
    };
    request.onerror = () => reject(new StorageError(`cannot open ${dbName}`, request.error ?? new Error("IndexedDB is not available")));
  });
}

/** Why the browser's storage refused something, in words (the DOMException's name and message kept). */
export function describeStorageError(error: unknown): string {
  const name = (error as { name?: unknown } | null)?.name;
  const message = String((error as { message?: unknown } | null)?.message ?? error ?? "").trim();
  const detail = typeof name === "string" && name && name !== "Error" ? `${name}${message ? `: ${message}` : ""}` : message || "unknown error";
  if (name === "QuotaExceededError") return `the browser's storage for this site is full (${detail})`;
  if (name === "InvalidStateError" || name === "UnknownError") return `the browser's storage failed (${detail})`;
  return detail;
}

/** A storage operation that did not happen: `what` was being done, `reason` says why in words. */
export class StorageError extends LabError {
  override name = "StorageError";
  override readonly code = "storage";
  readonly reason: string;
  readonly quota: boolean;
  constructor(
    readonly what: string,
    readonly original: unknown,
  ) {
    const reason = describeStorageError(original);
    super(`${what}: ${reason}`);
    this.reason = reason;
    this.quota = (original as { name?: unknown } | null)?.name === "QuotaExceededError";
  }
}

/**
 * One transaction on `storeName` of `db`: `act` makes its request; the promise settles when the transaction does,
 * with the request's result once it committed, or a `StorageError` (`what` failed, and why) when it aborted or
 * failed, whatever the request itself reported before.
 */
export function transact<T>(
  db: IDBDatabase,
  storeName: string,
  mode: IDBTransactionMode,
  what: string,
  act: (store: IDBObjectStore) => IDBRequest<T>,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const fail = (cause: unknown) => {
      if (settled) return;
      settled = true;
      reject(cause instanceof StorageError ? cause : new StorageError(what, cause));
    };
    let tx: IDBTransaction;
    let request: IDBRequest<T>;
    try {
      // Writes are flushed before `complete` (a saved run must survive a crash right after it says it is saved).
      tx = db.transaction(storeName, mode, mode === "readwrite" ? ({ durability: "strict" } as IDBTransactionOptions) : undefined);
      request = act(tx.objectStore(storeName));
    } catch (e) {
      fail(e);
      return;
    }
    tx.oncomplete = () => {
      if (settled) return;
      settled = true;
      resolve(request.result);
    };
    // A failed request bubbles to the transaction, which then aborts: both name the same error.
    tx.onerror = () => fail(tx.error ?? request.error ?? new Error("IndexedDB request failed"));
    tx.onabort = () => fail(tx.error ?? request.error ?? new Error("IndexedDB transaction aborted"));
  });
}
