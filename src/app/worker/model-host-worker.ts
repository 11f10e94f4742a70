/// <reference lib="webworker" />
/**
 * A model host: one model policy in a Worker of its own. The rollout worker moves a run here when its WebGPU
 * device is lost and the user chose to go on on WASM: transformers.js chains every session creation and every
 * inference of its realm on one promise, so once the lost device's inference has failed, every later one in that
 * realm fails with the same error; a fresh Worker is a fresh realm.
 */

import { toWireError, type TokenStepDetail } from "../../core/index.js";
import type { ModelPolicy } from "../../policy/llm/model-policy.js";
import { browserModelPolicy } from "../../policy/llm/worker.js";
import type { FromModelHost, ToModelHost } from "./model-host-protocol.js";

declare const self: DedicatedWorkerGlobalScope;

const post = (message: FromModelHost) => self.postMessage(message);
let policy: ModelPolicy | null = null;
const calls = new Map<number, AbortController>();

self.onmessage = async (e: MessageEvent<ToModelHost>) => {
  const message = e.data;
  if (message.type === "load") {
    try {
      const loaded = await browserModelPolicy({ ...message.spec, onProgress: (p) => post({ type: "progress", ...p }) });
      policy = loaded.policy;
      post({ type: "loaded", choice: loaded.choice, loadMs: loaded.loadMs });
    } catch (error) {
      post({ type: "load_failed", error: toWireError(error) });
    }
  } else if (message.type === "generate") {
    const controller = new AbortController();
    calls.set(message.id, controller);
    try {
      if (!policy) throw new Error("the model host has no model loaded");
      const onToken = message.stream
        ? (row: number, tokenId: number, text: string, detail?: TokenStepDetail) =>
            post({ type: "token", id: message.id, row, tokenId, text, ...(detail ? { detail } : {}) })
        : undefined;
      const out = await policy.generate(message.data, message.greedy, { signal: controller.signal, ...(onToken ? { onToken } : {}) });
      post({ type: "generated", id: message.id, out });
    } catch (error) {
      post({ type: "generate_failed", id: message.id, error: toWireError(error) });
    } finally {
      calls.delete(message.id);
    }
  } else if (message.type === "abort") {
    calls.get(message.id)?.abort();
  } else if (message.type === "release") {
    policy?.releaseSamples(message.sampleIds);
  } else if (message.type === "dispose") {
    await policy?.dispose().catch(() => undefined);
    policy = null;
    post({ type: "disposed" });
  }
};
