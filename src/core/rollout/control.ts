/** Pause, resume and single-stepping between turns. A paused rollout waits at the start of its next turn. */

export class PauseController {
  private paused = false;
  private waiters: (() => void)[] = [];
  /** A step asked for while nothing was waiting lets the next turn through (it is not lost). */
  private pendingStep = false;
  private listeners = new Set<(paused: boolean) => void>();

  get isPaused(): boolean {
    return this.paused;
  }

  pause(): void {
    this.setPaused(true);
  }

  resume(): void {
    this.pendingStep = false;
    this.setPaused(false);
    this.release();
  }

  /** Lets every turn now waiting run once, then stays paused. */
  step(): void {
    if (this.waiters.length === 0) this.pendingStep = true;
    this.release();
  }

  onChange(listener: (paused: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves at once when running, else when resumed, stepped or aborted. */
  wait(signal?: AbortSignal): Promise<void> {
    if (!this.paused || signal?.aborted) return Promise.resolve();
    if (this.pendingStep) {
      this.pendingStep = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        signal?.removeEventListener("abort", done);
        resolve();
      };
      this.waiters.push(done);
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  private release(): void {
    const waiting = this.waiters;
    this.waiters = [];
    for (const w of waiting) w();
  }

  private setPaused(paused: boolean): void {
    if (this.paused === paused) return;
    this.paused = paused;
    for (const l of this.listeners) l(paused);
  }
}
