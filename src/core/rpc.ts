/**
 * What every request/answer channel between the page and its Workers shares (the rollout worker, a model host, a
 * user environment's host): request ids and the calls waiting on them, all rejected at once when the other side
 * dies, and one shape for an error on the wire, rebuilt on the other side by its name so that `isAbortError` and
 * `code` still work there.
 */

import { AbortError, LabError } from "./errors.js";

/** An error as it crosses a Worker boundary (structured clone keeps an Error's message only, not its kind). */
export interface WireError {
  name: string;
  message: string;
  stack: string;
  /** A `LabError`'s code, else null. */
  code: string | null;
}

export function toWireError(e: unknown, rewriteStack: (stack: string) => string = (s) => s): WireError {
  const error = e instanceof Error ? e : new Error(String(e));
  const own = (error as { code?: unknown }).code;
  const code = error instanceof LabError ? error.code : typeof own === "string" ? own : null;
  return { name: error.name, message: error.message, stack: rewriteStack(error.stack ?? ""), code };
}

/** An error from the wire that came from another realm: its name, code and the other side's stack. */
export class RemoteError extends LabError {
  override name: string;
  override readonly code: string;
  constructor(wire: WireError) {
    super(wire.message);
    this.name = wire.name;
    this.code = wire.code ?? "remote_error";
    if (wire.stack) this.stack = wire.stack;
  }
}

/** The error again: an `AbortError` as one (the platform's or ours), anything else a `RemoteError` of its name. */
export function fromWireError(wire: WireError): Error {
  if (wire.name === "AbortError") {
    const e = new AbortError(wire.message);
    if (wire.stack) e.stack = wire.stack;
    return e;
  }
  return new RemoteError(wire);
}

interface Waiting<T, Extra> {
  resolve: (value: T) => void;
  reject: (error: Error) => void;
  extra: Extra;
}

/**
 * Request ids, 1 and up. Several `PendingCalls` given the same counter never give the same id: the rollout worker's
 * client numbers its runs so across the workers it starts (a fresh one after each crash).
 */
export function requestIds(): () => number {
  let next = 1;
  return () => next++;
}

/** Calls waiting for their answer, by request id. */
export class PendingCalls<T, Extra = undefined> {
  private readonly calls = new Map<number, Waiting<T, Extra>>();
  private dead: Error | null = null;

  /** `newId`: where the ids come from (a counter of their own by default; `requestIds`). */
  constructor(private readonly newId: () => number = requestIds()) {}

  /** A new call: its id (to send) and the promise of its answer. After `rejectAll`, it rejects at once. */
  open(extra: Extra): { id: number; promise: Promise<T> } {
    const id = this.newId();
    const promise = new Promise<T>((resolve, reject) => {
      if (this.dead) reject(this.dead);
      else this.calls.set(id, { resolve, reject, extra });
    });
    return { id, promise };
  }

  /** What was given with the call (a token callback, …), while it waits. */
  extra(id: number): Extra | undefined {
    return this.calls.get(id)?.extra;
  }

  /** Whether call `id` still waits for its answer. */
  has(id: number): boolean {
    return this.calls.has(id);
  }

  /** Answers a call; false when no such call waits (answered already, or never made). */
  resolve(id: number, value: T): boolean {
    const call = this.calls.get(id);
    if (!call) return false;
    this.calls.delete(id);
    call.resolve(value);
    return true;
  }

  reject(id: number, error: Error): boolean {
    const call = this.calls.get(id);
    if (!call) return false;
    this.calls.delete(id);
    call.reject(error);
    return true;
  }

  /** The other side is gone: every waiting call, and every later one, rejects with `error`. */
  rejectAll(error: Error): void {
    this.dead ??= error;
    for (const call of this.calls.values()) call.reject(error);
    this.calls.clear();
  }

  get size(): number {
    return this.calls.size;
  }
}
