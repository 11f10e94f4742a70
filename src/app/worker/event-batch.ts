/**
 * How the rollout worker sends its events to the page: in batches (one message per few milliseconds of events, not
 * one per event: a 1,000-sample run makes thousands of events a second, and each message is a task of the page's
 * main thread), with every message's token ids and log-probabilities as typed arrays whose buffers are transferred
 * (a list of numbers is cloned value by value, and read back on the page's main thread at about half a microsecond a
 * value: a 1,000-sample run's first event alone took a third of a second).
 *
 * On the page, events arrive with `Int32Array` token ids and `Float32Array` log-probabilities (`Float64Array` where a
 * value is no float32: nothing is rounded) in their messages (`rollout_start` prompts, `assistant_message`, `env_step`
 * observations); `RunModel.apply` stores them as they are (src/app/run/compact-messages.ts). The `rollout_end` batch
 * goes without its `message_log` column: every message of it reached the page in its own event already. `plainEvent`
 * turns an event back into the core's shape (plain arrays) for any other reader.
 *
 * Every event is sent, in order: none is dropped or merged, so a model run's `token` events arrive each with its
 * step detail (entropy, top alternatives: lab-only, kept by the run model beside the turn, never in a message).
 *
 * Events wait at most `BATCH_MS` to be sent, except those after which the page must not wait: a sample's end, the
 * rollout's end or error (a crash right after one must not lose it).
 */

import type { Message, RolloutEvent } from "../../core/index.js";
import type { RolloutResultJson } from "../../scenario/result.js";
import { compactLog, fitsFloat32, type PackedEvent, type PackedMessage, type PackedResult } from "../run/compact-messages.js";

/** Flushes when the oldest queued event is this old, or when this many are queued. */
export const BATCH_MS = 16;
export const BATCH_EVENTS = 2000;

/** Events sent at once with what is queued before them (an end the page must have even if the worker dies next). */
const SENT_AT_ONCE: ReadonlySet<RolloutEvent["type"]> = new Set(["sample_end", "rollout_end", "rollout_error"]);

export class EventBatcher {
  private runId = -1;
  private queue: PackedEvent[] = [];
  private transfer: ArrayBuffer[] = [];
  private since = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly send: (runId: number, events: PackedEvent[], transfer: ArrayBuffer[]) => void,
    private readonly now: () => number = () => performance.now(),
  ) {}

  push(runId: number, event: RolloutEvent): void {
    if (runId !== this.runId) this.flush();
    this.runId = runId;
    if (this.queue.length === 0) this.since = this.now();
    this.queue.push(packEvent(event, this.transfer));
    // A rollout can run for a long while without yielding to the worker's event loop (a timer would wait for it).
    if (SENT_AT_ONCE.has(event.type) || this.queue.length >= BATCH_EVENTS || this.now() - this.since >= BATCH_MS) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), BATCH_MS);
  }

  /** Sends what is queued (before any other message, so nothing overtakes an event). */
  flush(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.queue.length === 0) return;
    const events = this.queue;
    const transfer = this.transfer;
    this.queue = [];
    this.transfer = [];
    this.send(this.runId, events, transfer);
  }
}

/**
 * A message log with its numbers in typed arrays: one Int32Array and one Float32Array for the whole log (a
 * Float64Array where some log-probability is no float32, as an imported file's -0.1: it arrives exact), each
 * message's `token_ids` / `generation_logprobs` a view into them (two buffers to transfer per log, not two per
 * message: every transferred buffer costs the page a little, and a 1,000-sample run's result has 40,000 messages).
 * The buffers go into `transfer`.
 */
