/** The page's side of the rollout worker: start a run, control it, receive its events. */

import { fromWireError, toWireError, type RolloutEvent, LabError } from "../../core/index.js";
import type { RolloutResultJson } from "../../scenario/result.js";
import type { DeviceLossAction, DeviceLossInfo } from "../../policy/llm/device-loss.js";
import { setResultText } from "../run/result-text.js";
import { yieldToPage } from "../run/export-slices.js";
import { unpackResult } from "./event-batch.js";
import type { HumanRequest, InjectedFault, ModelSettings, ModelStatus, PageMessage, UserEnvironmentPort, WorkerMessage } from "./protocol.js";

export interface RunHandlers {
  /**
   * Each rollout event, in order. Their messages' `token_ids` and `generation_logprobs` arrive as `Int32Array` and
   * `Float32Array` / `Float64Array` (the worker's compact transport, ./event-batch.ts): `RunModel.apply` stores them
   * as they are; `plainEvent` gives the core's shape back for any other use. The `rollout_end` batch has no
   * `message_log` column (the messages came in their own events).
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

/** How long a stopped run may take to end before its worker is terminated (`RolloutWorkerClient`'s default). */
export const DEFAULT_STOP_GRACE_MS = 3000;

export interface RolloutWorkerClientOptions {
  /**
   * After Stop, how long the run may take to end before the worker is terminated (ms; default
   * `DEFAULT_STOP_GRACE_MS`). Stop is a message the worker reads between turns: a worker stuck inside one long
   * synchronous call (a WASM generate call, a user's busy loop) never reads it.
   */
  stopGraceMs?: number;
}

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(3))} s`;

/**
 * The error of a stopped run whose worker did not end it within the grace period and was terminated. `responsive`:
 * the worker had read the Stop (so it was not stuck, only waiting on something Stop cannot cut short, such as a
 * model load); otherwise it never read it (busy in one long synchronous call).
 */
export class StopTimeoutError extends LabError {
  override name = "StopTimeoutError";
  override readonly code = "stop_timeout";
  constructor(
    readonly graceMs: number,
    readonly responsive = false,
  ) {
    super(
      responsive
        ? `the run did not end within ${seconds(graceMs)} of Stop (the rollout worker was waiting on work Stop cannot interrupt, such as a model load); it was terminated — finished samples are kept`
        : `the rollout worker did not stop within ${seconds(graceMs)} (busy in one long call); it was terminated — finished samples are kept`,
    );
  }
}

export class RolloutWorkerClient {
  private worker: Worker | null = null;
  private nextRunId = 1;
  private readonly listeners = new Map<number, (message: WorkerMessage) => void>();
  /** The worker each run was posted to (a run waiting for a stopped one to end has none yet). */
  private readonly runWorkers = new Map<number, Worker>();
  /** How each run's result is rejected (the watchdog ends a run with a `StopTimeoutError`). */
  private readonly rejects = new Map<number, (error: Error) => void>();
  /** Runs stopped and not ended yet: the watchdog's timer of each. */
  private readonly stopTimers = new Map<number, ReturnType<typeof setTimeout>>();
  /** Stopped runs whose worker said it read the Stop (it is not stuck in a synchronous call). */
  private readonly stopsRead = new Set<number>();
  /** Runs waiting to start until the stopped runs of the current worker have ended (or it was terminated). */
  private waiting: (() => void)[] = [];
  readonly stopGraceMs: number;
  private tokenListener: ((ids: number[], texts: string[], special: boolean[]) => void) | null = null;
  /**
   * A worker whose model failed (to load, to generate) or whose WebGPU device was lost is replaced before the next
   * run: transformers.js's realm stays broken after such a failure, and onnxruntime keeps the lost device.
   */
  private retire = false;
  /** The test hook's faults waiting for the worker's answer, by reply id. */
  private readonly faultReplies = new Map<number, { worker: Worker; resolve: (detail: string | null) => void }>();
  private nextFaultReply = 1;

  constructor(options: RolloutWorkerClientOptions = {}) {
    this.stopGraceMs = options.stopGraceMs ?? DEFAULT_STOP_GRACE_MS;
  }

  /**
   * The test hook (src/app/faults-debug.ts): crash the worker (an uncaught error in its global scope), close it
   * silently, keep it busy in one synchronous loop for `ms` (a hang), lose its WebGPU device, or hold its model's
   * next generation call before it returns (`hold_generation`; `generation_held` resolves once one is held,
   * `release_generation` lets it return). Resolves with what the worker did, for a device loss and the hold (null
   * if the worker ends first); at once with null for the others.
   */
  injectFault(fault: InjectedFault, ms?: number): Promise<string | null> {
    if (!this.worker) return Promise.resolve(null);
    const message = { type: "debug_fault", runId: 0, fault, ...(ms !== undefined ? { ms } : {}) } satisfies PageMessage;
    if (fault === "crash" || fault === "close" || fault === "hang") {
      this.worker.postMessage(message);
      return Promise.resolve(null);
    }
    const replyId = this.nextFaultReply++;
    const worker = this.worker;
    return new Promise((resolve) => {
      this.faultReplies.set(replyId, { worker, resolve });
      worker.postMessage({ ...message, replyId } satisfies PageMessage);
    });
  }

  /** Asks the worker for token texts in the loaded model's vocabulary; answers arrive through `onTokens`. */
  describeTokens(ids: number[]): void {
    this.worker?.postMessage({ type: "describe_tokens", runId: 0, ids } satisfies PageMessage);
  }

  onTokens(listener: (ids: number[], texts: string[], special: boolean[]) => void): void {
    this.tokenListener = listener;
  }

  run(scenario: unknown, handlers: RunHandlers = {}, modelSettings: ModelSettings = {}, environments: UserEnvironmentPort[] = []): RunHandle {
    const runId = this.nextRunId++;
    // Until the run is posted (it waits while a stopped run of the current worker has not ended), its controls queue.
    let worker: Worker | null = null;
    const queued: PageMessage[] = [];
    const send = (message: PageMessage) => (worker ? worker.postMessage(message) : queued.push(message));
    let stopAsked = false;
    const result = new Promise<RolloutResultJson>((resolve, reject) => {
      this.rejects.set(runId, reject);
      this.listeners.set(runId, (message) => {
        if (message.type === "events") {
          if (handlers.onEvent) for (const event of message.events) handlers.onEvent(event);
        } else if (message.type === "model") handlers.onModel?.(message.status);
        else if (message.type === "stop_received") this.stopsRead.add(runId);
        else if (message.type === "human_request") handlers.onHumanRequest?.(message.request);
        else if (message.type === "device_lost") {
          this.retire = true;
          handlers.onDeviceLost?.(message.loss, message.action);
        }
        else if (message.type === "result" || message.type === "failed") {
          this.ended(runId);
          if (message.type === "result") {
            // Compact messages (plain arrays when read), built a few samples at a time; the JSON text as written.
            const text = message.text;
            void unpackResult(message.result, yieldToPage).then((result) => {
              if (text !== undefined) setResultText(result, text);
              resolve(result);
            }, reject);
          }
          else reject(fromWireError(message.error));
        }
      });
    });
    const start = () => {
      if (!this.listeners.has(runId)) return;
      if (this.retire && this.worker && !this.busy(this.worker)) {
        const old = this.worker;
        this.worker = null;
        old.terminate();
        this.unanswered(old);
      }
      const w = this.ensureWorker();
      worker = w;
      this.runWorkers.set(runId, w);
      w.postMessage({ type: "run", runId, scenario, modelSettings, environments } satisfies PageMessage, environments.map((e) => e.port));
      for (const message of queued.splice(0)) w.postMessage(message);
      if (stopAsked) this.watchStop(runId);
    };
    // A worker with a stopped run that has not ended may be stuck: this run starts once that run ended (the same
    // worker, its model kept) or the watchdog terminated the worker (a fresh one).
    if (this.worker && this.stopping(this.worker)) this.waiting.push(start);
    else start();
    return {
      result,
      pause: () => send({ type: "pause", runId }),
      resume: () => send({ type: "resume", runId }),
      step: () => send({ type: "step", runId }),
      stop: () => {
        send({ type: "stop", runId });
        // The watchdog runs from when the worker has the Stop (a run still waiting to start gets it with its start).
        if (worker) this.watchStop(runId);
        else stopAsked = true;
      },
      answer: (requestId, text) => send({ type: "human_response", runId, requestId, text }),
    };
  }

  /** Whether a run was posted to `worker` and has not ended. */
  private busy(worker: Worker): boolean {
    for (const w of this.runWorkers.values()) if (w === worker) return true;
    return false;
  }

  /** Whether a run of `worker` was stopped and has not ended. */
  private stopping(worker: Worker): boolean {
    for (const runId of this.stopTimers.keys()) if (this.runWorkers.get(runId) === worker) return true;
    return false;
  }

  /**
   * The watchdog of a stopped run: the worker reads Stop between turns, so one stuck inside a long synchronous call
   * never does. If the run has not ended `stopGraceMs` after Stop, the worker is terminated: the run fails with a
   * `StopTimeoutError` (what finished is kept by the page, as for a crash), and the next run gets a fresh worker.
   */
  private watchStop(runId: number): void {
    if (this.stopTimers.has(runId) || !this.listeners.has(runId)) return;
    this.stopTimers.set(
      runId,
      setTimeout(() => {
        this.stopTimers.delete(runId);
        const worker = this.runWorkers.get(runId);
        if (!worker || !this.listeners.has(runId)) return;
        const timedOut = new StopTimeoutError(this.stopGraceMs, this.stopsRead.has(runId));
        this.fail(worker, `the rollout worker was terminated: a stopped run did not end within ${seconds(this.stopGraceMs)}`, new Map([[runId, timedOut]]));
      }, this.stopGraceMs),
    );
  }

  /** The worker is gone: the test hook's faults it had not answered resolve with null. */
  private unanswered(worker: Worker): void {
    for (const [id, reply] of this.faultReplies) {
      if (reply.worker !== worker) continue;
      this.faultReplies.delete(id);
      reply.resolve(null);
    }
  }

  /** The run has ended (its result or failure arrived, or it was failed here): forget it; start runs that waited. */
  private ended(runId: number): void {
    this.listeners.delete(runId);
    this.rejects.delete(runId);
    this.runWorkers.delete(runId);
    const timer = this.stopTimers.get(runId);
    if (timer !== undefined) clearTimeout(timer);
    this.stopTimers.delete(runId);
    this.stopsRead.delete(runId);
    if (this.waiting.length && !(this.worker && this.stopping(this.worker))) for (const start of this.waiting.splice(0)) start();
  }

  /**
   * Fails every run the worker held (with `error`, or the run's own error in `errors`) and lets it go; the next run
   * starts a fresh one.
   */
  private fail(worker: Worker, error: string, errors?: Map<number, Error>): void {
    if (this.worker !== worker) return;
    worker.terminate();
    this.worker = null;
    this.unanswered(worker);
    const held = [...this.runWorkers].filter(([, w]) => w === worker).map(([runId]) => runId);
    for (const runId of held) {
      const own = errors?.get(runId);
      const reject = this.rejects.get(runId);
      if (own) {
        this.ended(runId);
        reject?.(own);
      } else this.listeners.get(runId)?.({ type: "failed", runId, error: toWireError(new Error(error)) });
    }
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
      else if (message.type === "fault_injected") {
        const reply = message.replyId === undefined ? undefined : this.faultReplies.get(message.replyId);
        this.faultReplies.delete(message.replyId!);
        reply?.resolve(message.detail);
      }
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
