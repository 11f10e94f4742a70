/**
 * The test hook's hold on a big file's import (`holdImport` / `releaseImport` of src/app/faults-debug.ts, which
 * exists only under `?faults=1`): while it is on, each previewed import (../ImportJsonl.tsx) stops reading once its
 * first samples are in the preview, until the test releases it. A test then looks at the preview, or presses Stop,
 * while the file is surely still being read, however fast the machine. Off (every page without the hook),
 * `next()` is null and no read ever waits.
 */

let on = false;
/** The imports held now: how each one is let go. */
let held: (() => void)[] = [];

export const importHold = {
  /** From now on (or, with false, no longer) each previewed import is held; off also lets go of those held now. */
  set(value: boolean): void {
    on = value;
    if (!value) importHold.release();
  },

  /**
   * The hold of an import whose first samples are shown: a promise that resolves when the test releases it; null
   * when the hold is off. An import that ends meanwhile (`signal` aborts: Stop, a newer import) is no longer held.
   */
  next(signal?: AbortSignal): Promise<void> | null {
    if (!on || signal?.aborted) return null;
    return new Promise<void>((resolve) => {
      held.push(resolve);
      signal?.addEventListener("abort", () => (held = held.filter((r) => r !== resolve)), { once: true });
    });
  },

  /** Lets the imports held now read on; how many there were. */
  release(): number {
    const all = held;
    held = [];
    for (const resolve of all) resolve();
    return all.length;
  },
};
