/**
 * Compact messages for the run model: a sample's token ids and log-probabilities live end to end in two typed arrays
 * of its own (a `TokenPack`: Int32 ids; Float32 log-probabilities, or Float64 where a value needs it), not as JS
 * arrays of numbers per message (in V8 an array of doubles parsed from JSON or cloned from a Worker holds each value
 * as a boxed number: 16–24 bytes a log-probability instead of 4).
 *
 * A compact message is still a `Message` for every reader: `token_ids` and `generation_logprobs` are own, enumerable
 * accessor properties that return a fresh plain array on each read, so `JSON.stringify`, spreading, `structuredClone`,
 * `postMessage`, zod and every array method see plain arrays, and nothing outside has to know. Readers that only need
 * a count or want to avoid the copy use `tokenCount`, `tokenIdsView` and `logprobsView`. Assigning either key
 * replaces its accessor with a plain property holding exactly what was assigned (the run model never does it); the
 * readers here, `withKeys` and `compactMessage` go by that property from then on.
 *
 * Log-probabilities are stored exactly: a pack keeps them as float32 while every value is one (what a model policy
 * produces: its log-softmax runs on float32 logits; the text policies' 0), and as float64 from the first value that
 * is not (an imported file's -0.1), so an import exports the numbers it read.
 */

import type { Message, RolloutEvent, TokenId, TokenIds, TokenStepDetail } from "../../core/index.js";
import type { RolloutResultJson } from "../../scenario/result.js";
import { isTokenId } from "../../scenario/jsonl-reader.js";

export type LogprobArray = Float32Array | Float64Array;

/**
 * A message as it may arrive from a Worker (a run's events, an import's samples: src/app/worker/event-batch.ts
 * `packLog`): its token ids and log-probabilities in typed arrays, or plain lists (a `Message`).
 */
export type PackedMessage = Omit<Message, "token_ids" | "generation_logprobs"> & {
  token_ids: TokenIds | Int32Array;
  generation_logprobs?: readonly number[] | LogprobArray;
};

type RolloutStart = Extract<RolloutEvent, { type: "rollout_start" }>;
type WithPackedLog<T extends { message_log: unknown }> = { [K in keyof T]: K extends "message_log" ? PackedMessage[] : T[K] };

/**
 * A rollout event as it arrives from the rollout worker (src/app/worker/event-batch.ts): its messages packed. A
 * core `RolloutEvent` is one too (its messages' lists are one of the packed forms).
 */
export type PackedEvent =
  | Exclude<RolloutEvent, { type: "rollout_start" | "assistant_message" | "env_step" }>
  | (Omit<RolloutStart, "samples"> & { samples: WithPackedLog<RolloutStart["samples"][number]>[] })
  | (Omit<Extract<RolloutEvent, { type: "assistant_message" }>, "message"> & { message: PackedMessage })
  | (Omit<Extract<RolloutEvent, { type: "env_step" }>, "observation"> & { observation: PackedMessage });

/** A rollout's samples as a packed event lists them. */
export type PackedSamples = Extract<PackedEvent, { type: "rollout_start" }>["samples"];

/** A run's result as it arrives from the rollout worker: its samples' message logs packed. */
export type PackedResult = Omit<RolloutResultJson, "samples"> & { samples: WithPackedLog<RolloutResultJson["samples"][number]>[] };

