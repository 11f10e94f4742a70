/**
 * The fault-injection hook of the tests (e2e/faults.spec.ts), present only when the page's URL has `?faults=1`:
 * `window.__rolloutLabFaults` crashes the rollout worker, closes it silently, keeps it busy in one synchronous loop
 * (a hang: it reads no Stop), or loses its WebGPU device (a real `destroy()` of onnxruntime's device when a model
 * runs on WebGPU, else the loss handler called with a simulated loss), or starts each run paused before its first
 * turn (so a test steps it turn by turn), or holds a big file's import after its first preview slice (so a test
 * sees the preview, or stops it, while the file is surely still read), or holds the model's next generation call
 * before it returns (so a device loss, a Pause or a Stop lands during a generation). No control of the page reaches
 * it.
 */

import { create } from "zustand";
import { importHold } from "./run/import-hold.js";
import { client, session } from "./store.js";

/** A drawing fault the hook injects: the `FaultProbe` of that part of the page throws this message while it is set. */
const renderFaults = create<{ views: string | null; page: string | null }>(() => ({ views: null, page: null }));

/**
 * Drawn inside the views (`where="views"`, under their error boundary) and inside the page (`"page"`, under the
 * page's own): nothing, unless the test hook set a fault there; then it throws, as a view that meets data it cannot
 * draw would (until the fault is cleared).
 */
export function FaultProbe({ where }: { where: "views" | "page" }): null {
  const fault = renderFaults((s) => s[where]);
  if (fault !== null) throw new Error(fault);
  return null;
}

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
  /**
   * From now on (or, with false, no longer) each run starts paused before its first turn: a test then drives it turn
   * by turn with Step, whatever the machine's speed (no race between the run and a click on Pause).
   */
  startPaused(on?: boolean): Promise<string | null>;
  /** Makes the views (or the whole page) throw `message` while they draw, until called again with null. */
  breakDrawing(where: "views" | "page", message: string | null): Promise<string | null>;
  /**
   * From now on (or, with false, no longer: that also releases the imports held now) each big file's import (the
   * one previewed while it is read) stops reading once its first samples are in the preview, until
   * `releaseImport()`: a test looks at the preview, or presses Stop, while the file is surely still being read.
   */
  holdImport(on?: boolean): Promise<string | null>;
  /** Lets the held import read on: "released", or null when no import was held (none yet, or it was stopped). */
  releaseImport(): Promise<string | null>;
  /**
   * The run's model holds its next generation call to finish before it returns (on the device it runs on, inside the
   * device-loss guard), until `releaseGeneration()` or the run's Stop: a test loses the device, or presses Pause or
   * Stop, while a generation is surely under way. Resolves "armed" once the worker has it.
   */
  holdGeneration(): Promise<string | null>;
  /** Resolves "held" once a generation call is held (at once if one is). */
  generationHeld(): Promise<string | null>;
  /** Lets the held call return: "released", or "none held" (then nothing is held any more). */
  releaseGeneration(): Promise<string | null>;
}

if (typeof location !== "undefined" && new URLSearchParams(location.search).get("faults") === "1") {
  const hook: FaultHook = {
    crashWorker: () => client.injectFault("crash"),
    closeWorker: () => client.injectFault("close"),
    loseDevice: () => client.injectFault("device_lost"),
    hangWorker: (ms) => client.injectFault("hang", ms),
    startPaused: async (on = true) => {
      session.testHooks.startPaused = on;
      return on ? "paused" : "running";
    },
    breakDrawing: async (where, message) => {
      renderFaults.setState({ [where]: message });
      return message;
    },
    holdImport: async (on = true) => {
      importHold.set(on);
      return on ? "holding" : "not holding";
    },
    releaseImport: async () => (importHold.release() > 0 ? "released" : null),
    holdGeneration: () => client.injectFault("hold_generation"),
    generationHeld: () => client.injectFault("generation_held"),
    releaseGeneration: () => client.injectFault("release_generation"),
  };
  // The runs of this page let the hook hold their model's generation calls (no other page's runs can be held).
  session.testHooks.holdableGeneration = true;
  (window as unknown as { __rolloutLabFaults: FaultHook }).__rolloutLabFaults = hook;
}
