/**
 * When the page draws a live run: at most once per animation frame, and no more often than keeps drawing within a
 * share of the main thread. After each update the time its synchronous work took (the run's publish and React's
 * render of it, which React runs in a microtask of the same task) is measured, and the next update waits long
 * enough that drawing takes at most `share` of the time: a small run is drawn at every frame, a 1,000-sample run
 * whose render takes 20 ms about every 60 ms (its style, layout and paint come on top: they grow with the same
 * views, so the share left to everything else stays large). Never longer than `maxWaitMs` between two updates.
 */

export interface RenderBudgetOptions {
  /** The share of the main thread drawing may take (0–1). Default 0.25. */
  share?: number;
  maxWaitMs?: number;
  now?: () => number;
  frame?: (f: () => void) => void;
  later?: (f: () => void, ms: number) => void;
  microtask?: (f: () => void) => void;
}

/** A `bump()` that calls `flush` once for any number of bumps, on the next allowed frame. */
export function renderBudget(flush: () => void, options: RenderBudgetOptions = {}): () => void {
  const share = options.share ?? 0.25;
  const maxWait = options.maxWaitMs ?? 250;
  const now = options.now ?? (() => performance.now());
  const frame = options.frame ?? (typeof requestAnimationFrame === "function" ? requestAnimationFrame : (f: () => void) => setTimeout(f, 16));
  const later = options.later ?? ((f: () => void, ms: number) => setTimeout(f, ms));
  const microtask = options.microtask ?? queueMicrotask;
  let pending = false;
  let nextAt = 0;
  const update = () => {
    pending = false;
    const start = now();
    flush();
    // Queued after React's own render microtask (scheduled by the publish above): runs once it is done.
    microtask(() => {
      const cost = now() - start;
      nextAt = now() + Math.min(maxWait, (cost * (1 - share)) / share);
    });
  };
  return () => {
    if (pending) return;
    pending = true;
    const wait = nextAt - now();
    if (wait > 0) later(() => frame(update), wait);
    else frame(update);
  };
}
