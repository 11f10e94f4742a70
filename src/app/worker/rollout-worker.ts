/// <reference lib="webworker" />
/**
 * The rollout worker: runs a whole scenario (policy, environments, rollout loop) off the page's main thread and
 * streams its events back, so the page stays responsive while tokens arrive one by one.
 */

import { abortError, LabError, PauseController, PendingCalls, requestIds, toWireError, type TokenizerInterface } from "../../core/index.js";
import { environmentLookup } from "../../envs/index.js";
import { connectEnvironment, type PortConnection, type PortLike } from "../../envs/user/port.js";
import { TextPolicy } from "../../policy/text-policy.js";
import { browserPolicyTokenizer } from "../../policy/llm/browser-tokenizer.js";
import { DeviceLossGuard, describeDeviceLoss, type DeviceLossInfo } from "../../policy/llm/device-loss.js";
import { browserModelPolicy, describeTokens, injectDeviceLoss, loadedTokenizer, loadTokenizerOnly, onDeviceLost } from "../../policy/llm/worker.js";
import { tokenizerVocabSize } from "../../policy/llm/vocab-size.js";
import { ServerPolicy } from "../../policy/server/index.js";
import { answerTokenCheck } from "./token-check-request.js";
import { runScenario } from "../../scenario/run.js";
import { parseScenario } from "../../scenario/schema.js";
import { forkPolicy } from "../../policy/fork-policy.js";
import type { CallAnswer, InjectedFault, ModelSettings, PageMessage, UnansweredFault, UserEnvironmentPort, WorkerMessage } from "./protocol.js";
import { RemoteModelPolicy } from "./remote-model.js";
import { EventBatcher, packResult } from "./event-batch.js";
import { GenerationHold } from "./generation-hold.js";

declare const self: DedicatedWorkerGlobalScope;

/**
 * Onnxruntime's WASM work resolves as microtasks, so a worker busy with a rollout never gets to its message queue
 * on its own: each turn first yields to it, so Pause, Step and Stop take effect at the next turn.
 */
class YieldingPauseController extends PauseController {
  override async wait(signal?: AbortSignal): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 0));
    return super.wait(signal);
  }
}

interface ActiveRun {
  controller: AbortController;
  pause: PauseController;
  /** Human turns waiting for the page's answer (`human_response`), by request id. */
  waiting: PendingCalls<string>;
  /** Why the run stopped early, when something other than the user stopped it (a lost WebGPU device). */
  stoppedBy?: string;
  /** Its user environments' connections, by name: the page may restart a host under them (`environment_host`). */
  environments: Map<string, PortConnection>;
}

/** The human turns' request ids, unique across this worker's runs. */
const humanRequestIds = requestIds();

/** The human policy: each turn's text comes from the person at the page, tokenized with the scenario's tokenizer. */
function humanPolicy(runId: number, active: ActiveRun, tokenizer: TokenizerInterface): TextPolicy {
  return new TextPolicy(tokenizer, async ({ sampleId, turn, promptText, stopStrings }, signal) => {
    const { id: requestId, promise } = active.waiting.open(undefined);
    const cancelled = () => active.waiting.reject(requestId, abortError());
    if (signal?.aborted) cancelled();
    else signal?.addEventListener("abort", cancelled, { once: true });
    post({ type: "human_request", runId, request: { requestId, sample: sampleId, turn, contextTail: promptText.slice(-1500), stopStrings } });
    try {
      return await promise;
    } finally {
      signal?.removeEventListener("abort", cancelled);
    }
  });
}

const runs = new Map<number, ActiveRun>();
// Events go out in batches, their numbers in transferred typed arrays (./event-batch.ts); any other message first
// sends the events queued before it.
const events = new EventBatcher((runId, batch, transfer) => self.postMessage({ type: "events", runId, events: batch } satisfies WorkerMessage, transfer));
const post = (message: WorkerMessage) => {
  events.flush();
  self.postMessage(message);
};

