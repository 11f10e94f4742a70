/**
 * The fault-injection hook of the tests (e2e/faults.spec.ts), present only when the page's URL has `?faults=1`:
 * `window.__rolloutLabFaults` crashes the rollout worker, closes it silently, keeps it busy in one synchronous loop
 * (a hang: it reads no Stop), or loses its WebGPU device (a real `destroy()` of onnxruntime's device when a model
 * runs on WebGPU, else the loss handler called with a simulated loss). No control of the page reaches it.
 */

import { labRuns } from "./store.js";

export interface FaultHook {
  crashWorker(): Promise<string | null>;
  closeWorker(): Promise<string | null>;
  /** Resolves with "destroyed" (a real device was destroyed) or "simulated". */
  loseDevice(): Promise<string | null>;
  /**
   * Keeps the rollout worker busy in one synchronous loop for `ms` (default 60 s), as a long WASM call or a user's
   * busy loop would: it reads no message meanwhile, Stop included (the page's watchdog terminates it).
   */
  hangWorker(ms?: number): Promise<string | null>;
}

if (typeof location !== "undefined" && new URLSearchParams(location.search).get("faults") === "1") {
  const hook: FaultHook = {
    crashWorker: () => labRuns.client.injectFault("crash"),
    closeWorker: () => labRuns.client.injectFault("close"),
    loseDevice: () => labRuns.client.injectFault("device_lost"),
    hangWorker: (ms) => labRuns.client.injectFault("hang", ms),
  };
  (window as unknown as { __rolloutLabFaults: FaultHook }).__rolloutLabFaults = hook;
}
