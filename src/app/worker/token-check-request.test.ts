/**
 * The token check in the rollout worker: the page's `checkTokens` call (a stand-in Worker answers it) and the
 * worker's answer with the loaded model's tokenizer (a transformers.js-shaped one over the byte-level vocabulary).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { byteLevelTokenizer, chatPrompt } from "../../core/index.js";
import { CHAT_TEMPLATE } from "../../policy/builtin-model/chat-template-jinja.js";
import { checkSample, type CheckSample } from "../../scenario/token-check.js";
import { byteLevelCheckTokenizer } from "../views/token-check-view.js";
import { RolloutWorkerClient } from "./client.js";
import type { PageMessage, WorkerMessage } from "./protocol.js";
import { answerTokenCheck } from "./token-check-request.js";

/** transformers.js's tokenizer calls, over the byte-level tokenizer and the built-in models' Jinja ChatML template. */
const fakeTransformers = {
  encode: (text: string, options: { add_special_tokens: boolean }) => (options.add_special_tokens ? [0, ...byteLevelTokenizer.encode(text)] : byteLevelTokenizer.encode(text)),
  decode: (ids: number[]) => byteLevelTokenizer.decode(ids),
  get_chat_template: () => CHAT_TEMPLATE,
  config: { eos_token: "<|im_end|>" },
  chat_template: CHAT_TEMPLATE,
  eos_token: "<|im_end|>",
};

const prompt = chatPrompt("Move the tile.", null);
const sample: CheckSample = {
  messageLog: [
    { role: "user", content: prompt, token_ids: byteLevelTokenizer.encode(prompt) },
    { role: "assistant", content: "left", token_ids: byteLevelTokenizer.encode("left<|im_end|>") },
    { role: "environment", content: "ok", token_ids: byteLevelTokenizer.encode("<|im_start|>user\nok<|im_end|>\n<|im_start|>assistant\n") },
  ],
  structured: false,
};

describe("answerTokenCheck (the worker's side)", () => {
  it("checks with the loaded model's tokenizer: the same result as the check's own", () => {
    const answer = answerTokenCheck(sample, "builtin:tiny-qwen3", { model: "builtin:tiny-qwen3", tokenizer: fakeTransformers });
    expect(answer).toEqual({ kind: "checked", result: checkSample(sample, byteLevelCheckTokenizer), tokenizer: "builtin:tiny-qwen3" });
    if (answer.kind !== "checked") throw new Error("unreachable");
    // A stripped `\n` after the assistant's end: the observation drifts at its envelope.
    expect(answer.result.first_divergence).toMatchObject({ message_index: 2, reason: "observation_envelope" });
  });

  it("says which model is loaded when it is not the run's, or none", () => {
    expect(answerTokenCheck(sample, "org/model", { model: "builtin:tiny-qwen3", tokenizer: fakeTransformers })).toEqual({ kind: "not_loaded", loaded: "builtin:tiny-qwen3" });
    expect(answerTokenCheck(sample, "org/model", null)).toEqual({ kind: "not_loaded", loaded: null });
  });
});

class FakeWorker {
  static all: FakeWorker[] = [];
  onmessage: ((e: MessageEvent<WorkerMessage>) => void) | null = null;
  onerror: ((e: ErrorEvent) => void) | null = null;
  onmessageerror: ((e: MessageEvent) => void) | null = null;
  readonly sent: PageMessage[] = [];
  constructor() {
    FakeWorker.all.push(this);
  }
  postMessage(message: PageMessage): void {
    this.sent.push(message);
  }
  terminate(): void {}
  answer(message: WorkerMessage): void {
    this.onmessage?.({ data: message } as MessageEvent<WorkerMessage>);
  }
}

let saved: unknown;
beforeEach(() => {
  FakeWorker.all = [];
  saved = (globalThis as { Worker?: unknown }).Worker;
  (globalThis as { Worker?: unknown }).Worker = FakeWorker;
});
afterEach(() => {
  (globalThis as { Worker?: unknown }).Worker = saved;
});

describe("RolloutWorkerClient.checkTokens (the page's side)", () => {
  it("without a worker (no run in this page): not loaded, and no worker is started for it", async () => {
    const client = new RolloutWorkerClient();
    expect(await client.checkTokens(sample, "builtin:tiny-qwen3")).toEqual({ kind: "not_loaded", loaded: null });
    expect(FakeWorker.all).toHaveLength(0);
  });

  it("asks the run's worker and resolves with its answer, matched by id", async () => {
    const client = new RolloutWorkerClient();
    client.run({});
    const worker = FakeWorker.all[0]!;
    const check = client.checkTokens;
    const pending = check(sample, "builtin:tiny-qwen3");
    const call = worker.sent.find((m): m is Extract<PageMessage, { type: "check_tokens" }> => m.type === "check_tokens");
    expect(call).toMatchObject({ model: "builtin:tiny-qwen3", sample });
    const result = checkSample(sample, byteLevelCheckTokenizer);
    worker.answer({ type: "tokens_checked", id: call!.id, answer: { kind: "checked", result, tokenizer: "builtin:tiny-qwen3" } });
    expect(await pending).toEqual({ kind: "checked", result, tokenizer: "builtin:tiny-qwen3" });
  });

  it("loads a tokenizer alone: starts a worker if there is none, and resolves once it answers", async () => {
    const client = new RolloutWorkerClient();
    const load = client.loadTokenizer;
    const pending = load("builtin:tiny-qwen3");
    const worker = FakeWorker.all[0]!;
    const call = worker.sent.find((m): m is Extract<PageMessage, { type: "load_tokenizer" }> => m.type === "load_tokenizer");
    expect(call).toMatchObject({ model: "builtin:tiny-qwen3" });
    worker.answer({ type: "tokenizer_loaded", id: call!.id });
    await expect(pending).resolves.toBeUndefined();
  });
});
