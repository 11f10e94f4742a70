/** The page's side of the rollout worker: start a run, control it, receive its events. */

import type { RolloutEvent } from "../../core/index.js";
import type { RolloutResultJson } from "../../scenario/result.js";
import type { DeviceLossAction, DeviceLossInfo } from "../../policy/llm/device-loss.js";
import { setResultText } from "../run/result-text.js";
import { yieldToPage } from "../run/export-slices.js";
import { unpackResult } from "./event-batch.js";
import type { HumanRequest, InjectedFault, ModelSettings, ModelStatus, PageMessage, UserEnvironmentPort, WorkerMessage } from "./protocol.js";

export interface RunHandlers {
  /**
   * Each rollout event, in order. Their messages' `token_ids` and `generation_logprobs` arrive as `Int32Array` and
   * `Float32Array` (the worker's compact transport, ./event-batch.ts): `RunModel.apply` stores them as they are;
   * `plainEvent` gives the core's shape back for any other use.
   */
  onEvent?: (event: RolloutEvent) => void;
  onModel?: (status: ModelStatus) => void;
  onHumanRequest?: (request: HumanRequest) => void;
  /** The run's WebGPU device was lost (the run stops, or goes on on WASM, as `action` says). */
  onDeviceLost?: (loss: DeviceLossInfo, action: DeviceLossAction) => void;
}

export interface RunHandle {
  result: Promise<RolloutResultJson>;
  pause(): void;
  resume(): void;
  step(): void;
  stop(): void;
  answer(requestId: number, text: string): void;
}

export class RolloutWorkerClient {
  private worker: Worker | null = null;
  private nextRunId = 1;
  private readonly listeners = new Map<number, (message: WorkerMessage) => void>();
  private tokenListener: ((ids: number[], texts: string[], special: boolean[]) => void) | null = null;
  /**
   * A worker whose model failed (to load, to generate) or whose WebGPU device was lost is replaced before the next
   * run: transformers.js's realm stays broken after such a failure, and onnxruntime keeps the lost device.
   */
  private retire = false;
  private faultReplies: ((detail: string) => void)[] = [];

  /**
   * The test hook (src/app/faults-debug.ts): crash the worker (an uncaught error in its global scope), close it
   * silently, or lose its WebGPU device. Resolves with what the worker did, for a device loss.
   */
  injectFault(fault: InjectedFault): Promise<string | null> {
    if (!this.worker) return Promise.resolve(null);
    this.worker.postMessage({ type: "debug_fault", runId: 0, fault } satisfies PageMessage);
    if (fault !== "device_lost") return Promise.resolve(null);
    return new Promise((resolve) => this.faultReplies.push(resolve));
  }

  /** Asks the worker for token texts in the loaded model's vocabulary; answers arrive through `onTokens`. */
  describeTokens(ids: number[]): void {
    this.worker?.postMessage({ type: "describe_tokens", runId: 0, ids } satisfies PageMessage);
  }

  onTokens(listener: (ids: number[], texts: string[], special: boolean[]) => void): void {
    this.tokenListener = listener;
  }

  run(scenario: unknown, handlers: RunHandlers = {}, modelSettings: ModelSettings = {}, environments: UserEnvironmentPort[] = []): RunHandle {
    if (this.retire && this.listeners.size === 0 && this.worker) {
      const old = this.worker;
      this.worker = null;
      old.terminate();
    }
    const worker = this.ensureWorker();
    const runId = this.nextRunId++;
    const send = (message: PageMessage) => worker.postMessage(message);
    const result = new Promise<RolloutResultJson>((resolve, reject) => {
      this.listeners.set(runId, (message) => {
        if (message.type === "events") {
          if (handlers.onEvent) for (const event of message.events) handlers.onEvent(event);
        } else if (message.type === "event") handlers.onEvent?.(message.event);
        else if (message.type === "model") handlers.onModel?.(message.status);
        else if (message.type === "human_request") handlers.onHumanRequest?.(message.request);
        else if (message.type === "device_lost") {
          this.retire = true;
          handlers.onDeviceLost?.(message.loss, message.action);
        }
        else if (message.type === "result" || message.type === "failed") {
          this.listeners.delete(runId);
          if (message.type === "result") {
            // Compact messages (plain arrays when read), built a few samples at a time; the JSON text as written.
            const text = message.text;
            void unpackResult(message.result, yieldToPage).then((result) => {
              if (text !== undefined) setResultText(result, text);
              resolve(result);
            }, reject);
          }
          else reject(new Error(message.error));
        }
      });
    });
    worker.postMessage({ type: "run", runId, scenario, modelSettings, environments } satisfies PageMessage, environments.map((e) => e.port));
    return {
      result,
      pause: () => send({ type: "pause", runId }),
      resume: () => send({ type: "resume", runId }),
      step: () => send({ type: "step", runId }),
      stop: () => send({ type: "stop", runId }),
      answer: (requestId, text) => send({ type: "human_response", runId, requestId, text }),
    };
  }

  /** Fails every run the worker held and lets it go; the next run starts a fresh one. */
  private fail(worker: Worker, error: string): void {
    if (this.worker !== worker) return;
    for (const [runId, listener] of this.listeners) listener({ type: "failed", runId, error });
    this.listeners.clear();
    worker.terminate();
    this.worker = null;
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(new URL("./rollout-worker.ts", import.meta.url), { type: "module" });
    this.retire = false;
    const locks = (globalThis.navigator as { locks?: LockManager } | undefined)?.locks;
    worker.onmessage = (e: MessageEvent<WorkerMessage>) => {
      const message = e.data;
      if (message.type === "tokens_described") this.tokenListener?.(message.ids, message.texts, message.special);
      else if (message.type === "retire") this.retire = true;
      else if (message.type === "fault_injected") this.faultReplies.splice(0).forEach((reply) => reply(message.detail));
      else if (message.type === "lock_held") {
        // Granted once the worker's own lock is released: when it has stopped, whatever stopped it.
        void locks?.request(message.name, () => this.fail(worker, "the rollout worker stopped unexpectedly (it was closed or killed)"));
      } else this.listeners.get(message.runId)?.(message);
    };
    // A crashed worker fails every run it held; the next run starts a fresh one.
    worker.onerror = (e) => {
      e.preventDefault();
      this.fail(worker, `the rollout worker crashed: ${e.message || "unknown error"}`);
    };
    if (locks) worker.postMessage({ type: "hold_lock", runId: 0, name: `rollout-lab-worker-${Date.now()}-${Math.random().toString(36).slice(2)}` } satisfies PageMessage);
    this.worker = worker;
    return worker;
  }
}
