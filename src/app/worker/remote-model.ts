/**
 * A model policy in a model host worker (model-host-worker.ts), as the rollout sees a policy: `generate` posts the
 * batch and resolves with the host's answer, streaming its tokens and passing cancellation on. The tokenizer stays
 * the caller's (the host loads the same files).
 */

import {
  fromWireError,
  PendingCalls,
  type GenerateOptions,
  type GenerationDatumSpec,
  type GenerationInterface,
  type GenerationOutputSpec,
} from "../../core/index.js";
import type { DeviceChoice } from "../../policy/llm/worker.js";
import type { FromModelHost, HostedModelSpec, ToModelHost } from "./model-host-protocol.js";

export class RemoteModelPolicy implements GenerationInterface {
  /** Each call waiting for the host, with its token callback. */
  private readonly pending = new PendingCalls<GenerationOutputSpec, GenerateOptions["onToken"]>();
  private dead: Error | null = null;
  private disposed: (() => void) | null = null;

  private constructor(private readonly worker: Worker) {
    worker.onmessage = (e: MessageEvent<FromModelHost>) => this.receive(e.data);
    worker.onerror = (e) => {
      e.preventDefault();
      this.fail(new Error(`the model host worker crashed: ${e.message || "unknown error"}`));
    };
  }

  /** Starts a host and loads the model there; rejects with the load's own error. */
  static load(
    spec: HostedModelSpec,
    onProgress?: (progress: { file: string; loaded: number; total: number }) => void,
  ): Promise<{ policy: RemoteModelPolicy; choice: DeviceChoice; loadMs: number }> {
    const worker = new Worker(new URL("./model-host-worker.ts", import.meta.url), { type: "module" });
    return new Promise((resolve, reject) => {
      worker.onmessage = (e: MessageEvent<FromModelHost>) => {
        const message = e.data;
        if (message.type === "progress") onProgress?.(message);
        else if (message.type === "loaded") resolve({ policy: new RemoteModelPolicy(worker), choice: message.choice, loadMs: message.loadMs });
        else if (message.type === "load_failed") {
          worker.terminate();
          reject(fromWireError(message.error));
        }
      };
      worker.onerror = (e) => {
        e.preventDefault();
        worker.terminate();
        reject(new Error(`the model host worker crashed: ${e.message || "unknown error"}`));
      };
      worker.postMessage({ type: "load", spec } satisfies ToModelHost);
    });
  }

  generate(data: GenerationDatumSpec, greedy: boolean, options: GenerateOptions = {}): Promise<GenerationOutputSpec> {
    if (this.dead) return Promise.reject(this.dead);
    const { id, promise } = this.pending.open(options.onToken);
    const signal = options.signal;
    if (signal) {
      if (signal.aborted) this.send({ type: "abort", id });
      else signal.addEventListener("abort", () => this.send({ type: "abort", id }), { once: true });
    }
    this.send({ type: "generate", id, data, greedy, stream: Boolean(options.onToken) });
    return promise;
  }

  /** The samples ended: the host frees their kept caches, as the model policy does in this realm. */
  releaseSamples(sampleIds: readonly number[]): void {
    if (!this.dead) this.send({ type: "release", sampleIds: [...sampleIds] });
  }

  /** Frees the host's model and ends the host. */
  async dispose(): Promise<void> {
    if (!this.dead) {
      await new Promise<void>((resolve) => {
        this.disposed = resolve;
        this.send({ type: "dispose" });
        setTimeout(resolve, 5000); // a host that does not answer is ended all the same
      });
    }
    this.worker.terminate();
    this.fail(new Error("the model host was disposed of"));
  }

  private send(message: ToModelHost): void {
    this.worker.postMessage(message);
  }

  private receive(message: FromModelHost): void {
    if (message.type === "disposed") this.disposed?.();
    if (!("id" in message)) return;
    if (message.type === "token") this.pending.extra(message.id)?.(message.row, message.tokenId, message.text, message.detail);
    else if (message.type === "generated") this.pending.resolve(message.id, message.out);
    else if (message.type === "generate_failed") this.pending.reject(message.id, fromWireError(message.error));
  }

  private fail(error: Error): void {
    this.dead ??= error;
    this.pending.rejectAll(error);
  }
}
