/**
 * A limit on the requests in flight at once: one per policy, so every row of every call (a sync batch, the async
 * rollout's samples, several turns at once) waits for the same free places.
 */

import { abortError } from "../../core/index.js";

export class ConcurrencyLimit {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`max_concurrency: expected a positive integer, got ${String(max)}`);
  }

  /** The requests holding a place now. */
  get inFlight(): number {
    return this.active;
  }

  /** Runs `task` once a place is free; a cancelled `signal` gives up the wait (or the place, once `task` settles). */
  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.acquire(signal);
    try {
      return await task();
    } finally {
      this.release();
    }
  }

  private acquire(signal: AbortSignal | undefined): Promise<void> {
    if (signal?.aborted) return Promise.reject(abortError("generation cancelled"));
    if (this.active < this.max) {
      this.active += 1;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const admit = () => {
        signal?.removeEventListener("abort", cancel);
        this.active += 1;
        resolve();
      };
      const cancel = () => {
        const at = this.waiting.indexOf(admit);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(abortError("generation cancelled"));
      };
      this.waiting.push(admit);
      signal?.addEventListener("abort", cancel, { once: true });
    });
  }

  private release(): void {
    this.active -= 1;
    this.waiting.shift()?.();
  }
}
