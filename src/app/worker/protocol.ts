/**
 * The typed messages between the page and the rollout worker. Every request the page waits on an answer for goes
 * through `PendingCalls` (src/core/rpc.ts) on both sides: a run (`runId`, answered by its `result` or `failed`),
 * and the calls of `WorkerCalls` (`id`, answered by their answer message or `call_failed`). So does the worker's
 * one request to the page, a human turn (`requestId`, answered by `human_response`). Failures cross only as a
 * `WireError` and are rebuilt by name (`fromWireError`). The run's events and controls are messages without answers.
 */

import type { WireError } from "../../core/index.js";
import type { PackedEvent, PackedResult } from "../run/compact-messages.js";
import type { EnvironmentDescription } from "../../envs/user/port.js";
import type { DeviceLossAction, DeviceLossInfo } from "../../policy/llm/device-loss.js";
import type { ForkContinuation } from "../../policy/fork-policy.js";
import type { EnvironmentMetrics } from "../../scenario/environment-metrics.js";
import type { CheckResult, CheckSample } from "../../scenario/token-check.js";

/**
 * The answer to `check_tokens`: the check's result with the loaded model's tokenizer, or that the model the run
 * needs is not the one loaded (`loaded`: the one that is, if any).
 */
export type TokenCheckAnswer = { kind: "checked"; result: CheckResult; tokenizer: string } | { kind: "not_loaded"; loaded: string | null };

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

/** What the page found of a user environment's host that a run's step left without an answer past its deadline. */
export type EnvironmentHostNews =
  | { outcome: "answering" }
  /** Restarted: the run's calls go to `port` now (transferred). */
  | { outcome: "replaced"; port: MessagePort; why: string }
  | { outcome: "gone"; why: string };

/** A turn the human policy waits for. */
export interface HumanRequest {
  /** The worker's call id: the page's `human_response` answers it. */
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
  /** What became of the host of user environment `name` after the run's step there passed its deadline unanswered. */
  | { type: "environment_host"; runId: number; name: string; news: EnvironmentHostNews }
  /** A call: token texts in the loaded model's vocabulary (the token view of a model run). */
  /** `model`: the vocabulary the ids are in (a model policy's model, or a text policy's `tokenizer`). */
  | { type: "describe_tokens"; id: number; ids: number[]; model: string }
  /** A call: the token consistency check of one sample with the tokenizer of `model`, if that is the model loaded. */
  | { type: "check_tokens"; id: number; sample: CheckSample; model: string }
  /**
   * A call: load `model`'s tokenizer alone (no weights), for the check and the token texts of a saved or imported run:
   * a hub model's from `remoteHost` (else huggingface.co), a picked folder's (`local:<name>`) from `localFiles`.
   */
  | ({ type: "load_tokenizer"; id: number; model: string } & TokenizerFiles)
  /**
   * A call, answered once the worker holds this Web Lock, which it holds for as long as it lives: the page learns
   * of a worker that stopped silently.
   */
  | { type: "hold_lock"; id: number; name: string }
  /** A call (answered by what the worker did). `ms`: how long a "hang" keeps the worker busy in one synchronous loop. */
  | { type: "debug_fault"; id: number; fault: Exclude<InjectedFault, UnansweredFault>; ms?: number }
  /** The faults the worker does not answer (it crashes, closes, or is busy in one long loop). */
  | { type: "debug_fault"; fault: UnansweredFault; ms?: number };

/** Where a tokenizer loaded alone comes from, beside this site's built-ins: a hub, or a picked folder's files. */
export interface TokenizerFiles {
  remoteHost?: string;
  localFiles?: Map<string, Blob>;
}

/** The test hook's faults the worker cannot answer: the page does not wait for them. */
export type UnansweredFault = "crash" | "close" | "hang";

/** The page's calls, by their message's type: the worker's answer to each (or `call_failed`), of the same `id`. */
export interface WorkerCalls {
  describe_tokens: "tokens_described";
  check_tokens: "tokens_checked";
  load_tokenizer: "tokenizer_loaded";
  hold_lock: "lock_held";
  debug_fault: "fault_injected";
}

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
  | { type: "events"; runId: number; events: PackedEvent[] }
  | { type: "model"; runId: number; status: ModelStatus }
  | { type: "human_request"; runId: number; request: HumanRequest }
  /** The answer to `describe_tokens` (no model loaded: `call_failed`). */
  | { type: "tokens_described"; id: number; texts: string[]; special: boolean[] }
  | { type: "tokens_checked"; id: number; answer: TokenCheckAnswer }
  | { type: "tokenizer_loaded"; id: number }
  /** `text`: the result's JSON text; the result's message logs carry typed arrays (./event-batch.ts `packResult`). */
  | { type: "result"; runId: number; result: PackedResult; text?: string }
  /** The run's WebGPU device was lost; `action` is what the run does about it. */
  | { type: "device_lost"; runId: number; loss: DeviceLossInfo; action: DeviceLossAction }
  /** The environments' metrics after the rollout (before its `result`). */
  | { type: "environment_metrics"; runId: number; reports: EnvironmentMetrics[] }
  /** A step of user environment `name` passed its deadline without an answer: the page checks its host. */
  | { type: "environment_overdue"; runId: number; name: string }
  | { type: "lock_held"; id: number }
  /**
   * This worker should not run another model: a model failed to load or to generate, or its device was lost
   * (transformers.js chains all loads and inferences of a realm on one promise, which then stays rejected).
   */
  | { type: "retire"; runId: number; reason: string }
  /** The answer to a `debug_fault`: what the worker did. */
  | { type: "fault_injected"; id: number; detail: string }
  /** A call of `WorkerCalls` failed: why. */
  | { type: "call_failed"; id: number; error: WireError }
  /** The worker read the run's Stop (the page's watchdog then knows it is not stuck in a synchronous call). */
  | { type: "stop_received"; runId: number }
  /** The run failed (its answer, as `result` is). */
  | { type: "failed"; runId: number; error: WireError };

/** The worker's answer to a call of `WorkerCalls`, by the call's type. */
export type CallAnswer<K extends keyof WorkerCalls = keyof WorkerCalls> = Extract<WorkerMessage, { type: WorkerCalls[K] }>;
