/**
 * Compact messages for the run model: a sample's token ids and log-probabilities live end to end in two typed arrays
 * of its own (a `TokenPack`: Int32 ids, Float32 log-probabilities), not as JS arrays of numbers per message (in V8 an
 * array of doubles parsed from JSON or cloned from a Worker holds each value as a boxed number: 16–24 bytes a
 * log-probability instead of 4).
 *
 * A compact message is still a `Message` for every reader: `token_ids` and `generation_logprobs` are own, enumerable
 * accessor properties that return a fresh plain array on each read, so `JSON.stringify`, spreading, `structuredClone`,
 * `postMessage`, zod and every array method see plain arrays, and nothing outside has to know. Readers that only need
 * a count or want to avoid the copy use `tokenCount`, `tokenIdsView` and `logprobsView`.
 *
 * Log-probabilities are kept as float32: exactly what a model policy produces (its log-softmax runs on float32
 * logits) and what the text policies produce (0); a float64 value from elsewhere (an imported file) is rounded to the
 * nearest float32.
 */

import type { Message } from "../../core/index.js";

const EMPTY_IDS = new Int32Array(0);
const EMPTY_LOGPROBS = new Float32Array(0);

/** One sample's token ids and log-probabilities, appended message by message. */
export class TokenPack {
  /**
   * Who appends to this pack (a run model); null while nobody does: a run model may then take the pack over with
   * the messages in it (an import's samples arrive compact, each in a pack of its own: ./jsonl-offthread.ts).
   */
  owner: object | null = null;
  ids: Int32Array;
  idsUsed = 0;
  logprobs: Float32Array;
  logprobsUsed = 0;

  /** Room for this many ids and log-probabilities from the start (when they are known: no reallocation then). */
  constructor(ids = 0, logprobs = 0) {
    this.ids = ids > 0 ? new Int32Array(ids) : EMPTY_IDS;
    this.logprobs = logprobs > 0 ? new Float32Array(logprobs) : EMPTY_LOGPROBS;
  }

  /** Appends `values` to the ids; returns where they start. */
  appendIds(values: ArrayLike<number>): number {
    const at = this.idsUsed;
    const n = values.length;
    if (at + n > this.ids.length) this.ids = grow(this.ids, at + n, (size) => new Int32Array(size));
    this.ids.set(values, at);
    this.idsUsed = at + n;
    return at;
  }

  appendLogprobs(values: ArrayLike<number>): number {
    const at = this.logprobsUsed;
    const n = values.length;
    if (at + n > this.logprobs.length) this.logprobs = grow(this.logprobs, at + n, (size) => new Float32Array(size));
    this.logprobs.set(values, at);
    this.logprobsUsed = at + n;
    return at;
  }

  /** Gives back the room kept for growth (once a sample is done). */
  trim(): void {
    if (this.ids.length !== this.idsUsed) this.ids = this.ids.slice(0, this.idsUsed);
    if (this.logprobs.length !== this.logprobsUsed) this.logprobs = this.logprobs.slice(0, this.logprobsUsed);
  }

  /** Bytes held by the two arrays (what the pack costs beyond its small objects). */
  get byteLength(): number {
    return this.ids.byteLength + this.logprobs.byteLength;
  }
}

function grow<T extends Int32Array | Float32Array>(old: T, needed: number, make: (size: number) => T): T {
  // Doubling from 4 Ki values: a sample of a long run reallocates a few times, not dozens (each new ArrayBuffer is
  // zeroed and counted against the heap's external memory, which brings garbage collections forward).
  const next = make(Math.max(needed, old.length * 2, 4096));
  next.set(old);
  return next;
}

/** Where a compact message's numbers are: its pack, and offset and length of its ids and of its log-probabilities. */
interface Slot {
  readonly pack: TokenPack;
  readonly at: number;
  readonly n: number;
  /** -1: the message has no `generation_logprobs` key. */
  readonly lpAt: number;
  readonly lpN: number;
}

const SLOT: unique symbol = Symbol("rollout-lab compact token slot");
type Compact = Message & { [SLOT]: Slot };

function getTokenIds(this: Compact): number[] {
  const { pack, at, n } = this[SLOT];
  const ids = pack.ids;
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(ids[at + i]!);
  return out;
}

function getLogprobs(this: Compact): number[] {
  const { pack, lpAt, lpN } = this[SLOT];
  const lp = pack.logprobs;
  const out: number[] = [];
  for (let i = 0; i < lpN; i++) out.push(lp[lpAt + i]!);
  return out;
}

// Writing a compact message's arrays stores the new values in its pack (rare: the run model never does it).
function setTokenIds(this: Compact, values: ArrayLike<number>): void {
  const s = this[SLOT];
  const ids = toNumbers(values, "token_ids");
  this[SLOT] = { ...s, at: s.pack.appendIds(ids), n: ids.length };
}

