/** The page's side of the rollout worker: start a run, control it, receive its events. */

import { fromWireError, LabError, PendingCalls, requestIds } from "../../core/index.js";
import type { RolloutResultJson } from "../../scenario/result.js";
import type { EnvironmentMetrics } from "../../scenario/environment-metrics.js";
import type { CheckSample } from "../../scenario/token-check.js";
import type { PackedEvent } from "../run/compact-messages.js";
import type { DeviceLossAction, DeviceLossInfo } from "../../policy/llm/device-loss.js";
import { setResultText } from "../run/result-text.js";
import { yieldToPage } from "../run/export-slices.js";
import { unpackResult } from "./event-batch.js";
import type {
  CallAnswer,
  EnvironmentHostNews,
  HumanRequest,
  InjectedFault,
  ModelSettings,
  ModelStatus,
  PageMessage,
  TokenCheckAnswer,
  TokenizerFiles,
  UserEnvironmentPort,
  WorkerCalls,
  WorkerMessage,
} from "./protocol.js";

export interface RunHandlers {
  /**
   * Each rollout event, in order. Their messages' `token_ids` and `generation_logprobs` arrive as `Int32Array` and
   * `Float32Array` / `Float64Array` (the worker's compact transport, ./event-batch.ts): `RunModel.apply` stores them
   * as they are; `plainEvent` gives the core's shape back for any other use. The `rollout_end` batch has no
   * `message_log` column (the messages came in their own events).
   */
  onEvent?: (event: PackedEvent) => void;
  onModel?: (status: ModelStatus) => void;
  onHumanRequest?: (request: HumanRequest) => void;
  /** The environments' metrics after the rollout (their `global_post_process_and_metrics`), before the result. */
  onEnvironmentMetrics?: (reports: EnvironmentMetrics[]) => void;
  /** A step of user environment `name` passed its deadline unanswered: its host should be checked. */
  onEnvironmentOverdue?: (name: string) => void;
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
  /** Tells the run's worker what became of a user environment's host it reported overdue. */
  environmentHost(name: string, news: EnvironmentHostNews): void;
}

