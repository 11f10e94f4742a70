/**
 * `readJsonlOffThread` on the page's side (the reader's Worker stood in for): the samples that arrive packed come out
 * compact, their numbers as sent (float64 log-probabilities stay exact), and the read lets go of the caller's abort
 * signal once it is over (a listener left on it would keep every sample of the file alive). The test hook's hold
 * (./import-hold.ts) keeps the read after its first batch until released, or until it is stopped.
 */

import { afterEach, describe, expect, it, vi } from "vitest";
import type { Message } from "../../core/index.js";
import type { SampleLine } from "../../scenario/jsonl-reader.js";
import { packLog } from "../worker/event-batch.js";
import { isCompact, packOf } from "./compact-messages.js";
import { importHold } from "./import-hold.js";
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

  describe("held after its first batch (the test hook's holdImport)", () => {
    /**
     * A reader Worker that sends two batches of samples and its end, each as a task of its own; it counts the acks,
     * and `delivered` resolves once it has sent them all.
     */
    function batchesWorker() {
      let delivered!: () => void;
      const worker = {
        acks: 0,
        terminated: false,
        delivered: new Promise<void>((resolve) => (delivered = resolve)),
        Class: class {
          onmessage: ((e: MessageEvent<JsonlWorkerMessage>) => void) | null = null;
          onerror: ((e: ErrorEvent) => void) | null = null;
          postMessage(message: unknown) {
            if (message && typeof message === "object" && "type" in message) {
              worker.acks += 1;
              return;
            }
            const replies: JsonlWorkerMessage[] = [
              { type: "samples", samples: [sample(0)].map((s) => ({ ...s, message_log: packLog(s.message_log, []) as Message[] })) },
              { type: "progress", linesRead: 1, bytesRead: 5, totalBytes: 10 },
              { type: "samples", samples: [sample(1)].map((s) => ({ ...s, message_log: packLog(s.message_log, []) as Message[] })) },
              done,
            ];
            const next = () => {
              const reply = replies.shift();
              if (!reply) return delivered();
              this.onmessage?.({ data: structuredClone(reply) } as MessageEvent<JsonlWorkerMessage>);
              setTimeout(next);
            };
            setTimeout(next);
          }
          terminate() {
            worker.terminated = true;
          }
        },
      };
      return worker;
    }
    afterEach(() => importHold.set(false));

    it("off (every page without the hook): nothing waits", async () => {
      const worker = batchesWorker();
      vi.stubGlobal("Worker", worker.Class);
      const batches: number[][] = [];
      const read = await readJsonlOffThread(new Blob(["x"]), {
        onSamples: (s) => batches.push(s.map((x) => x.idx!)),
        holdAfterFirstSamples: () => importHold.next(),
      });
      expect(batches).toEqual([[0], [1]]);
      expect(read.samples.map((s) => s.idx)).toEqual([0, 1]);
      expect(importHold.release()).toBe(0);
    });

    it("on: the read waits after its first batch, the later messages unhandled and unacknowledged, until released", async () => {
      importHold.set(true);
      const worker = batchesWorker();
      vi.stubGlobal("Worker", worker.Class);
      const batches: number[][] = [];
      const progress: number[] = [];
      let ended = false;
      const reading = readJsonlOffThread(new Blob(["x"]), {
        onSamples: (s) => batches.push(s.map((x) => x.idx!)),
        onProgress: (p) => progress.push(p.linesRead),
        holdAfterFirstSamples: () => importHold.next(),
      }).then((read) => {
        ended = true;
        return read;
      });
      await worker.delivered;
      expect(batches).toEqual([[0]]);
      expect(progress).toEqual([]);
      expect(worker.acks).toBe(1);
      expect(ended).toBe(false);
      expect(importHold.release()).toBe(1);
      const read = await reading;
      // In order, as they came; held once only.
      expect(batches).toEqual([[0], [1]]);
      expect(progress).toEqual([1]);
      expect(worker.acks).toBe(2);
      expect(read.samples.map((s) => s.idx)).toEqual([0, 1]);
      expect(worker.terminated).toBe(true);
    });

    it("stopped while held: the read ends as stopped, and is no longer held", async () => {
      importHold.set(true);
      const worker = batchesWorker();
      vi.stubGlobal("Worker", worker.Class);
      const controller = new AbortController();
      const batches: number[][] = [];
      const reading = readJsonlOffThread(new Blob(["x"]), {
        signal: controller.signal,
        onSamples: (s) => batches.push(s.map((x) => x.idx!)),
        holdAfterFirstSamples: () => importHold.next(controller.signal),
      });
      await worker.delivered;
      controller.abort(new DOMException("stopped", "AbortError"));
      await expect(reading).rejects.toThrow("stopped");
      expect(worker.terminated).toBe(true);
      // Nothing is held any more, and nothing it had waiting is handled now.
      expect(importHold.release()).toBe(0);
      await Promise.resolve();
      expect(batches).toEqual([[0]]);
    });
  });
});
