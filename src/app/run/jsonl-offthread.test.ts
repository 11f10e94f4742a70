/**
 * `readJsonlOffThread` on the page's side (the reader's Worker stood in for): the samples that arrive packed come out
 * compact, their numbers as sent (float64 log-probabilities stay exact), and the read lets go of the caller's abort
 * signal once it is over (a listener left on it would keep every sample of the file alive).
 */

import { afterEach, describe, expect, it, vi } from "vitest";
import type { Message } from "../../core/index.js";
import type { SampleLine } from "../../scenario/jsonl-reader.js";
import { packLog } from "../worker/event-batch.js";
import { isCompact, packOf } from "./compact-messages.js";
import { readJsonlOffThread } from "./jsonl-offthread.js";
import type { JsonlWorkerMessage } from "./jsonl-worker.js";

const sample = (idx: number): SampleLine => ({
  idx,
  task_name: "t",
  message_log: [
    { role: "user", content: "q", token_ids: [1, 2] },
    { role: "assistant", content: "a", token_ids: [3, 4], generation_logprobs: [-0.1, -0.25] },
  ],
});

/** A reader Worker that answers the request with `replies` (each one's buffers transferred, as postMessage would). */
function fakeWorker(replies: () => JsonlWorkerMessage[]) {
  return class FakeWorker {
    onmessage: ((e: MessageEvent<JsonlWorkerMessage>) => void) | null = null;
    onerror: ((e: ErrorEvent) => void) | null = null;
    postMessage(message: unknown) {
      if (!message || typeof message !== "object" || !("source" in message)) return;
      setTimeout(() => {
        for (const reply of replies()) this.onmessage?.({ data: structuredClone(reply) } as MessageEvent<JsonlWorkerMessage>);
      });
    }
    terminate() {}
  };
}

const done: JsonlWorkerMessage = {
  type: "done",
  result: { footer: null, validLines: 2, badLines: 0, problems: [], problemCount: 0, linesRead: 2, bytesRead: 10, maxBufferedChars: 10 },
};

afterEach(() => vi.unstubAllGlobals());

describe("readJsonlOffThread", () => {
  it("takes the Worker's packed samples in compact, each in a pack of its own, their numbers exact", async () => {
    vi.stubGlobal(
      "Worker",
      fakeWorker(() => [{ type: "samples", samples: [sample(0), sample(1)].map((s) => ({ ...s, message_log: packLog(s.message_log, []) as Message[] })) }, done]),
    );
    const read = await readJsonlOffThread(new Blob(["x"]));
    expect(read.samples.map((s) => s.idx)).toEqual([0, 1]);
    const [first, second] = read.samples;
    for (const m of first!.message_log) expect(isCompact(m)).toBe(true);
    expect(packOf(first!.message_log[0]!)).toBe(packOf(first!.message_log[1]!));
    expect(packOf(second!.message_log[0]!)).not.toBe(packOf(first!.message_log[0]!));
    expect(first!.message_log[1]!.generation_logprobs).toEqual([-0.1, -0.25]);
    expect(JSON.parse(JSON.stringify(first))).toEqual(sample(0));
  });

  for (const [how, replies] of [
    ["it ends", () => [done]],
    ["it fails", () => [{ type: "error", message: "broken" } as JsonlWorkerMessage]],
  ] as const) {
    it(`removes its listener from the caller's abort signal when ${how}`, async () => {
      vi.stubGlobal("Worker", fakeWorker(replies));
      const controller = new AbortController();
      const add = vi.spyOn(controller.signal, "addEventListener");
      const remove = vi.spyOn(controller.signal, "removeEventListener");
      await readJsonlOffThread(new Blob(["x"]), { signal: controller.signal }).catch(() => undefined);
      expect(add).toHaveBeenCalledTimes(1);
      expect(remove).toHaveBeenCalledWith("abort", add.mock.calls[0]![1]);
    });
  }
});
