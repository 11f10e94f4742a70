import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Message, MessageLog } from "../types.js";
import { ContextRows } from "./context-rows.js";
import { buildGenerationInput } from "./generate.js";

const PAD = 9;
const msg = (ids: number[]): Message => ({ role: "user", content: "", token_ids: ids });

/** What a row must be: the log's ids, then padding to `width`. */
const expected = (log: MessageLog, width: number) => {
  const ids = log.flatMap((m) => m.token_ids);
  return [...ids, ...new Array(width - ids.length).fill(PAD)];
};

describe("ContextRows", () => {
  it("gives each log's ids right-padded to the widest, turn after turn, as the logs grow (property)", () => {
    const turn = fc.array(fc.array(fc.integer({ min: 0, max: 300 }), { maxLength: 40 }), { minLength: 3, maxLength: 3 });
    fc.assert(
      fc.property(fc.array(turn, { minLength: 1, maxLength: 8 }), fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }), (turns, restarts) => {
        const contexts = new ContextRows(PAD);
        let logs: MessageLog[] = [[], [], []];
        turns.forEach((added, t) => {
          // Logs grow as new arrays of the same messages (as the rollouts make them); sometimes a log is another one.
          logs = logs.map((log, i) => (restarts[t] && i === 1 ? [msg(added[i]!)] : [...log, msg(added[i]!)]));
          const { rows, lengths } = contexts.rows(logs, [0, 1, 2]);
          const width = Math.max(...logs.map((log) => log.flatMap((m) => m.token_ids).length));
          rows.forEach((row, i) => expect(Array.from(row)).toEqual(expected(logs[i]!, width)));
          expect(lengths).toEqual(logs.map((log) => log.flatMap((m) => m.token_ids).length));
        });
      }),
    );
  });

  it("reads a log again from the start when it no longer holds the message it ended with", () => {
    const contexts = new ContextRows(PAD);
    const first = msg([1, 2, 3]);
    const firstId = contexts.rows([[first]], [0]).contextIds[0];
    // Grown from the last log: the same context (id).
    expect(contexts.rows([[first, msg([9])]], [0]).contextIds[0]).toBe(firstId);
    // Same length, another message in its place (a log the rollout did not grow from the last one): a new context.
    const { rows, contextIds } = contexts.rows([[msg([4, 5]), msg([6])]], [0]);
    expect(Array.from(rows[0]!)).toEqual([4, 5, 6]);
    expect(contextIds[0]).not.toBe(firstId);
    const shorter = contexts.rows([[msg([7])]], [0]);
    expect(Array.from(shorter.rows[0]!)).toEqual([7]);
    // A released sample starts over too.
    contexts.release(0);
    expect(Array.from(contexts.rows([[first, msg([8])]], [0]).rows[0]!)).toEqual([1, 2, 3, 8]);
  });

  it("makes buildGenerationInput's rows the same with kept contexts as without", () => {
    const logs: MessageLog[] = [[msg([1, 2])], [msg([3, 4, 5, 6])]];
    const contexts = new ContextRows(PAD);
    const options = { padTokenId: PAD, maxSeqLen: 10, maxNewTokens: 3, sampleIds: [4, 7], turns: [0, 0] };
    for (let turn = 0; turn < 3; turn++) {
      const kept = buildGenerationInput(logs, [null, ["x"]], { ...options, contexts });
      const fresh = buildGenerationInput(logs, [null, ["x"]], options);
      expect(kept.input_ids.map((r) => Array.from(r))).toEqual(fresh.input_ids.map((r) => Array.from(r)));
      expect(kept.input_lengths).toEqual(fresh.input_lengths);
      expect(kept.max_new_tokens).toEqual(fresh.max_new_tokens);
      logs[turn % 2]!.push(msg([turn, turn + 1]));
      logs[0] = [...logs[0]!];
    }
  });
});