/** Answers the page's call `id` with what `answer` gives, or with its error (a `WireError`) if it throws or rejects. */
function answerCall(id: number, answer: () => DistributiveOmit<CallAnswer, "id"> | Promise<DistributiveOmit<CallAnswer, "id">>): void {
  const failed = (e: unknown) => post({ type: "call_failed", id, error: toWireError(e) });
  let value;
  try {
    value = answer();
  } catch (e) {
    failed(e);
    return;
  }
  void Promise.resolve(value).then((answered) => post({ ...answered, id } as CallAnswer), failed);
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

self.onmessage = (e: MessageEvent<PageMessage>) => {
  const message = e.data;
  if (message.type === "run") {
    void run(message.runId, message.scenario, message.modelSettings ?? {}, message.environments ?? []);
    return;
  }
  if (message.type === "hold_lock") {
    // Held until this worker ends, whatever ends it: the page's own request for it is granted then.
    answerCall(message.id, () => {
      const locks = navigator.locks as LockManager | undefined;
      if (!locks) throw new LabError("this worker has no Web Locks");
      return new Promise((held) => {
        void locks.request(message.name, () => {
          held({ type: "lock_held" });
          return new Promise<never>(() => {});
        });
      });
    });
    return;
  }
  if (message.type === "debug_fault") {
    if ("id" in message) answerCall(message.id, () => answeredFault(message.fault));
    else injectFault(message.fault, message.ms);
    return;
  }
  if (message.type === "describe_tokens") {
    answerCall(message.id, () => {
      const described = describeTokens(message.ids, message.model);
      if (!described) throw new LabError(`the tokenizer of '${message.model}' is not loaded in the rollout worker`);
      return { type: "tokens_described", ...described };
    });
    return;
  }
  if (message.type === "check_tokens") {
    answerCall(message.id, () => ({ type: "tokens_checked", answer: answerTokenCheck(message.sample, message.model, loadedTokenizer(message.model)) }));
    return;
  }
  if (message.type === "load_tokenizer") {
    answerCall(message.id, () => loadTokenizerOnly(message.model, message).then(() => ({ type: "tokenizer_loaded" as const })));
    return;
  }
  const active = runs.get(message.runId);
  if (!active) {
    // A host restarted as its run ended: the port to the new one is not needed.
    if (message.type === "environment_host" && message.news.outcome === "replaced") message.news.port.close();
    return;
  }
  if (message.type === "human_response") {
    active.waiting.resolve(message.requestId, message.text);
    return;
  }
  if (message.type === "environment_host") {
    const connection = active.environments.get(message.name);
    const news = message.news;
    if (news.outcome === "answering") connection?.resume();
    else if (news.outcome === "replaced") {
      if (connection) connection.replacePort(news.port as unknown as PortLike, news.why);
      else news.port.close();
    }
    else connection?.fail(news.why);
    return;
  }
  if (message.type === "pause") active.pause.pause();
  else if (message.type === "resume") active.pause.resume();
  else if (message.type === "step") active.pause.step();
  else if (message.type === "stop") {
    active.controller.abort();
    post({ type: "stop_received", runId: message.runId });
  }
};

/** The test hook's hold on the runs' model generation (only runs with `holdableGeneration` are wrapped in it). */
const generationHold = new GenerationHold();

/**
 * The test hook's faults (sent only by src/app/faults-debug.ts, which exists only under `?faults=1`) that the worker
 * cannot answer: it crashes, closes, or is busy in one long loop.
 */
function injectFault(fault: UnansweredFault, ms = 60_000): void {
  if (fault === "hang") {
    // One long synchronous call, as a WASM generate call or a user's busy loop would be: nothing else of this worker
    // runs meanwhile, its message queue included (Stop is not read; the page's watchdog terminates it).
    const end = Date.now() + ms;
    while (Date.now() < end) {
      // busy
    }
  } else if (fault === "crash") {
    // An uncaught error in the worker's global scope, as a bug or a runtime abort would throw.
    setTimeout(() => {
      throw new Error("injected fault: the rollout worker crashed (test hook)");
    });
  } else {
    self.close();
  }
}

/** The test hook's faults that the worker answers: what it did. */
async function answeredFault(fault: Exclude<InjectedFault, UnansweredFault>): Promise<{ type: "fault_injected"; detail: string }> {
  const answer = (detail: string) => ({ type: "fault_injected" as const, detail });
  if (fault === "hold_generation") {
    generationHold.arm();
    return answer("armed");
  }
  if (fault === "generation_held") {
    await generationHold.whenHeld();
    return answer("held");
  }
  if (fault === "release_generation") return answer(generationHold.release() ? "released" : "none held");
  return answer(injectDeviceLoss());
}

/**
 * The most samples a run in the page may have: the page keeps every sample's transcript (about 100 KB a sample of
 * 20 turns, `bench/results/memory.json`), and a tab that runs out of memory is killed with everything in it. 64 KiB
 * a sample at the least, in the 2 GiB a tab can count on, as the Node commands reckon from their heap.
 */
const PAGE_SAMPLE_LIMIT = {
  max: 32_768,
  why: "a run in the page holds at most 32768 (64 KiB a sample at the least, in the 2 GiB a browser tab can count on); run it headless (npm run rollout) or split the dataset into several runs",
};

async function run(runId: number, value: unknown, settings: ModelSettings, userEnvironments: UserEnvironmentPort[]): Promise<void> {
  const active: ActiveRun = { controller: new AbortController(), pause: new YieldingPauseController(), waiting: new PendingCalls(humanRequestIds), environments: new Map() };
  // Paused before the first turn (the test hook): whatever the order in which later messages arrive.
  if (settings.startPaused) active.pause.pause();
  runs.set(runId, active);
  const guards: DeviceLossGuard[] = [];
  let modelLoading = false;
  try {
    const scenario = parseScenario(value);
    // User environments run in their own host Workers; this run reaches each through its port.
    // A step that passes its deadline unanswered: the page checks that host (and restarts it if it is stuck).
    for (const e of userEnvironments) {
      const name = e.description.name;
      active.environments.set(name, connectEnvironment(e.port as unknown as PortLike, e.description, { onOverdue: () => post({ type: "environment_overdue", runId, name }) }));
    }
    const environments = environmentLookup([...active.environments.values()].map((c) => c.environment));
    const result = await runScenario(scenario, {
      environments,
      sampleLimit: PAGE_SAMPLE_LIMIT,
      signal: active.controller.signal,
      pause: active.pause,
      onEvent: (event) => events.push(runId, event),
      onEnvironmentMetrics: (reports) => post({ type: "environment_metrics", runId, reports }),
      loadFile: async (name) => {
        const text = settings.files?.[name];
        if (text === undefined) throw new Error(`no file named '${name}' was given to the lab (pick it in the set-up)`);
        return text;
      },
      ...(settings.human ? { policyOverride: (tokenizer: TokenizerInterface) => ({ generation: humanPolicy(runId, active, tokenizer), tokenizer }) } : {}),
      // The scenario's `tokenizer` for the text policies: a built-in's from the site's models folder, a hub id's from the hub.
      textTokenizer: (spec) => browserPolicyTokenizer({ tokenizer: spec, ...(settings.remoteHost ? { remoteHost: settings.remoteHost } : {}) }),
      ...(settings.fork ? { wrapPolicy: (policy) => forkPolicy(policy, settings.fork!) } : {}),
      // An inference server: the page sends it the prompts (a shared link asks first: ../link.ts); its tokenizer is
      // loaded here as a text policy's is.
      serverPolicy: async (spec) => {
        if (spec.api_key_env !== undefined) {
          throw new LabError(
            `policy.api_key_env: the page has no environment variables to read ${spec.api_key_env} from; run the scenario headless (npm run rollout), or serve the API without a key to the page`,
          );
        }
        const name = spec.tokenizer ?? spec.model;
        let tokenizer: TokenizerInterface;
        try {
          tokenizer = await browserPolicyTokenizer({ tokenizer: name, ...(settings.remoteHost ? { remoteHost: settings.remoteHost } : {}) });
        } catch (e) {
          const field = spec.tokenizer === undefined ? "model" : "tokenizer";
          throw new LabError(`policy.${field}: the server policy's tokenizer: ${(e as Error).message}${field === "model" ? " (name the tokenizer's model id in policy.tokenizer)" : ""}`);
        }
        const policy = new ServerPolicy(spec, { tokenizer, vocabSize: tokenizerVocabSize(tokenizer) });
        return { generation: policy, tokenizer, metrics: () => policy.metrics() };
      },
      modelPolicy: async (spec) => {
        const device = spec.device === "cpu" ? "wasm" : spec.device;
        post({ type: "model", runId, status: { phase: "loading", model: spec.model } });
        const modelSpec = {
          ...spec,
          device,
          ...(settings.remoteHost ? { remoteHost: settings.remoteHost } : {}),
          ...(settings.localFiles ? { localFiles: new Map(settings.localFiles.map((f) => [f.path, f.file])) } : {}),
          onProgress: ({ file, loaded: done, total }: { file: string; loaded: number; total: number }) =>
            post({ type: "model", runId, status: { phase: "loading", model: spec.model, progress: { file, fraction: total ? done / total : 0 } } }),
        };
        modelLoading = true;
        const loaded = await browserModelPolicy(modelSpec);
        modelLoading = false;
        post({
          type: "model",
          runId,
          status: { phase: "ready", model: spec.model, device: loaded.choice.device, reason: loaded.choice.reason, loadMs: loaded.loadMs },
        });
        // A lost WebGPU device stops the run, or moves it to the same model on WASM (the user's choice).
        const action = settings.onDeviceLoss ?? "stop";
        const onWebGpu = loaded.choice.device === "webgpu";
        // Under the test hook only (`?faults=1`), its hold may keep a generation call from returning (on the device
        // the model runs on, inside the guard: a loss meanwhile lands during that generation).
        const primary = settings.holdableGeneration ? generationHold.wrap(loaded.policy) : loaded.policy;
        const guard = new DeviceLossGuard(primary, {
          action,
          subscribe: onDeviceLost,
          graceMs: onWebGpu ? 1000 : 0,
          onLost: (loss) => {
            post({ type: "device_lost", runId, loss, action });
            if (action === "stop") {
              active.stoppedBy = `${describeDeviceLoss(loss)} during the run, which stopped (on device loss: stop). The samples and turns that finished are kept; those under way were cancelled.`;
              active.controller.abort();
            }
          },
          // The same model on WASM, in a model host worker: this worker's transformers.js realm is broken by the
          // lost device's failed inference (src/app/worker/model-host-worker.ts).
          fallback: async (loss: DeviceLossInfo) => {
            post({ type: "model", runId, status: { phase: "loading", model: spec.model, device: "wasm", reason: `${describeDeviceLoss(loss)}: loading it on WASM` } });
            try {
              const { onProgress, ...hosted } = modelSpec;
              const wasm = await RemoteModelPolicy.load({ ...hosted, device: "wasm" }, onProgress);
              post({
                type: "model",
                runId,
                status: {
                  phase: "ready",
                  model: spec.model,
                  device: "wasm",
                  reason: `fell back to WASM after ${describeDeviceLoss(loss)}: the turn under way ran again on WASM; the turns before it are WebGPU's`,
                  loadMs: wasm.loadMs,
                },
              });
              return wasm.policy;
            } catch (e) {
              active.stoppedBy = `${describeDeviceLoss(loss)} during the run, and falling back to WASM failed: ${(e as Error).message}. The samples and turns that finished are kept.`;
              active.controller.abort();
              throw e;
            }
          },
        });
        guards.push(guard);
        return {
          generation: guard,
          tokenizer: loaded.policy.tokenizer,
          // Counted on the loaded device: turns run again on a WASM fallback are not in them.
          metrics: () => loaded.policy.metrics(),
          dispose: () =>
            guard.dispose(
              () => loaded.policy.dispose(),
              (fallback) => (fallback as RemoteModelPolicy).dispose(),
            ),
        };
      },
    });
    // The rollout ended (its samples in flight cancelled) because of the device: the run failed, with why.
    if (active.stoppedBy) throw new Error(active.stoppedBy);
    // Compact numbers and the JSON text written here (./event-batch.ts): the page's main thread has neither to do.
    const transfer: ArrayBuffer[] = [];
    const packed = packResult(result, transfer);
    events.flush();
    self.postMessage({ type: "result", runId, result: packed.result, text: packed.text } satisfies WorkerMessage, transfer);
  } catch (e) {
    if (modelLoading) post({ type: "retire", runId, reason: "a model failed to load" });
    post({ type: "failed", runId, error: toWireError(e) });
  } finally {
    if (guards.some((g) => g.failed || g.lost)) post({ type: "retire", runId, reason: "a model failed or lost its device" });
    runs.delete(runId);
    // A human turn still waiting (none should: the rollout has ended) is not answered any more.
    active.waiting.rejectAll(abortError("the run ended"));
    for (const e of userEnvironments) e.port.close();
    for (const c of active.environments.values()) c.fail("the run ended");
  }
}
