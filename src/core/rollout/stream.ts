/** The event stream as an async iterable, for consumers that prefer `for await` to a callback. */

import type { RolloutEvent } from "./events.js";

/**
 * Starts `run` with an event callback and yields its events in order. The iterable ends after `rollout_end`
 * or `rollout_error`; a rejection of `run` is re-thrown from the iterator after its events were yielded.
 */
export async function* streamRollout(
  run: (onEvent: (event: RolloutEvent) => void) => Promise<unknown>,
): AsyncGenerator<RolloutEvent> {
  const queue: RolloutEvent[] = [];
  let wake: (() => void) | null = null;
  let finished = false;
  let failure: unknown = null;
  const notify = () => {
    wake?.();
    wake = null;
  };
  run((event) => {
    queue.push(event);
    notify();
  }).then(
    () => {
      finished = true;
      notify();
    },
    (e) => {
      failure = e ?? new Error("rollout failed");
      finished = true;
      notify();
    },
  );
  while (true) {
    if (queue.length) {
      yield queue.shift()!;
      continue;
    }
    if (finished) break;
    await new Promise<void>((resolve) => (wake = resolve));
  }
  if (failure) throw failure;
}
