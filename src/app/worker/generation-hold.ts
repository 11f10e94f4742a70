/**
 * The test hook's hold on a model's generation (`holdGeneration`, `generationHeld` and `releaseGeneration` of
 * src/app/faults-debug.ts). The page asks for it only under `?faults=1` (`ModelSettings.holdableGeneration`); only
 * then does the rollout worker wrap the run's model in `wrap`. Armed, the next generation call of that model to
 * finish is held before it returns, until released (or its run is cancelled): a test then loses the WebGPU device
 * (or presses Pause, Stop) while a generation is surely under way, however fast the device is. Unarmed, a wrapped
 * call returns as the model's own does.
 */

import { abortError, type GenerationInterface } from "../../core/index.js";

export class GenerationHold {
  private armed = false;
  /** Lets the call held now return (null while none is held). */
  private held: (() => void) | null = null;
  private onHeld: (() => void)[] = [];

  /** The next call to finish will be held. */
  arm(): void {
    this.armed = true;
  }

  /** Whether a call is held now. */
  get holding(): boolean {
    return this.held !== null;
  }

  /** Resolves once a call is held (at once when one is). */
  whenHeld(): Promise<void> {
    if (this.held) return Promise.resolve();
    return new Promise((resolve) => this.onHeld.push(resolve));
  }

  /** Lets the held call return; false when none was held (the hold is disarmed then: no later call is held). */
  release(): boolean {
    const held = this.held;
    this.armed = false;
    if (!held) return false;
    held();
    return true;
  }

  /** The policy whose calls this hold may hold (the same calls, held once armed). */
  wrap(policy: GenerationInterface): GenerationInterface {
    const wrapped: GenerationInterface = {
      generate: async (data, greedy, options) => {
        const out = await policy.generate(data, greedy, options);
        await this.hold(options?.signal);
        return out;
      },
      releaseSamples: (sampleIds) => policy.releaseSamples?.(sampleIds),
    };
    if (policy.generateAsync) {
      const rows = policy.generateAsync.bind(policy);
      const hold = (signal?: AbortSignal) => this.hold(signal);
      wrapped.generateAsync = async function* (data, greedy, options) {
        yield* rows(data, greedy, options);
        await hold(options?.signal);
      };
    }
    return wrapped;
  }

  /** Held here when armed: until `release`, or until `signal` aborts (the call then rejects as cancelled). */
  private hold(signal?: AbortSignal): Promise<void> {
    if (!this.armed) return Promise.resolve();
    this.armed = false;
    if (signal?.aborted) return Promise.reject(abortError());
    return new Promise<void>((resolve, reject) => {
      const cancelled = () => {
        this.held = null;
        reject(abortError());
      };
      signal?.addEventListener("abort", cancelled, { once: true });
      this.held = () => {
        this.held = null;
        signal?.removeEventListener("abort", cancelled);
        resolve();
      };
      for (const resolveHeld of this.onHeld.splice(0)) resolveHeld();
    });
  }
}
