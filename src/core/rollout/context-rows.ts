/**
 * Each sample's context (its message log's token ids, concatenated) kept in a typed array that grows as the log
 * does, so that a turn's generation input costs the tokens added since the sample's last turn, not its whole
 * context: a row is a view of the sample's buffer, right-padded (the buffer past the context is always padding).
 *
 * The rollouts own one per run. A log is recognised as the one seen before when it still holds, at the same place,
 * the last message read from it (the rollouts only ever append to their logs, as new arrays of the same messages);
 * any other log is read from the start.
 */

import type { Message, MessageLog } from "../types.js";

/** Context ids are unique in the process (see `GenerationDatumSpec.context_ids`). */
let nextContextId = 1;

interface Context {
  /** Fresh whenever the context starts or starts over: rows with one id extend one another. */
  id: number;
  ids: Int32Array;
  length: number;
  /** Messages read so far, and the last of them. */
  messages: number;
  last: Message | null;
}

export class ContextRows {
  private readonly contexts = new Map<number, Context>();

  constructor(private readonly padTokenId: number) {}

  /**
   * Rows (views, valid until the next call for the same key) for `logs`, keyed by `keys` (a sample's batch position),
   * every one `width` wide: at least the longest context.
   */
  rows(logs: readonly MessageLog[], keys: readonly number[]): { rows: Int32Array[]; lengths: number[]; contextIds: number[] } {
    const contexts = logs.map((log, i) => this.update(keys[i]!, log));
    let width = 0;
    for (const c of contexts) width = Math.max(width, c.length);
    const rows = contexts.map((c) => {
      if (c.ids.length < width) this.grow(c, width);
      return c.ids.subarray(0, width);
    });
    return { rows, lengths: contexts.map((c) => c.length), contextIds: contexts.map((c) => c.id) };
  }

  /** Forgets a sample (it ended). */
  release(key: number): void {
    this.contexts.delete(key);
  }

  private update(key: number, log: MessageLog): Context {
    let c = this.contexts.get(key);
    if (!c || log.length < c.messages || (c.messages > 0 && log[c.messages - 1] !== c.last)) {
      if (c) c.ids.fill(this.padTokenId, 0, c.length);
      c ??= { id: 0, ids: new Int32Array(0), length: 0, messages: 0, last: null };
      c.id = nextContextId++;
      c.length = 0;
      c.messages = 0;
      c.last = null;
      this.contexts.set(key, c);
    }
    let added = 0;
    for (let m = c.messages; m < log.length; m++) added += log[m]!.token_ids.length;
    if (c.length + added > c.ids.length) this.grow(c, c.length + added);
    const buffer = c.ids;
    let length = c.length;
    for (let m = c.messages; m < log.length; m++) {
      const ids = log[m]!.token_ids;
      for (let j = 0; j < ids.length; j++) buffer[length++] = ids[j]!;
    }
    c.length = length;
    c.messages = log.length;
    c.last = log.length ? log[log.length - 1]! : null;
    return c;
  }

  /** Room for at least `n` tokens; the new room is padding. */
  private grow(c: Context, n: number): void {
    const ids = new Int32Array(Math.max(n, 2 * c.ids.length, 256));
    ids.set(c.ids.subarray(0, c.length));
    ids.fill(this.padTokenId, c.length);
    c.ids = ids;
  }
}
