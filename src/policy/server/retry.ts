/**
 * When to try a request again: exponential backoff with jitter, or the server's `Retry-After` when it is longer.
 * The clock (`sleep`) and the jitter (`random`) can be replaced, so tests observe the waits instead of sitting them out.
 */

import { abortError } from "../../core/index.js";

export interface RetryTiming {
  /** The first retry's wait before jitter, in ms; doubled each retry. */
  baseMs: number;
  /** The longest backoff, in ms (a `Retry-After` may ask for more, up to `maxRetryAfterMs`). */
  maxMs: number;
  /** The longest `Retry-After` honoured; a server asking for more fails the row instead of holding the run. */
  maxRetryAfterMs: number;
  /** In [0, 1): the jitter. */
  random: () => number;
  /** Waits `ms`, or rejects with an AbortError when `signal` is aborted. */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export const DEFAULT_RETRY_TIMING: RetryTiming = {
  baseMs: 250,
  maxMs: 8_000,
  maxRetryAfterMs: 120_000,
  random: Math.random,
  sleep: abortableSleep,
};

/** The wait before retry number `retry` (0 = the first): base · 2^retry, capped, times a jitter in [0.5, 1). */
export function backoffMs(retry: number, timing: Pick<RetryTiming, "baseMs" | "maxMs" | "random">): number {
  const ceiling = Math.min(timing.maxMs, timing.baseMs * 2 ** retry);
  return Math.round(ceiling * (0.5 + timing.random() / 2));
}

/** A `Retry-After` header in ms: delay-seconds or an HTTP date; null when absent or unreadable. */
export function retryAfterMs(header: string | null, now: number = Date.now()): number | null {
  if (header === null) return null;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortError("generation cancelled"));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", cancel);
      resolve();
    }, ms);
    const cancel = () => {
      clearTimeout(timer);
      reject(abortError("generation cancelled"));
    };
    signal?.addEventListener("abort", cancel, { once: true });
  });
}
