/** The typed messages between the page and the rollout worker. */

import type { RolloutEvent, WireError } from "../../core/index.js";
import type { EnvironmentDescription } from "../../envs/user/port.js";
import type { DeviceLossAction, DeviceLossInfo } from "../../policy/llm/device-loss.js";
import type { RolloutResultJson } from "../../scenario/result.js";
import type { ForkContinuation } from "../../policy/fork-policy.js";

/** Where a model policy's files come from, beyond what the scenario says (lab settings, not part of the run). */
export interface ModelSettings {
  /** A hub other than huggingface.co (a mirror, or the tests' stand-in hub). */
  remoteHost?: string;
  /** The files of a folder the user picked, for `local:<name>` models: relative path → file. */
  localFiles?: { path: string; file: Blob }[];
  /** The human policy: the person at the page types each assistant turn (the scenario's policy is not used). */
  human?: boolean;
  /** Files the scenario may name (a replay's run), by name. */
  files?: Record<string, string>;
  /** A fork's run: how it continues its original (the policy's turn numbers, an edited first response). */
  fork?: ForkContinuation;
  /** What a model run does when its WebGPU device is lost: stop (default), or go on with the model on WASM. */
  onDeviceLoss?: DeviceLossAction;
  /** The run starts paused, before its first turn (the test hook's `startPaused`: src/app/faults-debug.ts). */
  startPaused?: boolean;
  /**
   * The test hook may hold the model's generation calls (`holdGeneration`: src/app/faults-debug.ts, ./generation-hold.ts);
   * the page sets it only under `?faults=1`.
   */
  holdableGeneration?: boolean;
}

/**
 * Faults the test hook (`?faults=1`, src/app/faults-debug.ts) injects into the worker; no control of the page sends
 * them. `hold_generation` arms the hold on the next model generation to finish (./generation-hold.ts),
 * `generation_held` is answered once a call is held, `release_generation` lets it return.
 */
export type InjectedFault = "crash" | "close" | "device_lost" | "hang" | "hold_generation" | "generation_held" | "release_generation";

/** A user environment the run may step: what it is, and a port to its host Worker (transferred). */
export interface UserEnvironmentPort {
  description: EnvironmentDescription;
  port: MessagePort;
}

/** A turn the human policy waits for. */
export interface HumanRequest {
  requestId: number;
  sample: number;
  turn: number;
  /** The end of the context so far, decoded (what the person answers). */
  contextTail: string;
  stopStrings: string[] | null;
}

export type PageMessage =
  | { type: "run"; runId: number; scenario: unknown; modelSettings?: ModelSettings; environments?: UserEnvironmentPort[] }
  | { type: "pause"; runId: number }
  | { type: "resume"; runId: number }
  | { type: "step"; runId: number }
  | { type: "stop"; runId: number }
  | { type: "human_response"; runId: number; requestId: number; text: string }
  /** Token texts in the loaded model's vocabulary (the token view of a model run). */
  | { type: "describe_tokens"; runId: number; ids: number[] }
  /** The worker holds this Web Lock for as long as it lives: the page learns of a worker that stopped silently. */
  | { type: "hold_lock"; runId: number; name: string }
  /** `ms`: how long a "hang" keeps the worker busy in one synchronous loop; `replyId`: a fault the worker answers. */
  | { type: "debug_fault"; runId: number; fault: InjectedFault; ms?: number; replyId?: number };

export interface ModelStatus {
  phase: "choosing_device" | "loading" | "ready";
  model: string;
  device?: "wasm" | "webgpu";
  /** Why that device, in words. */
  reason?: string;
  /** Download or load progress of the current file, 0–1. */
  progress?: { file: string; fraction: number };
  loadMs?: number;
}

export type WorkerMessage =
  /**
   * Events in order, batched by the worker (./event-batch.ts); their messages' token ids and log-probabilities are
   * `Int32Array` / `Float32Array` or `Float64Array` (transferred), which `RunModel.apply` takes as they are
   * (`plainEvent` converts); the `rollout_end` batch comes without its `message_log` column.
   */
  | { type: "events"; runId: number; events: RolloutEvent[] }
  | { type: "model"; runId: number; status: ModelStatus }
  | { type: "human_request"; runId: number; request: HumanRequest }
  | { type: "tokens_described"; runId: number; ids: number[]; texts: string[]; special: boolean[] }
  /** `text`: the result's JSON text; the result's message logs carry typed arrays (./event-batch.ts `packResult`). */
  | { type: "result"; runId: number; result: RolloutResultJson; text?: string }
  /** The run's WebGPU device was lost; `action` is what the run does about it. */
  | { type: "device_lost"; runId: number; loss: DeviceLossInfo; action: DeviceLossAction }
  | { type: "lock_held"; runId: number; name: string }
  /**
   * This worker should not run another model: a model failed to load or to generate, or its device was lost
   * (transformers.js chains all loads and inferences of a realm on one promise, which then stays rejected).
   */
  | { type: "retire"; runId: number; reason: string }
  /** The answer to the `debug_fault` of the same `replyId`: what the worker did. */
  | { type: "fault_injected"; runId: number; fault: InjectedFault; detail: string; replyId?: number }
  /** The worker read the run's Stop (the page's watchdog then knows it is not stuck in a synchronous call). */
  | { type: "stop_received"; runId: number }
  | { type: "failed"; runId: number; error: WireError };