function setLogprobs(this: Compact, values: ArrayLike<number>): void {
  const s = this[SLOT];
  const lp = toNumbers(values, "generation_logprobs");
  this[SLOT] = { ...s, lpAt: s.pack.appendLogprobs(lp), lpN: lp.length };
}

function toNumbers(values: ArrayLike<number>, what: string): ArrayLike<number> {
  if (!isNumberList(values)) throw new TypeError(`${what}: expected a list of numbers`);
  return values;
}

const isNumberList = (v: unknown): v is ArrayLike<number> => Array.isArray(v) || v instanceof Int32Array || v instanceof Float32Array;

// One descriptor each, shared by every compact message (so they share their hidden classes).
const TOKEN_IDS: PropertyDescriptor = { get: getTokenIds, set: setTokenIds, enumerable: true, configurable: true };
const LOGPROBS: PropertyDescriptor = { get: getLogprobs, set: setLogprobs, enumerable: true, configurable: true };

export function isCompact(m: Message): boolean {
  return SLOT in m;
}

/**
 * A compact copy of `m` whose numbers are appended to `pack`; its other keys (role, content, violations, anything
 * else) are kept as they are, in their order. A message whose `token_ids` (or `generation_logprobs`) is not a list of
 * numbers is copied as it is.
 */
export function compactMessage(m: Message, pack: TokenPack): Message {
  if (isCompact(m)) {
    const source = (m as Compact)[SLOT];
    // Already there (compact messages are never changed in place: `withKeys` makes a new one).
    if (source.pack === pack) return m;
    const ids = tokenIdsView(m);
    const lp = logprobsView(m);
    return build(m, { pack, at: pack.appendIds(ids), n: ids.length, lpAt: lp === undefined ? -1 : pack.appendLogprobs(lp), lpN: lp?.length ?? 0 }, null);
  }
  const ids = (m as { token_ids?: unknown }).token_ids;
  const lp = (m as { generation_logprobs?: unknown }).generation_logprobs;
  if (!isNumberList(ids) || (lp !== undefined && !isNumberList(lp))) return { ...m };
  return build(m, { pack, at: pack.appendIds(ids), n: ids.length, lpAt: lp === undefined ? -1 : pack.appendLogprobs(lp), lpN: lp === undefined ? 0 : lp.length }, null);
}

/** `m` (compact) with some keys changed or added, sharing its numbers. */
export function withKeys(m: Message, changes: Partial<Omit<Message, "token_ids" | "generation_logprobs">>): Message {
  if (!isCompact(m)) return { ...m, ...changes };
  return build(m, (m as Compact)[SLOT], changes);
}

function build(m: Message, slot: Slot, changes: Record<string, unknown> | null): Message {
  const out = {} as Compact;
  Object.defineProperty(out, SLOT, { value: slot, writable: true, enumerable: false, configurable: false });
  for (const key of Object.keys(m)) {
    if (key === "token_ids") Object.defineProperty(out, key, TOKEN_IDS);
    else if (key === "generation_logprobs") {
      if (slot.lpAt >= 0) Object.defineProperty(out, key, LOGPROBS);
    } else (out as unknown as Record<string, unknown>)[key] = changes && key in changes ? changes[key] : (m as unknown as Record<string, unknown>)[key];
  }
  if (changes) for (const key of Object.keys(changes)) if (!(key in out)) (out as unknown as Record<string, unknown>)[key] = changes[key];
  return out;
}

/** The pack holding a compact message's numbers (null for a plain message). */
export function packOf(m: Message): TokenPack | null {
  return isCompact(m) ? (m as Compact)[SLOT].pack : null;
}

/** The number of token ids of a message, without copying them. */
export function tokenCount(m: Message): number {
  return isCompact(m) ? (m as Compact)[SLOT].n : (m.token_ids?.length ?? 0);
}

/** The token ids of a message as they are stored (a view into its pack, or its own array): read, don't write. */
export function tokenIdsView(m: Message): ArrayLike<number> {
  if (!isCompact(m)) return m.token_ids ?? [];
  const { pack, at, n } = (m as Compact)[SLOT];
  return pack.ids.subarray(at, at + n);
}

/** The log-probabilities of a message as they are stored (undefined when it has none). */
export function logprobsView(m: Message): ArrayLike<number> | undefined {
  if (!isCompact(m)) return m.generation_logprobs;
  const { pack, lpAt, lpN } = (m as Compact)[SLOT];
  return lpAt < 0 ? undefined : pack.logprobs.subarray(lpAt, lpAt + lpN);
}