/** What became of a user environment's host, to the run's worker (a new port goes with the message). */
function postHostNews(connection: Connection, runId: number, name: string, news: EnvironmentHostNews): void {
  connection.post({ type: "environment_host", runId, name, news }, news.outcome === "replaced" ? [news.port] : []);
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

/**
 * The rollout worker is gone: it crashed, was closed or killed, sent what the page could not read, or the page
 * terminated it. Every run and call still waiting on it rejects with this one error.
 */
export class RolloutWorkerGoneError extends LabError {
  override name = "RolloutWorkerGoneError";
  override readonly code = "worker_gone";
}

/** A run's control, sent once the run is posted (before that, it waits with the run). */
type Control = (runId: number) => PageMessage;

/** A run of this client, from `run` until its result or failure. */
interface Run {
  handlers: RunHandlers;
  /** The worker it was posted to and its id there (none yet while it waits for a stopped run to end). */
  connection: Connection | null;
  id: number;
  queued: Control[];
  /** Stop was pressed (the watchdog runs from when the worker has the Stop). */
  stopAsked: boolean;
  stopTimer: ReturnType<typeof setTimeout> | null;
  /** The worker said it read the Stop (it is not stuck in a synchronous call). */
  stopRead: boolean;
  /** What became of its environments' hosts before it was posted (the last news of each, sent after the run). */
  hostNews: Map<string, EnvironmentHostNews>;
}

/** One rollout worker, and what waits on it: its runs (answered by their result), and the page's other calls. */
class Connection {
  /** Each run posted to this worker and not ended, answered by its `result` message (or rejected with `failed`). */
  readonly runs: PendingCalls<Extract<WorkerMessage, { type: "result" }>, Run>;
  readonly calls = new PendingCalls<CallAnswer>();
  /**
   * This worker's model failed (to load, to generate) or its WebGPU device was lost: it is replaced before the next
   * run (transformers.js's realm stays broken after such a failure, and onnxruntime keeps the lost device).
   */
  retire = false;
  gone = false;

  constructor(
    readonly worker: Worker,
    runIds: () => number,
  ) {
    this.runs = new PendingCalls(runIds);
  }

  post(message: PageMessage, transfer: Transferable[] = []): void {
    if (!this.gone) this.worker.postMessage(message, transfer);
  }

  /** A call to the worker: resolves with its answer, or rejects with its error (rebuilt by name) or the worker's end. */
  call<K extends keyof WorkerCalls>(type: K, message: (id: number) => Extract<PageMessage, { type: K; id: number }>): Promise<CallAnswer<K>> {
    const { id, promise } = this.calls.open(undefined);
    this.post(message(id));
    return promise.then((answer) => {
      if (answer.type !== expectedAnswer[type]) throw new LabError(`the rollout worker answered a ${type} call with ${answer.type}`);
      return answer as CallAnswer<K>;
    });
  }
}

const expectedAnswer: WorkerCalls = { describe_tokens: "tokens_described", check_tokens: "tokens_checked", load_tokenizer: "tokenizer_loaded", hold_lock: "lock_held", debug_fault: "fault_injected" };

export class RolloutWorkerClient {
  /** The worker new runs go to (null until the first run, and after it was gone). */
  private connection: Connection | null = null;
  /** Run ids, unique across the workers this client starts. */
  private readonly runIds = requestIds();
  /** Every run not ended, whether posted or waiting. */
  private readonly live = new Set<Run>();
  /** Runs waiting to start until the stopped runs of the current worker have ended (or it was terminated). */
  private waiting: (() => void)[] = [];
  readonly stopGraceMs: number;
  private tokenListener: ((model: string, ids: number[], texts: string[], special: boolean[]) => void) | null = null;

  constructor(options: RolloutWorkerClientOptions = {}) {
    this.stopGraceMs = options.stopGraceMs ?? DEFAULT_STOP_GRACE_MS;
  }

  /**
   * The test hook (src/app/faults-debug.ts): crash the worker (an uncaught error in its global scope), close it
   * silently, keep it busy in one synchronous loop for `ms` (a hang), lose its WebGPU device, or hold its model's
   * next generation call before it returns (`hold_generation`; `generation_held` resolves once one is held,
   * `release_generation` lets it return). Resolves with what the worker did, for a device loss and the hold (null
   * if the worker ends first); at once with null for the others. Rejects with the worker's error if it failed.
   */
  injectFault(fault: InjectedFault, ms?: number): Promise<string | null> {
    const connection = this.connection;
    if (!connection) return Promise.resolve(null);
    const time = ms !== undefined ? { ms } : {};
    if (fault === "crash" || fault === "close" || fault === "hang") {
      connection.post({ type: "debug_fault", fault, ...time });
      return Promise.resolve(null);
    }
    return connection.call("debug_fault", (id) => ({ type: "debug_fault", id, fault, ...time })).then(
      (answer) => answer.detail,
      (e: unknown) => {
        if (e instanceof RolloutWorkerGoneError) return null;
        throw e;
      },
    );
  }

  /**
   * Asks the worker for token texts in `model`'s vocabulary; answers arrive through `onTokens` (none when that
   * tokenizer is not loaded, or the worker ends first).
   */
  describeTokens(ids: number[], model: string): void {
    const connection = this.connection;
    if (!connection) return;
    connection.call("describe_tokens", (id) => ({ type: "describe_tokens", id, ids, model })).then(
      (answer) => this.tokenListener?.(model, ids, answer.texts, answer.special),
      () => {},
    );
  }

  /**
   * The token consistency check of `sample` in the worker, with the tokenizer of `model` if that is the model it has
   * loaded. No worker yet (no run in this page): not loaded, and none is started for it. (A bound function: views
   * take it as a prop.)
   */
  readonly checkTokens = (sample: CheckSample, model: string): Promise<TokenCheckAnswer> => {
    const connection = this.connection;
    if (!connection) return Promise.resolve({ kind: "not_loaded", loaded: null });
    return connection.call("check_tokens", (id) => ({ type: "check_tokens", id, sample, model })).then((answer) => answer.answer);
  };

  /**
   * Loads `model`'s tokenizer alone in the worker (starting one if there is none), for `checkTokens` and
   * `describeTokens`; `from`: the hub to ask, or the picked folder's files. A bound function.
   */
  readonly loadTokenizer = (model: string, from: TokenizerFiles = {}): Promise<void> =>
    this.ensureConnection()
      .call("load_tokenizer", (id) => ({ type: "load_tokenizer", id, model, ...from }))
      .then(() => undefined);

  onTokens(listener: (model: string, ids: number[], texts: string[], special: boolean[]) => void): void {
    this.tokenListener = listener;
  }

  run(scenario: unknown, handlers: RunHandlers = {}, modelSettings: ModelSettings = {}, environments: UserEnvironmentPort[] = []): RunHandle {
    const run: Run = { handlers, connection: null, id: 0, queued: [], stopAsked: false, stopTimer: null, stopRead: false, hostNews: new Map() };
    this.live.add(run);
    // Until the run is posted (it waits while a stopped run of the current worker has not ended), its controls queue.
    const send = (control: Control) => (run.connection ? run.connection.post(control(run.id)) : run.queued.push(control));
    let settle!: { resolve: (result: RolloutResultJson) => void; reject: (error: unknown) => void };
    const result = new Promise<RolloutResultJson>((resolve, reject) => (settle = { resolve, reject }));
    /** `direct`: called from `run` (a run that cannot be posted throws there); else the run fails with why. */
    const start = (direct: boolean) => {
      const old = this.connection;
      if (old?.retire && old.runs.size === 0) {
        this.close(old, new RolloutWorkerGoneError("the rollout worker was retired (its model failed or its WebGPU device was lost)"));
      }
      const connection = this.ensureConnection();
      const { id, promise } = connection.runs.open(run);
      run.connection = connection;
      run.id = id;
      let posted = false;
      promise.then(
        (message) => {
          this.ended(run);
          // Compact messages (plain arrays when read), built a few samples at a time; the JSON text as written.
          const text = message.text;
          void unpackResult(message.result, yieldToPage).then((result) => {
            if (text !== undefined) setResultText(result, text);
            settle.resolve(result);
          }, settle.reject);
        },
        (e: unknown) => {
          this.ended(run);
          if (posted || !direct) settle.reject(e);
        },
      );
      try {
        connection.post({ type: "run", runId: id, scenario, modelSettings, environments }, environments.map((e) => e.port));
      } catch (e) {
        // A scenario that cannot be copied to the worker, say: the run never started.
        connection.runs.reject(id, e instanceof Error ? e : new Error(String(e)));
        if (direct) throw e;
        return;
      }
      posted = true;
      // A host restarted while the run waited to start: its port to the old one is replaced at once.
      for (const [name, news] of run.hostNews) postHostNews(connection, id, name, news);
      run.hostNews.clear();
      for (const control of run.queued.splice(0)) connection.post(control(id));
      if (run.stopAsked) this.watchStop(run);
    };
    // A worker with a stopped run that has not ended may be stuck: this run starts once that run ended (the same
    // worker, its model kept) or the watchdog terminated the worker (a fresh one).
    if (this.connection && this.stopping(this.connection)) this.waiting.push(() => start(false));
    else start(true);
    return {
      result,
      pause: () => send((runId) => ({ type: "pause", runId })),
      resume: () => send((runId) => ({ type: "resume", runId })),
      step: () => send((runId) => ({ type: "step", runId })),
      stop: () => {
        send((runId) => ({ type: "stop", runId }));
        // The watchdog runs from when the worker has the Stop (a run still waiting to start gets it with its start).
        run.stopAsked = true;
        if (run.connection) this.watchStop(run);
      },
      answer: (requestId, text) => send((runId) => ({ type: "human_response", runId, requestId, text })),
      environmentHost: (name, news) => {
        if (!this.live.has(run)) {
          if (news.outcome === "replaced") news.port.close();
        } else if (run.connection) postHostNews(run.connection, run.id, name, news);
        else {
          // Not posted yet (it waits for a stopped run to end): the news goes with it. A port it replaces is closed;
          // "answering" after a restart means the new host answers, and the run still needs its port to it.
          const before = run.hostNews.get(name);
          if (before?.outcome === "replaced" && news.outcome === "answering") return;
          if (before?.outcome === "replaced") before.port.close();
          run.hostNews.set(name, news);
        }
      },
    };
  }

  /** Whether a run of `connection` was stopped and has not ended. */
  private stopping(connection: Connection): boolean {
    for (const run of this.live) if (run.connection === connection && run.stopTimer !== null) return true;
    return false;
  }

  /**
   * The watchdog of a stopped run: the worker reads Stop between turns, so one stuck inside a long synchronous call
   * never does. If the run has not ended `stopGraceMs` after Stop, the worker is terminated: the run fails with a
   * `StopTimeoutError` (what finished is kept by the page, as for a crash), and the next run gets a fresh worker.
   */
  private watchStop(run: Run): void {
    if (run.stopTimer !== null || !this.live.has(run)) return;
    run.stopTimer = setTimeout(() => {
      const connection = run.connection;
      if (!connection || !this.live.has(run)) return;
      connection.runs.reject(run.id, new StopTimeoutError(this.stopGraceMs, run.stopRead));
      this.close(connection, new RolloutWorkerGoneError(`the rollout worker was terminated: a stopped run did not end within ${seconds(this.stopGraceMs)}`));
    }, this.stopGraceMs);
  }

  /** The run has ended (its result or failure arrived, or it was failed here): forget it; start runs that waited. */
  private ended(run: Run): void {
    if (!this.live.delete(run)) return;
    if (run.stopTimer !== null) clearTimeout(run.stopTimer);
    run.stopTimer = null;
    if (this.waiting.length && !(this.connection && this.stopping(this.connection))) for (const start of this.waiting.splice(0)) start();
  }

  /**
   * The worker is gone (or let go here): it is terminated, and every run and call waiting on it rejects with
   * `error` (a run the watchdog failed first keeps its own error); the next run starts a fresh worker.
   */
  private close(connection: Connection, error: RolloutWorkerGoneError): void {
    if (connection.gone) return;
    connection.gone = true;
    const { worker } = connection;
    worker.onmessage = null;
    worker.onerror = null;
    worker.onmessageerror = null;
    worker.terminate();
    if (this.connection === connection) this.connection = null;
    connection.runs.rejectAll(error);
    connection.calls.rejectAll(error);
  }

  private ensureConnection(): Connection {
    if (this.connection) return this.connection;
    const worker = new Worker(new URL("./rollout-worker.ts", import.meta.url), { type: "module" });
    const connection = new Connection(worker, this.runIds);
    worker.onmessage = (e: MessageEvent<WorkerMessage>) => this.receive(connection, e.data);
    // A crashed worker fails every run and call it held; the next run starts a fresh one.
    worker.onerror = (e) => {
      e.preventDefault();
      this.close(connection, new RolloutWorkerGoneError(`the rollout worker crashed: ${e.message || "unknown error"}`));
    };
    // A message that cannot be read may be a run's result: nothing would ever answer that run.
    worker.onmessageerror = () =>
      this.close(connection, new RolloutWorkerGoneError("the rollout worker sent a message the page could not read; it was terminated"));
    this.connection = connection;
    const locks = (globalThis.navigator as { locks?: LockManager } | undefined)?.locks;
    if (locks) {
      const name = `rollout-lab-worker-${Date.now()}-${Math.random().toString(36).slice(2)}`;
      // Once the worker holds it: the page's request is granted when the worker's lock is released, when it has
      // stopped, whatever stopped it.
      connection.call("hold_lock", (id) => ({ type: "hold_lock", id, name })).then(
        () =>
          void locks.request(name, () =>
            this.close(connection, new RolloutWorkerGoneError("the rollout worker stopped unexpectedly (it was closed or killed)")),
          ),
        () => {},
      );
    }
    return connection;
  }

  private receive(connection: Connection, message: WorkerMessage): void {
    if (connection.gone) return;
    if (message.type === "tokens_described" || message.type === "tokens_checked" || message.type === "tokenizer_loaded" || message.type === "lock_held" || message.type === "fault_injected") {
      connection.calls.resolve(message.id, message);
      return;
    }
    if (message.type === "call_failed") {
      connection.calls.reject(message.id, fromWireError(message.error));
      return;
    }
    if (message.type === "retire") {
      connection.retire = true;
      return;
    }
    if (message.type === "result") {
      connection.runs.resolve(message.runId, message);
      return;
    }
    if (message.type === "failed") {
      connection.runs.reject(message.runId, fromWireError(message.error));
      return;
    }
    const run = connection.runs.extra(message.runId);
    if (!run) return;
    const { handlers } = run;
    if (message.type === "events") {
      if (handlers.onEvent) for (const event of message.events) handlers.onEvent(event);
    } else if (message.type === "model") handlers.onModel?.(message.status);
    else if (message.type === "stop_received") run.stopRead = true;
    else if (message.type === "human_request") handlers.onHumanRequest?.(message.request);
    else if (message.type === "environment_metrics") handlers.onEnvironmentMetrics?.(message.reports);
    else if (message.type === "environment_overdue") handlers.onEnvironmentOverdue?.(message.name);
    else {
      connection.retire = true;
      handlers.onDeviceLost?.(message.loss, message.action);
    }
  }
}
