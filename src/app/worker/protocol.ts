/** The typed messages between the page and the rollout worker. */

import type { RolloutEvent } from "../../core/index.js";
import type { EnvironmentDescription } from "../../envs/user/port.js";
import type { RolloutResultJson } from "../../scenario/result.js";
import type { ForkContinuation } from "../fork/fork-policy.js";

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
}

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
  | { type: "describe_tokens"; runId: number; ids: number[] };

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
  | { type: "event"; runId: number; event: RolloutEvent }
  | { type: "model"; runId: number; status: ModelStatus }
  | { type: "human_request"; runId: number; request: HumanRequest }
  | { type: "tokens_described"; runId: number; ids: number[]; texts: string[]; special: boolean[] }
  | { type: "result"; runId: number; result: RolloutResultJson }
  | { type: "failed"; runId: number; error: string };
