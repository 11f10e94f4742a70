/**
 * `readJsonl` in a Worker (./jsonl-worker.ts): the same checks and the same result, with the parsing and checking of
 * a large file off the page's main thread (a 1,000 × 20 run's export, 150 MB, took seconds of main-thread tasks
 * there). The samples arrive a megabyte of the file at a time, each batch acknowledged once handled (the Worker keeps
 * at most two waiting: no backlog of batches ahead of the page's own work); their messages are compact
 * (./compact-messages.ts: they read as plain arrays). `onSamples` gets each batch as it comes (a big file's preview:
 * ../ImportJsonl.tsx). Where there is no Worker (Node, tests), it is `readJsonl` itself.
 */

import { compactLog } from "./compact-messages.js";
import { readJsonl, type JsonlReadOptions, type JsonlReadResult, type JsonlSource, type SampleLine } from "../../scenario/jsonl-reader.js";
import type { JsonlWorkerAck, JsonlWorkerMessage, JsonlWorkerRequest } from "./jsonl-worker.js";
import { adoptSample, mergeReads } from "../../scenario/imports/steps.js";

const startWorker = () => new Worker(new URL("./jsonl-worker.ts", import.meta.url), { type: "module" });
let spare: Worker | null = null;

/**
 * Starts the reader's Worker ahead of the next read (call it when the page is idle): starting one and loading its
 * module takes a couple of hundred milliseconds on a busy machine, which a big file's first samples would wait for.
 * The next `readJsonlOffThread` takes it; one is kept at most.
 */
export function warmJsonlReader(): void {
  if (typeof Worker === "undefined" || spare) return;
  spare = startWorker();
}

export interface OffThreadReadOptions extends JsonlReadOptions {
  /**
   * Called once the first batch of samples went to `onSamples`: a promise it returns holds the read there until it
   * resolves (the Worker's later messages wait, unacknowledged, so it reads no further ahead than it ever does).
   * Only the test hook holds a read (./import-hold.ts); null or no option: the read goes on at once.
   */
  holdAfterFirstSamples?: () => Promise<void> | null;
}

export async function readJsonlOffThread(source: JsonlSource, options: OffThreadReadOptions = {}): Promise<JsonlReadResult> {
  const { holdAfterFirstSamples, ...readOptions } = options;
  if (typeof Worker === "undefined" || typeof Blob === "undefined" || !(source instanceof Blob)) return readJsonl(source, readOptions);
  const { onProgress, onSamples, signal, ...checks } = readOptions;
  if (signal?.aborted) throw signal.reason ?? new DOMException("The import was cancelled", "AbortError");
  const worker = spare ?? startWorker();
  spare = null;
  const samples: SampleLine[] = [];
  // Removed once the read is over: a signal kept longer (the caller's) would keep the samples alive through it.
  let onAbort: (() => void) | null = null;
  try {
    return await new Promise<JsonlReadResult>((resolve, reject) => {
      onAbort = () => reject(signal!.reason ?? new DOMException("The import was cancelled", "AbortError"));
      signal?.addEventListener("abort", onAbort, { once: true });
      worker.onerror = (e) => {
        e.preventDefault();
        reject(new Error(e.message || "the JSONL reader stopped"));
      };
      // While the read is held (`holdAfterFirstSamples`), the Worker's messages wait here, in order.
      let held = false;
      let firstBatch = true;
      const waiting: JsonlWorkerMessage[] = [];
      const handle = (message: JsonlWorkerMessage) => {
        if (message.type === "samples") {
          const first = samples.length;
          for (const s of message.samples) samples.push({ ...s, message_log: compactLog(s.message_log) });
          // Handled: the worker may send another batch (it keeps only a couple waiting for the page).
          worker.postMessage({ type: "ack" } satisfies JsonlWorkerAck);
          onSamples?.(samples.slice(first));
          const hold = firstBatch ? holdAfterFirstSamples?.() : null;
          firstBatch = false;
          if (hold) {
            held = true;
            void hold.then(() => {
              held = false;
              if (signal?.aborted) return;
              while (!held && waiting.length > 0) handle(waiting.shift()!);
            });
          }
        } else if (message.type === "progress") {
          onProgress?.({ linesRead: message.linesRead, bytesRead: message.bytesRead, totalBytes: message.totalBytes });
        } else if (message.type === "done") {
          resolve({ ...message.result, samples });
        } else {
          reject(new Error(message.message));
        }
      };
      worker.onmessage = (e: MessageEvent<JsonlWorkerMessage>) => {
        if (held) waiting.push(e.data);
        else handle(e.data);
      };
      worker.postMessage({ source, options: checks } satisfies JsonlWorkerRequest);
    });
  } finally {
    if (onAbort) signal?.removeEventListener("abort", onAbort);
    worker.terminate();
  }
}

/**
 * Several files of one run (its steps) read one after another as `readJsonlOffThread` reads one, as one run: the
 * samples handed to `onSamples` already numbered in the run (../../scenario/imports/steps.ts), the progress over all
 * the files' bytes. One file: `readJsonlOffThread` itself.
 */
export async function readFilesOffThread(files: readonly File[], options: OffThreadReadOptions = {}): Promise<JsonlReadResult> {
  if (files.length === 1) return readJsonlOffThread(files[0]!, { ...options, fileName: files[0]!.name });
  const { onSamples, onProgress, holdAfterFirstSamples, ...rest } = options;
  const totalBytes = files.reduce((n, f) => n + f.size, 0);
  const reads: { fileName: string; read: JsonlReadResult }[] = [];
  let lines = 0;
  let bytes = 0;
  let numbered = 0;
  for (const file of files) {
    let handed = 0;
    const read = await readJsonlOffThread(file, {
      ...rest,
      fileName: file.name,
      onSamples: (samples) => {
        for (const s of samples) adoptSample(s, file.name, numbered++);
        handed += samples.length;
        onSamples?.(samples);
      },
      onProgress: (p) => onProgress?.({ linesRead: lines + p.linesRead, bytesRead: bytes + p.bytesRead, totalBytes }),
      // Only the first file's first samples are held (the test hook's hold).
      ...(reads.length === 0 && holdAfterFirstSamples ? { holdAfterFirstSamples } : {}),
    });
    // Samples not handed on as they came are numbered now.
    for (const s of read.samples.slice(handed)) adoptSample(s, file.name, numbered++);
    reads.push({ fileName: file.name, read });
    lines += read.linesRead;
    bytes += read.bytesRead;
  }
  return mergeReads(reads);
}