export function packLog(log: readonly Message[], transfer: ArrayBuffer[]): PackedMessage[] {
  // An import's lines are checked, not rebuilt: a message may come without its lists (it goes as it came then).
  const listed = (m: Message) => Array.isArray(m?.token_ids);
  let ids = 0;
  let lps = 0;
  let wide = false;
  for (const m of log) {
    if (listed(m)) ids += m.token_ids.length;
    const lp = m?.generation_logprobs;
    if (Array.isArray(lp)) {
      lps += lp.length;
      wide ||= !fitsFloat32(lp);
    }
  }
  const idBuffer = new Int32Array(ids);
  const lpBuffer = wide ? new Float64Array(lps) : new Float32Array(lps);
  if (ids) transfer.push(idBuffer.buffer);
  if (lps) transfer.push(lpBuffer.buffer);
  let at = 0;
  let lpAt = 0;
  return log.map((m): PackedMessage => {
    if (!m || typeof m !== "object") return m;
    const out: PackedMessage = { ...m };
    if (listed(m)) {
      const t = m.token_ids;
      idBuffer.set(t, at);
      out.token_ids = idBuffer.subarray(at, at + t.length);
      at += t.length;
    }
    const lp = m.generation_logprobs;
    if (Array.isArray(lp)) {
      lpBuffer.set(lp, lpAt);
      out.generation_logprobs = lpBuffer.subarray(lpAt, lpAt + lp.length);
      lpAt += lp.length;
    }
    return out;
  });
}

const packMessage = (m: Message, transfer: ArrayBuffer[]): PackedMessage => packLog([m], transfer)[0]!;

/** The event with its messages' numbers in typed arrays (a new object; the rollout's own is left as it is). */
export function packEvent(event: RolloutEvent, transfer: ArrayBuffer[]): PackedEvent {
  switch (event.type) {
    case "rollout_start":
      return { ...event, samples: event.samples.map((s) => ({ ...s, message_log: packLog(s.message_log, transfer) })) };
    case "assistant_message":
      return { ...event, message: packMessage(event.message, transfer) };
    case "env_step":
      return { ...event, observation: packMessage(event.observation, transfer) };
    case "rollout_end": {
      // Not sent: the page has every message already (and reads the batch's other columns only).
      if (!("message_log" in event.batch)) return event;
      const { message_log: _logs, ...batch } = event.batch;
      return { ...event, batch };
    }
    default:
      return event;
  }
}

const plainMessage = (m: PackedMessage): Message => {
  const { token_ids, generation_logprobs, ...rest } = m;
  return {
    ...rest,
    token_ids: ArrayBuffer.isView(token_ids) ? Array.from(token_ids) : token_ids,
    ...(generation_logprobs !== undefined ? { generation_logprobs: Array.from(generation_logprobs) } : {}),
  };
};

/** A packed event back in the core's shape (plain arrays of numbers). */
export function plainEvent(event: PackedEvent): RolloutEvent {
  switch (event.type) {
    case "rollout_start":
      return { ...event, samples: event.samples.map((s) => ({ ...s, message_log: s.message_log.map(plainMessage) })) };
    case "assistant_message":
      return { ...event, message: plainMessage(event.message) };
    case "env_step":
      return { ...event, observation: plainMessage(event.observation) };
    default:
      return event;
  }
}

/**
 * The run's result for the page: its message logs' numbers in typed arrays (`transfer` gets their buffers), and its
 * JSON text, written here off the page's main thread (the page shows it as it is: src/app/run/result-text.ts).
 */
export function packResult(result: RolloutResultJson, transfer: ArrayBuffer[]): { result: PackedResult; text: string } {
  const text = JSON.stringify(result);
  return { result: { ...result, samples: result.samples.map((s) => ({ ...s, message_log: packLog(s.message_log, transfer) })) }, text };
}

/**
 * A packed result with compact messages (they read as plain arrays again: src/app/run/compact-messages.ts), a few
 * samples at a time between `pause()`s (a large run's result holds every message once more).
 */
export async function unpackResult(result: PackedResult, pause: () => Promise<void>, sliceMs = 8): Promise<RolloutResultJson> {
  const samples: RolloutResultJson["samples"] = [];
  let start = performance.now();
  for (const s of result.samples) {
    samples.push({ ...s, message_log: compactLog(s.message_log) });
    if (performance.now() - start >= sliceMs) {
      await pause();
      start = performance.now();
    }
  }
  return { ...result, samples };
}
