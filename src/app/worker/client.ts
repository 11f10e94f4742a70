/** The page's side of the rollout worker: start a run, control it, receive its events. */

import type { RolloutEvent } from "../../core/index.js";
import type { RolloutResultJson } from "../../scenario/result.js";
import type { HumanRequest, ModelSettings, ModelStatus, PageMessage, UserEnvironmentPort, WorkerMessage } from "./protocol.js";

export interface RunHandlers {
  onEvent?: (event: RolloutEvent) => void;
  onModel?: (status: ModelStatus) => void;
  onHumanRequest?: (request: HumanRequest) => void;
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

  /** Asks the worker for token texts in the loaded model's vocabulary; answers arrive through `onTokens`. */
  describeTokens(ids: number[]): void {
    this.worker?.postMessage({ type: "describe_tokens", runId: 0, ids } satisfies PageMessage);
  }

  onTokens(listener: (ids: number[], texts: string[], special: boolean[]) => void): void {
    this.tokenListener = listener;
  }

  run(scenario: unknown, handlers: RunHandlers = {}, modelSettings: ModelSettings = {}, environments: UserEnvironmentPort[] = []): RunHandle {
    const worker = this.ensureWorker();
    const runId = this.nextRunId++;
    const send = (message: PageMessage) => worker.postMessage(message);
    const result = new Promise<RolloutResultJson>((resolve, reject) => {
      this.listeners.set(runId, (message) => {
        if (message.type === "event") handlers.onEvent?.(message.event);
        else if (message.type === "model") handlers.onModel?.(message.status);
        else if (message.type === "human_request") handlers.onHumanRequest?.(message.request);
        else if (message.type === "result" || message.type === "failed") {
          this.listeners.delete(runId);
          if (message.type === "result") resolve(message.result);
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

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(new URL("./rollout-worker.ts", import.meta.url), { type: "module" });
    worker.onmessage = (e: MessageEvent<WorkerMessage>) => {
      const message = e.data;
      if (message.type === "tokens_described") this.tokenListener?.(message.ids, message.texts, message.special);
      else this.listeners.get(message.runId)?.(message);
    };
    // A crashed worker fails every run it held; the next run starts a fresh one.
    worker.onerror = (e) => {
      const error = `the rollout worker crashed: ${e.message || "unknown error"}`;
      for (const [runId, listener] of this.listeners) listener({ type: "failed", runId, error });
      this.listeners.clear();
      worker.terminate();
      this.worker = null;
    };
    this.worker = worker;
    return worker;
  }
}