/** Whether every value of `values` is exactly a float32 (NaN counts as one). */
export function fitsFloat32(values: ArrayLike<number>): boolean {
  if (values instanceof Float32Array) return true;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (Math.fround(v) !== v && v === v) return false;
  }
  return true;
}

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
  /** Float32Array while every value appended is a float32; Float64Array from the first that is not. */
  logprobs: LogprobArray;
  logprobsUsed = 0;

  /**
   * Room for this many ids and log-probabilities from the start (when they are known: no reallocation then);
   * `wide`: the log-probabilities need float64 (some value is no float32).
   */
  constructor(ids = 0, logprobs = 0, wide = false) {
    this.ids = ids > 0 ? new Int32Array(ids) : EMPTY_IDS;
    this.logprobs = wide ? new Float64Array(Math.max(0, logprobs)) : logprobs > 0 ? new Float32Array(logprobs) : EMPTY_LOGPROBS;
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
    if (this.logprobs instanceof Float32Array && !fitsFloat32(values)) {
      // Exact from here on: what is there so far is copied as it is (a float32 is exactly a float64).
      const wide = new Float64Array(Math.max(at + n, this.logprobs.length));
      wide.set(this.logprobs.subarray(0, at));
      this.logprobs = wide;
    }
    if (at + n > this.logprobs.length) {
      this.logprobs =
        this.logprobs instanceof Float64Array
          ? grow(this.logprobs, at + n, (size) => new Float64Array(size))
          : grow(this.logprobs, at + n, (size) => new Float32Array(size));
    }
    this.logprobs.set(values, at);
    this.logprobsUsed = at + n;
    return at;
  }

  /** Gives back the room kept for growth (once a sample is done). */
  trim(): void {
    if (this.ids.length !== this.idsUsed) this.ids = this.ids.slice(0, this.idsUsed);
    if (this.logprobs.length !== this.logprobsUsed) this.logprobs = this.logprobs.slice(0, this.logprobsUsed);
  }
}

function grow<T extends Int32Array | Float32Array | Float64Array>(old: T, needed: number, make: (size: number) => T): T {
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
type NumberKey = "token_ids" | "generation_logprobs";

function getTokenIds(this: Compact): TokenId[] {
  const { pack, at, n } = this[SLOT];
  const ids = pack.ids;
  const out: TokenId[] = [];
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

// Writing a compact message's `token_ids` or `generation_logprobs` (rare: the run model never does it) makes the key
// a plain property holding exactly what was assigned: nothing is converted (a list of anything is not read as ids).
function setTokenIds(this: Compact, value: unknown): void {
  Object.defineProperty(this, "token_ids", { value, writable: true, enumerable: true, configurable: true });
}

function setLogprobs(this: Compact, value: unknown): void {
  Object.defineProperty(this, "generation_logprobs", { value, writable: true, enumerable: true, configurable: true });
}

// One descriptor each, shared by every compact message (so they share their hidden classes).
const TOKEN_IDS: PropertyDescriptor = { get: getTokenIds, set: setTokenIds, enumerable: true, configurable: true };
const LOGPROBS: PropertyDescriptor = { get: getLogprobs, set: setLogprobs, enumerable: true, configurable: true };

/** How a compact message holds `key` now: in its pack (its accessor), as a plain value (assigned since), or not at all. */
function holding(m: Compact, key: NumberKey): "pack" | { value: unknown } | undefined {
  const d = Object.getOwnPropertyDescriptor(m, key);
  if (!d) return undefined;
  if (d.get === getTokenIds || d.get === getLogprobs) return "pack";
  return { value: "value" in d ? d.value : d.get?.call(m) };
}

const isList = (v: unknown): v is ArrayLike<number> => Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView));

/** The ids of a message as a pack stores them: an Int32Array, or a list of token ids (else null). */
function idList(v: unknown): ArrayLike<TokenId> | null {
  if (v instanceof Int32Array) return v;
  if (!Array.isArray(v)) return null;
  for (let i = 0; i < v.length; i++) if (!isTokenId(v[i])) return null;
  return v;
}

/** The log-probabilities of a message as a pack stores them: a Float32Array or Float64Array, or a list of numbers. */
function logprobList(v: unknown): ArrayLike<number> | null {
  if (v instanceof Float32Array || v instanceof Float64Array) return v;
  if (!Array.isArray(v)) return null;
  for (let i = 0; i < v.length; i++) if (typeof v[i] !== "number") return null;
  return v;
}

export function isCompact(m: PackedMessage): m is Compact {
  return SLOT in m;
}

