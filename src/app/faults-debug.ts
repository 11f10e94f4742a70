/**
 * The fault-injection hook of the tests (e2e/faults.spec.ts), present only when the page's URL has `?faults=1`:
 * `window.__rolloutLabFaults` crashes the rollout worker, closes it silently, or loses its WebGPU device (a real
 * `destroy()` of onnxruntime's device when a model runs on WebGPU, else the loss handler called with a simulated
 * loss). No control of the page reaches it.
 */

import { labRuns } from "./store.js";

export interface FaultHook {
  crashWorker(): Promise<string | null>;
  closeWorker(): Promise<string | null>;
  /** Resolves with "destroyed" (a real device was destroyed) or "simulated". */
  loseDevice(): Promise<string | null>;
}

if (typeof location !== "undefined" && new URLSearchParams(location.search).get("faults") === "1") {
  const hook: FaultHook = {
    crashWorker: () => labRuns.client.injectFault("crash"),
    closeWorker: () => labRuns.client.injectFault("close"),
    loseDevice: () => labRuns.client.injectFault("device_lost"),
  };
  (window as unknown as { __rolloutLabFaults: FaultHook }).__rolloutLabFaults = hook;
}
