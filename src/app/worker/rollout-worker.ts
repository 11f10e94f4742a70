/// <reference lib="webworker" />
/**
 * The rollout worker: runs a whole scenario (policy, environments, rollout loop) off the page's main thread and
 * streams its events back, so the page stays responsive while tokens arrive one by one.
 */

import { byteLevelTokenizer, PauseController } from "../../core/index.js";
import { environmentLookup } from "../../envs/index.js";
import { environmentOverPort, type PortLike } from "../../envs/user/port.js";
import { TextPolicy } from "../../policy/text-policy.js";
import { browserModelPolicy, describeTokens } from "../../policy/llm/worker.js";
import { runScenario } from "../../scenario/run.js";
import { parseScenario } from "../../scenario/schema.js";
import { forkPolicy } from "../fork/fork-policy.js";
import type { ModelSettings, PageMessage, UserEnvironmentPort, WorkerMessage } from "./protocol.js";

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
  /** Human turns waiting for the page's answer, by request id. */
  waiting: Map<number, (text: string) => void>;
}

let nextRequestId = 1;

/** The human policy: each turn's text comes from the person at the page. */
function humanPolicy(runId: number, active: ActiveRun): TextPolicy {
  return new TextPolicy(byteLevelTokenizer, ({ sampleId, turn, promptText, stopStrings }, signal) =>
    new Promise<string>((resolve, reject) => {
      const requestId = nextRequestId++;
      active.waiting.set(requestId, resolve);
      signal?.addEventListener("abort", () => reject(Object.assign(new Error("cancelled"), { name: "AbortError" })), { once: true });
      post({ type: "human_request", runId, request: { requestId, sample: sampleId, turn, contextTail: promptText.slice(-1500), stopStrings } });
    }),
  );
}

const runs = new Map<number, ActiveRun>();
const post = (message: WorkerMessage) => self.postMessage(message);

self.onmessage = (e: MessageEvent<PageMessage>) => {
  const message = e.data;
  if (message.type === "run") {
    void run(message.runId, message.scenario, message.modelSettings ?? {}, message.environments ?? []);
    return;
  }
  if (message.type === "describe_tokens") {
    const described = describeTokens(message.ids);
    if (described) post({ type: "tokens_described", runId: message.runId, ids: message.ids, ...described });
    return;
  }
  const active = runs.get(message.runId);
  if (!active) return;
  if (message.type === "human_response") {
    active.waiting.get(message.requestId)?.(message.text);
    active.waiting.delete(message.requestId);
    return;
  }
  if (message.type === "pause") active.pause.pause();
  else if (message.type === "resume") active.pause.resume();
  else if (message.type === "step") active.pause.step();
  else if (message.type === "stop") active.controller.abort();
};

async function run(runId: number, value: unknown, settings: ModelSettings, userEnvironments: UserEnvironmentPort[]): Promise<void> {
  const active: ActiveRun = { controller: new AbortController(), pause: new YieldingPauseController(), waiting: new Map() };
  runs.set(runId, active);
  try {
    const scenario = parseScenario(value);
    // User environments run in their own host Workers; this run reaches each through its port.
    const environments = environmentLookup(userEnvironments.map((e) => environmentOverPort(e.port as unknown as PortLike, e.description)));
    const result = await runScenario(scenario, {
      environments,
      signal: active.controller.signal,
      pause: active.pause,
      onEvent: (event) => post({ type: "event", runId, event }),
      loadFile: async (name) => {
        const text = settings.files?.[name];
        if (text === undefined) throw new Error(`no file named '${name}' was given to the lab (pick it in the set-up)`);
        return text;
      },
      ...(settings.human ? { policyOverride: { generation: humanPolicy(runId, active), tokenizer: byteLevelTokenizer } } : {}),
      ...(settings.fork ? { wrapPolicy: (policy) => forkPolicy(policy, settings.fork!) } : {}),
      modelPolicy: async (spec) => {
        const device = spec.device === "cpu" ? "wasm" : spec.device;
        post({ type: "model", runId, status: { phase: "loading", model: spec.model } });
        const loaded = await browserModelPolicy({
          ...spec,
          device,
          ...(settings.remoteHost ? { remoteHost: settings.remoteHost } : {}),
          ...(settings.localFiles ? { localFiles: new Map(settings.localFiles.map((f) => [f.path, f.file])) } : {}),
          onProgress: ({ file, loaded: done, total }) =>
            post({ type: "model", runId, status: { phase: "loading", model: spec.model, progress: { file, fraction: total ? done / total : 0 } } }),
        });
        post({
          type: "model",
          runId,
          status: { phase: "ready", model: spec.model, device: loaded.choice.device, reason: loaded.choice.reason, loadMs: loaded.loadMs },
        });
        return { generation: loaded.policy, tokenizer: loaded.policy.tokenizer, dispose: () => loaded.policy.dispose() };
      },
    });
    post({ type: "result", runId, result });
  } catch (e) {
    post({ type: "failed", runId, error: e instanceof Error ? e.message : String(e) });
  } finally {
    runs.delete(runId);
    for (const e of userEnvironments) e.port.close();
  }
}
