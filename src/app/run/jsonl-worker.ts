/// <reference lib="webworker" />
/**
 * Reads a run export (JSONL) off the page's main thread (./jsonl-offthread.ts starts it): the same streaming
 * checker as `readJsonl` (src/scenario/jsonl-reader.ts), its bytes read and split into lines by the same reader
 * (src/scenario/jsonl-lines.ts: bytes that are not UTF-8 fail their line here too), with the valid samples sent to the page as they are read, a few
 * megabytes at a time, their messages' numbers in transferred typed arrays. A Parquet file (its first 4 bytes `PAR1`:
 * TRL's completions) is read a row group at a time (src/scenario/imports/parquet.ts) into the same checker, its rows
 * counted as lines.
 */

import { packLog } from "../worker/event-batch.js";
import type { PackedMessage } from "./compact-messages.js";
import { blobAsyncBuffer, isParquet, readParquetInto } from "../../scenario/imports/parquet.js";
import { readJsonlStream } from "../../scenario/jsonl-lines.js";
import { JsonlAccumulator, type JsonlReadOptions, type JsonlReadResult, type SampleLine } from "../../scenario/jsonl-reader.js";

declare const self: DedicatedWorkerGlobalScope;

export type JsonlWorkerRequest = { source: Blob; options: Pick<JsonlReadOptions, "maxProblems" | "maxProblemsPerLine" | "maxLineLength"> };

/** The page has handled a batch of samples (see IN_FLIGHT). */
export type JsonlWorkerAck = { type: "ack" };

/** A sample line as the Worker sends it: its messages' numbers in transferred typed arrays. */
export type PackedSampleLine = { [K in keyof SampleLine as K extends "message_log" ? never : K]: SampleLine[K] } & { message_log: PackedMessage[] };

export type JsonlWorkerMessage =
  | { type: "samples"; samples: PackedSampleLine[] }
  | { type: "progress"; linesRead: number; bytesRead: number; totalBytes: number | null }
  | { type: "done"; result: Omit<JsonlReadResult, "samples"> }
  | { type: "error"; message: string };

/** Samples go to the page once this many bytes of the file have been read since the last batch (each batch is one
 * task of the page's main thread: it must stay short). The page shows a big file's samples as they come
 * (../ImportJsonl.tsx): the first batch is a screenful of a 1,000 × 20 run's samples. */
const BATCH_BYTES = 1024 * 1024;
/**
 * At most this many batches wait for the page at once (it acknowledges each one it has handled): the page's task
 * queue never holds a backlog of batches ahead of what the user does (a click, a frame), whatever the speed of its
 * main thread against this one's. The file is read on meanwhile, up to HIGH_WATER_BYTES of samples ahead of it.
 */
const IN_FLIGHT = 2;
const HIGH_WATER_BYTES = 16 * 1024 * 1024;

let onAck: (() => void) | null = null;

self.onmessage = (e: MessageEvent<JsonlWorkerRequest | JsonlWorkerAck>) => {
  if ("type" in e.data) onAck?.();
  else void read(e.data);
};

async function read({ source, options }: JsonlWorkerRequest): Promise<void> {
  const post = (message: JsonlWorkerMessage, transfer: Transferable[] = []) => self.postMessage(message, transfer);
  try {
    const acc = new JsonlAccumulator(options);
    /** Samples are read and kept (`acc.result.samples`) until sent; what was sent is not kept here. */
    const queued = acc.result.samples;
    let sent = 0;
    let inFlight = 0;
    let ended = false;
    let progressAt = -1;
    let wake: (() => void) | null = null;
    const bytesPerSample = () => acc.result.bytesRead / Math.max(1, sent + queued.length);
    const queuedBytes = () => queued.length * bytesPerSample();
    const progress = () => {
      progressAt = acc.result.bytesRead;
      post({ type: "progress", linesRead: acc.result.linesRead, bytesRead: acc.result.bytesRead, totalBytes: source.size });
    };
    const send = () => {
      while (inFlight < IN_FLIGHT && queued.length > 0 && (ended || queuedBytes() >= BATCH_BYTES)) {
        const batch = queued.splice(0, sent === 0 ? queued.length : Math.max(1, Math.round(BATCH_BYTES / bytesPerSample())));
        const transfer: ArrayBuffer[] = [];
        const packed = batch.map((s) => ({ ...s, message_log: packLog(s.message_log, transfer) }));
        sent += batch.length;
        inFlight += 1;
        post({ type: "samples", samples: packed }, transfer);
        progress();
      }
      if (acc.result.bytesRead - progressAt >= BATCH_BYTES) progress();
    };
    const room = () => new Promise<void>((resolve) => (wake = resolve));
    onAck = () => {
      inFlight -= 1;
      send();
      wake?.();
      wake = null;
    };
    // Far enough ahead of the page: wait for it.
    const caughtUp = async () => {
      while (queuedBytes() >= HIGH_WATER_BYTES) await room();
    };
    if (isParquet(new Uint8Array(await source.slice(0, 4).arrayBuffer()))) {
      // A Parquet file (TRL's completions): its rows through the same checker, a row group at a time.
      await readParquetInto(blobAsyncBuffer(source), acc, async () => {
        send();
        await caughtUp();
      });
    } else await readJsonlStream(source.stream() as ReadableStream<Uint8Array>, acc.lines, { beforeRead: caughtUp, afterChunk: send });
    acc.end();
    ended = true;
    send();
    while (queued.length > 0) {
      await room();
      send();
    }
    progress();
    const { samples: _sent, ...result } = acc.result;
    post({ type: "done", result });
  } catch (err) {
    post({ type: "error", message: err instanceof Error ? err.message : String(err) });
  }
}
