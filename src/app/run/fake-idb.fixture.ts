/**
 * An in-memory IndexedDB for unit tests (Node has none), that fails as Chromium does under a full quota: each
 * transaction's request succeeds, then the transaction commits or aborts as planned (`plan`: "quota" aborts it at
 * commit with QuotaExceededError, after the request's success; "request-error" fails the request itself).
 */

export type Outcome = "commit" | "quota" | "request-error";

/** An in-memory IndexedDB: each transaction's request succeeds, then the transaction commits or aborts as planned. */
export class FakeIndexedDB {
  /** What the next transactions do, in order (then: commit). */
  plan: Outcome[] = [];
  readonly databases = new Map<string, Map<string, Map<unknown, unknown>>>();
  /** Order of the events fired, to check nothing is taken for done before the commit. */
  readonly events: string[] = [];
  /** Each transaction that settled: `complete put runs`, `abort delete checkpoints`, … in order. */
  readonly settled: string[] = [];

  open(name: string) {
    const request: Record<string, unknown> & { result?: unknown } = {};
    setTimeout(() => {
      let stores = this.databases.get(name);
      const fresh = !stores;
      stores ??= new Map();
      this.databases.set(name, stores);
      const db = this.database(stores);
      request.result = db;
      if (fresh) (request.onupgradeneeded as (() => void) | undefined)?.();
      (request.onsuccess as (() => void) | undefined)?.();
    });
    return request;
  }

  private database(stores: Map<string, Map<unknown, unknown>>) {
    return {
      createObjectStore: (name: string) => stores.set(name, new Map()),
      close: () => undefined,
      transaction: (storeName: string) => this.transaction(stores.get(storeName)!, storeName),
    };
  }

  private transaction(records: Map<unknown, unknown>, storeName: string) {
    let op = "read";
    const outcome = this.plan.shift() ?? "commit";
    const tx: Record<string, unknown> & { error: unknown } = { error: null };
    const pending: (() => void)[] = [];
    const request = (run: () => unknown) => {
      const req: Record<string, unknown> & { result?: unknown; error: unknown } = { error: null };
      pending.push(() => {
        if (outcome === "request-error") {
          req.error = new DOMException("the request failed", "DataError");
          this.events.push("request error");
          this.settled.push(`error ${op} ${storeName}`);
          (req.onerror as (() => void) | undefined)?.();
          tx.error = req.error;
          (tx.onerror as (() => void) | undefined)?.();
          (tx.onabort as (() => void) | undefined)?.();
          return;
        }
        req.result = run();
        this.events.push("request success");
        (req.onsuccess as (() => void) | undefined)?.();
        setTimeout(() => {
          if (outcome === "quota") {
            // The request's change is not kept: the transaction aborts at commit.
            tx.error = new DOMException("", "QuotaExceededError");
            this.events.push("abort");
            this.settled.push(`abort ${op} ${storeName}`);
            (tx.onabort as (() => void) | undefined)?.();
          } else {
            commit();
            this.events.push("complete");
            this.settled.push(`complete ${op} ${storeName}`);
            (tx.oncomplete as (() => void) | undefined)?.();
          }
        });
      });
      setTimeout(() => pending.shift()?.());
      return req;
    };
    let commit = () => {};
    tx.objectStore = () => ({
      put: (value: { id: unknown }) =>
        (op = "put") &&
        request(() => {
          commit = () => records.set(value.id, value);
          return value.id;
        }),
      delete: (id: unknown) =>
        (op = "delete") &&
        request(() => {
          commit = () => records.delete(id);
          return undefined;
        }),
      get: (id: unknown) => request(() => records.get(id)),
      getAll: () => request(() => [...records.values()]),
    });
    return tx;
  }
}

