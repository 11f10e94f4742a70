/**
 * Messages between the rollout worker and a model host worker (src/app/worker/model-host-worker.ts): one model
 * policy in a Worker of its own, reached through `RemoteModelPolicy` (remote-model.ts).
 */

import type { GenerationDatumSpec, GenerationOutputSpec, TokenStepDetail, WireError } from "../../core/index.js";
import type { BrowserModelSpec, DeviceChoice } from "../../policy/llm/worker.js";

/** A model spec that crosses a Worker boundary (no callbacks). */
export type HostedModelSpec = Omit<BrowserModelSpec, "onProgress">;

export type ToModelHost =
  | { type: "load"; spec: HostedModelSpec }
  | { type: "generate"; id: number; data: GenerationDatumSpec; greedy: boolean; stream: boolean }
  | { type: "abort"; id: number }
  /** These samples ended: the host frees their kept KV caches (the model policy's `releaseSamples`). */
  | { type: "release"; sampleIds: number[] }
  | { type: "dispose" };

export type FromModelHost =
  | { type: "progress"; file: string; loaded: number; total: number }
  | { type: "loaded"; choice: DeviceChoice; loadMs: number }
  | { type: "load_failed"; error: WireError }
  /** A streamed token, with the step detail the model policy gave it (the page's token view shows it). */
  | { type: "token"; id: number; row: number; tokenId: number; text: string; detail?: TokenStepDetail }
  | { type: "generated"; id: number; out: GenerationOutputSpec }
  | { type: "generate_failed"; id: number; error: WireError }
  | { type: "disposed" };
