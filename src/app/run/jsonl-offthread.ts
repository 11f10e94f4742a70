/**
 * `readJsonl` in a Worker (./jsonl-worker.ts): the same checks and the same result, with the parsing and checking of
 * a large file off the page's main thread (a 1,000 × 20 run's export, 150 MB, took seconds of main-thread tasks
 * there). The samples arrive a few megabytes at a time; their messages are compact (./compact-messages.ts: they
 * read as plain arrays). Where there is no Worker (Node, tests), it is `readJsonl` itself.
 */

import type { Message } from "../../core/index.js";
import { compactMessage, TokenPack } from "./compact-messages.js";
import { readJsonl, type JsonlReadOptions, type JsonlReadResult, type JsonlSource, type SampleLine } from "./jsonl-reader.js";
import type { JsonlWorkerMessage, JsonlWorkerRequest } from "./jsonl-worker.js";

export async function readJsonlOffThread(source: JsonlSource, options: JsonlReadOptions = {}): Promise<JsonlReadResult> {
  if (typeof Worker === "undefined" || typeof Blob === "undefined" || !(source instanceof Blob)) return readJsonl(source, options);
  const { onProgress, signal, ...checks } = options;
  if (signal?.aborted) throw signal.reason ?? new DOMException("The import was cancelled", "AbortError");
  const worker = new Worker(new URL("./jsonl-worker.ts", import.meta.url), { type: "module" });
  const samples: SampleLine[] = [];
  try {
    return await new Promise<JsonlReadResult>((resolve, reject) => {
      signal?.addEventListener("abort", () => reject(signal.reason ?? new DOMException("The import was cancelled", "AbortError")), { once: true });
      worker.onerror = (e) => {
        e.preventDefault();
        reject(new Error(e.message || "the JSONL reader stopped"));
      };
      worker.onmessage = (e: MessageEvent<JsonlWorkerMessage>) => {
        const message = e.data;
        if (message.type === "samples") {
          for (const s of message.samples) {
            let ids = 0;
            let logprobs = 0;
            for (const m of s.message_log) {
              ids += m?.token_ids?.length ?? 0;
              logprobs += m?.generation_logprobs?.length ?? 0;
            }
            const pack = new TokenPack(ids, logprobs);
            samples.push({ ...s, message_log: s.message_log.map((m) => (m && typeof m === "object" ? compactMessage(m as Message, pack) : m)) });
            pack.trim();
          }
        } else if (message.type === "progress") {
          onProgress?.({ linesRead: message.linesRead, bytesRead: message.bytesRead, totalBytes: message.totalBytes });
        } else if (message.type === "done") {
          resolve({ ...message.result, samples });
        } else {
          reject(new Error(message.message));
        }
      };
      worker.postMessage({ source, options: checks } satisfies JsonlWorkerRequest);
    });
  } finally {
    worker.terminate();
  }
}
