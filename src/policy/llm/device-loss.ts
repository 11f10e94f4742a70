/**
 * A lost WebGPU device, mid-run. A `GPUDevice` can be lost at any time (a driver reset, the GPU process crashing,
 * the browser reclaiming memory, `device.destroy()`); onnxruntime's session on it then fails, or never answers.
 * `DeviceLossGuard` wraps the run's model policy and does what the user chose:
 *
 * - `stop` (the default): the run stops at once (`onLost` aborts it); the generation under way rejects with a
 *   `DeviceLostError`, the rollout ends its samples in flight as cancelled, and every sample and turn that finished
 *   is kept.
 * - `wasm`: the same model is loaded on WASM (once) and the generation that the loss interrupted is run again there,
 *   from the same prompt, with the same seeds; the rollout goes on from the turns that finished (they keep their
 *   WebGPU tokens and log-probabilities; later turns are WASM's). Sampling is seeded per sample, turn and step, so
 *   the retried turn draws what a WASM run would have drawn there.
 *
 * Either way the guard never waits on the lost session again: a generation on it is raced against the loss, and
 * disposing of it is not awaited (a session on a lost device may never settle).
 *
 * No transformers.js here: the worker passes the loss events and the WASM loader in, so this is unit-tested in Node.
 */

import { LabError } from "../../core/index.js";
import { outputRow, type GenerateOptions, type GenerationDatumSpec, type GenerationInterface, type GenerationOutputSpec } from "../../core/index.js";

export type DeviceLossAction = "stop" | "wasm";

export interface DeviceLossInfo {
  /** `GPUDeviceLostInfo.reason`: "destroyed" or "unknown". */
  reason: string;
  /** `GPUDeviceLostInfo.message`, the browser's words. */
  message: string;
  /** True when the test hook simulated the loss without a real device to destroy. */
  simulated?: boolean;
}

/** "the WebGPU device was lost (destroyed: …)". */
export function describeDeviceLoss(info: DeviceLossInfo): string {
  const detail = [info.reason, info.message].filter(Boolean).join(": ");
  return `the WebGPU device was lost (${detail || "no reason given"})${info.simulated ? " [simulated by the test hook]" : ""}`;
}

export class DeviceLostError extends LabError {
  override name = "DeviceLostError";
  override readonly code = "device_lost";
  constructor(readonly info: DeviceLossInfo) {
    super(describeDeviceLoss(info));
  }
}

export interface DeviceLossGuardOptions {
  action: DeviceLossAction;
  /** Subscribes to the loss of the device the policy runs on; returns the unsubscribe. */
  subscribe(listener: (info: DeviceLossInfo) => void): () => void;
  /** Called once, when the loss is seen (the worker tells the page; with `stop` it aborts the run). */
  onLost?(info: DeviceLossInfo): void;
  /** `wasm`: the same model on WASM (called once; its policy must use the same tokenizer). */
  fallback?(info: DeviceLossInfo): Promise<GenerationInterface>;
  /**
   * How long a generation error waits for a loss event before it counts as an ordinary error: a destroyed device
   * can fail the session's pending work before its `lost` promise resolves. 0 on WASM.
   */
  graceMs?: number;
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class DeviceLossGuard implements GenerationInterface {
  readonly generateAsync?: GenerationInterface["generateAsync"];
  private lostInfo: DeviceLossInfo | null = null;
  private readonly lostSignal: Promise<never>;
  private rejectLost!: (error: DeviceLostError) => void;
  private current: GenerationInterface;
  private fallbackPolicy: Promise<GenerationInterface> | null = null;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly primary: GenerationInterface,
    private readonly options: DeviceLossGuardOptions,
  ) {
    this.current = primary;
    this.lostSignal = new Promise<never>((_, reject) => (this.rejectLost = reject));
    this.lostSignal.catch(() => undefined); // nobody may be racing it when it rejects
    this.unsubscribe = options.subscribe((info) => this.lose(info));
    if (primary.generateAsync) this.generateAsync = (data, greedy, opts) => this.rowsAsync(data, greedy, opts);
  }

  /** The loss, once seen (null while the device is fine). */
  get lost(): DeviceLossInfo | null {
    return this.lostInfo;
  }

  /** Whether a generation failed for a reason other than the loss or a cancellation. */
  failed = false;

  /** Whether generations now run on the WASM fallback. */
  get fellBack(): boolean {
    return this.current !== this.primary;
  }

  private lose(info: DeviceLossInfo): void {
    if (this.lostInfo) return;
    this.lostInfo = info;
    this.options.onLost?.(info);
    this.rejectLost(new DeviceLostError(info));
  }

  /** The policy to run on now: the primary until the loss; then the fallback (`wasm`), or a `DeviceLostError`. */
  private async policy(): Promise<GenerationInterface> {
    if (!this.lostInfo) return this.primary;
    if (this.options.action !== "wasm" || !this.options.fallback) throw new DeviceLostError(this.lostInfo);
    this.fallbackPolicy ??= this.options.fallback(this.lostInfo);
    this.current = await this.fallbackPolicy;
    return this.current;
  }

  /** Runs one call on the current policy; a call the loss interrupted runs again on the fallback. */
  private async attempt<T>(call: (policy: GenerationInterface) => Promise<T>): Promise<T> {
    for (;;) {
      const policy = await this.policy();
      if (policy !== this.primary) return call(policy);
      try {
        return await Promise.race([call(policy), this.lostSignal]);
      } catch (e) {
        // An error of the lost session may come before the loss event: give the event a moment to arrive.
        if (!this.lostInfo && this.options.graceMs) await Promise.race([this.lostSignal.catch(() => undefined), delay(this.options.graceMs)]);
        if (!this.lostInfo) {
          if (!(e instanceof Error && e.name === "AbortError")) this.failed = true;
          throw e;
        }
        // Lost: loop (the fallback, or a DeviceLostError).
      }
    }
  }

  generate(data: GenerationDatumSpec, greedy: boolean, options?: GenerateOptions): Promise<GenerationOutputSpec> {
    return this.attempt((policy) => policy.generate(data, greedy, options));
  }

  releaseSamples(sampleIds: readonly number[]): void {
    this.current.releaseSamples?.(sampleIds);
  }

  /** Rows are collected before any is passed on, so a retried call never yields a row twice. */
  private async *rowsAsync(data: GenerationDatumSpec, greedy: boolean, options?: GenerateOptions): AsyncIterable<[number, GenerationOutputSpec]> {
    const rows = await this.attempt(async (policy) => {
      if (!policy.generateAsync) {
        const out = await policy.generate(data, greedy, options);
        return data.input_lengths.map((_, row) => [row, outputRow(out, row)] as [number, GenerationOutputSpec]);
      }
      const collected: [number, GenerationOutputSpec][] = [];
      for await (const row of policy.generateAsync(data, greedy, options)) collected.push(row);
      return collected;
    });
    yield* rows;
  }

  /**
   * Frees both policies. The primary's disposal is awaited only while its device is fine: a session on a lost
   * device may never settle.
   */
  async dispose(disposePrimary: () => Promise<void>, disposeFallback?: (policy: GenerationInterface) => Promise<void>): Promise<void> {
    this.unsubscribe();
    if (this.lostInfo) void disposePrimary().catch(() => undefined);
    else await disposePrimary();
    if (this.fallbackPolicy && disposeFallback) {
      const fallback = await this.fallbackPolicy.catch(() => null);
      if (fallback) await disposeFallback(fallback);
    }
  }
}