/** A compact message's `key` as it is stored: a view into its pack, its plain value, or undefined without the key. */
function stored(m: Compact, key: NumberKey): unknown {
  const h = holding(m, key);
  if (h === undefined) return undefined;
  if (h !== "pack") return h.value;
  const { pack, at, n, lpAt, lpN } = m[SLOT];
  return key === "token_ids" ? pack.ids.subarray(at, at + n) : pack.logprobs.subarray(lpAt, lpAt + lpN);
}

/**
 * A compact copy of `m` whose numbers are appended to `pack`; its other keys (role, content, violations, anything
 * else) are kept as they are, in their order. A message whose `token_ids` is not a list of token ids (`isTokenId`:
 * integers from 0 to 2^31 − 1, what an Int32Array holds as they are), or whose `generation_logprobs` is not a list
 * of numbers, is copied as it is (a plain copy: nothing is converted).
 */
export function compactMessage(m: PackedMessage, pack: TokenPack): Message {
  let rawIds: unknown;
  let rawLp: unknown;
  if (isCompact(m)) {
    // Already there, numbers and all (compact messages are not changed in place: `withKeys` makes a new one).
    const lpHeld = holding(m, "generation_logprobs");
    if (m[SLOT].pack === pack && holding(m, "token_ids") === "pack" && (lpHeld === undefined || lpHeld === "pack")) return m;
    rawIds = stored(m, "token_ids");
    rawLp = stored(m, "generation_logprobs");
  } else {
    rawIds = m.token_ids;
    rawLp = m.generation_logprobs;
  }
  const ids = idList(rawIds);
  const lp = rawLp === undefined ? undefined : logprobList(rawLp);
  // Not what a pack holds: passed on as it came (a message whose ids are typed arrays always is; this one's are junk).
  if (ids === null || lp === null) return { ...m } as Message;
  return build(m, { pack, at: pack.appendIds(ids), n: ids.length, lpAt: lp === undefined ? -1 : pack.appendLogprobs(lp), lpN: lp?.length ?? 0 }, null, true);
}

/**
 * The messages of one log compact, end to end in one pack of their own, sized from the start (an import's sample,
 * a run's result); anything in the log that is no object is kept as it is.
 */
export function compactLog(log: readonly PackedMessage[]): Message[] {
  let ids = 0;
  let logprobs = 0;
  let wide = false;
  for (const m of log) {
    if (!m || typeof m !== "object") continue;
    ids += tokenCount(m);
    const lp = logprobsView(m);
    if (lp) {
      logprobs += lp.length;
      wide ||= lp instanceof Float64Array;
    }
  }
  const pack = new TokenPack(ids, logprobs, wide);
  const out = log.map((m) => (m && typeof m === "object" ? compactMessage(m, pack) : (m as Message)));
  pack.trim();
  return out;
}

/** `m` (compact) with some keys changed or added, sharing its numbers. */
export function withKeys(m: Message, changes: Partial<Omit<Message, "token_ids" | "generation_logprobs">>): Message {
  if (!isCompact(m)) return { ...m, ...changes };
  return build(m, m[SLOT], changes, false);
}

/**
 * A compact message with `m`'s keys in their order. `fresh`: its numbers are all in `slot` (`compactMessage`);
 * otherwise each number key is as `m` holds it: in the pack, or a plain value assigned since (`withKeys`).
 */
function build(m: PackedMessage, slot: Slot, changes: Record<string, unknown> | null, fresh: boolean): Message {
  const out = {} as Compact;
  Object.defineProperty(out, SLOT, { value: slot, writable: true, enumerable: false, configurable: false });
  for (const key of Object.keys(m)) {
    if (key === "token_ids" || key === "generation_logprobs") {
      const h = fresh ? "pack" : holding(m as Compact, key);
      if (h === "pack") {
        if (key === "token_ids") Object.defineProperty(out, key, TOKEN_IDS);
        else if (slot.lpAt >= 0) Object.defineProperty(out, key, LOGPROBS);
      } else if (h) (out as unknown as Record<string, unknown>)[key] = h.value;
    } else (out as unknown as Record<string, unknown>)[key] = changes && key in changes ? changes[key] : (m as unknown as Record<string, unknown>)[key];
  }
  if (changes) for (const key of Object.keys(changes)) if (!(key in out)) (out as unknown as Record<string, unknown>)[key] = changes[key];
  return out;
}

