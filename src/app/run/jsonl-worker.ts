/// <reference lib="webworker" />
/**
 * Reads a run export (JSONL) off the page's main thread (./jsonl-offthread.ts starts it): the same streaming
 * checker as `readJsonl` (./jsonl-reader.ts), with the valid samples sent to the page as they are read, a few
 * megabytes at a time, their messages' numbers in transferred typed arrays.
 */

import { packLog } from "../worker/event-batch.js";
import { JsonlAccumulator, type JsonlReadOptions, type JsonlReadResult, type SampleLine } from "./jsonl-reader.js";

declare const self: DedicatedWorkerGlobalScope;

export type JsonlWorkerRequest = { source: Blob; options: Pick<JsonlReadOptions, "maxProblems" | "maxProblemsPerLine" | "maxLineLength"> };

export type JsonlWorkerMessage =
  | { type: "samples"; samples: SampleLine[] }
  | { type: "progress"; linesRead: number; bytesRead: number; totalBytes: number | null }
  | { type: "done"; result: Omit<JsonlReadResult, "samples"> }
  | { type: "error"; message: string };

/** Samples go to the page once this many bytes of the file have been read since the last batch (each batch is one
 * task of the page's main thread: it must stay short). */
const BATCH_BYTES = 1024 * 1024;

self.onmessage = async (e: MessageEvent<JsonlWorkerRequest>) => {
  const { source, options } = e.data;
  const post = (message: JsonlWorkerMessage, transfer: Transferable[] = []) => self.postMessage(message, transfer);
  try {
    const acc = new JsonlAccumulator(options);
    const reader = (source.stream() as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder("utf-8");
    let sentAt = 0;
    const send = () => {
      const samples = acc.result.samples;
      if (samples.length) {
        const transfer: ArrayBuffer[] = [];
        const packed = samples.map((s) => ({ ...s, message_log: packLog(s.message_log, transfer) as SampleLine["message_log"] }));
        // What was sent is not kept here (the accumulator only ever appends to its list).
        samples.length = 0;
        post({ type: "samples", samples: packed }, transfer);
      }
      post({ type: "progress", linesRead: acc.result.linesRead, bytesRead: acc.result.bytesRead, totalBytes: source.size });
      sentAt = acc.result.bytesRead;
    };
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      acc.result.bytesRead += value.byteLength;
      acc.push(decoder.decode(value, { stream: true }));
      if (acc.result.bytesRead - sentAt >= BATCH_BYTES) send();
    }
    const rest = decoder.decode();
    if (rest) acc.push(rest);
    acc.end();
    send();
    const { samples: _sent, ...result } = acc.result;
    post({ type: "done", result });
  } catch (err) {
    post({ type: "error", message: err instanceof Error ? err.message : String(err) });
  }
};