/** The pack holding a compact message's numbers (null for a plain message). */
export function packOf(m: PackedMessage): TokenPack | null {
  return isCompact(m) ? m[SLOT].pack : null;
}

/** The number of token ids of a message, without copying them. */
export function tokenCount(m: PackedMessage): number {
  if (!isCompact(m)) return m.token_ids?.length ?? 0;
  const h = holding(m, "token_ids");
  if (h === "pack") return m[SLOT].n;
  return h && isList(h.value) ? h.value.length : 0;
}

/** The token ids of a message as they are stored (a view into its pack, or its own array): read, don't write. */
export function tokenIdsView(m: PackedMessage): ArrayLike<TokenId> {
  if (!isCompact(m)) return m.token_ids ?? [];
  const ids = stored(m, "token_ids");
  return isList(ids) ? ids : [];
}

/** The log-probabilities of a message as they are stored (undefined when it has none). */
export function logprobsView(m: PackedMessage): ArrayLike<number> | undefined {
  if (!isCompact(m)) return m.generation_logprobs;
  const lp = stored(m, "generation_logprobs");
  return isList(lp) ? lp : undefined;
}

/**
 * The step details of one turn's generated tokens (entropy, top alternatives: what a model policy streams with each
 * token), kept beside the turn and never in its messages (results and exports have no such key). Compact, and plain
 * data (a fork's `structuredClone` of its kept turns keeps them): read with `tokenDetailAt`.
 */
export interface TokenDetails {
  /** The assistant message's token count. */
  count: number;
  /** Alternative slots per token. */
  k: number;
  /** Per token: its step's entropy in nats (NaN: none recorded for it). */
  entropy: Float64Array;
  /** Per token, `k` slots, most likely first: the alternatives' ids (−1: an empty slot) and log-probabilities. */
  topIds: Int32Array;
  topLogprobs: LogprobArray;
  /** The alternatives' texts by id: one map for the whole run. */
  texts: ReadonlyMap<TokenId, string>;
}

/**
 * Compact details of a message's tokens, one entry per token (undefined: none for that token); their alternatives'
 * texts go into `texts`. Null when no token has any.
 */
export function packTokenDetails(details: readonly (TokenStepDetail | undefined)[], texts: Map<TokenId, string>): TokenDetails | null {
  let k = 0;
  for (const d of details) if (d) k = Math.max(k, d.top.length);
  if (!details.some(Boolean)) return null;
  const count = details.length;
  const entropy = new Float64Array(count).fill(NaN);
  const topIds = new Int32Array(count * k).fill(-1);
  const values: number[] = new Array<number>(count * k).fill(0);
  details.forEach((d, i) => {
    if (!d) return;
    entropy[i] = d.entropy;
    d.top.forEach((t, j) => {
      topIds[i * k + j] = t.tokenId;
      values[i * k + j] = t.logprob;
      if (!texts.has(t.tokenId)) texts.set(t.tokenId, t.text);
    });
  });
  // Float32 while every value is one (a model's log-softmax is), so nothing is rounded.
  const topLogprobs = fitsFloat32(values) ? Float32Array.from(values) : Float64Array.from(values);
  return { count, k, entropy, topIds, topLogprobs, texts };
}

/** Token `i`'s step detail, as the policy gave it (null when none was recorded for it). */
export function tokenDetailAt(d: TokenDetails, i: number): TokenStepDetail | null {
  if (i < 0 || i >= d.count || Number.isNaN(d.entropy[i]!)) return null;
  const top: TokenStepDetail["top"] = [];
  for (let j = 0; j < d.k; j++) {
    const tokenId = d.topIds[i * d.k + j]!;
    if (tokenId < 0) break;
    top.push({ tokenId, logprob: d.topLogprobs[i * d.k + j]!, text: d.texts.get(tokenId) ?? "" });
  }
  return { entropy: d.entropy[i]!, top };
}
