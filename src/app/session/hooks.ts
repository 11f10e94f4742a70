/** React's reads of the page's run session and of a run model (`useSyncExternalStore`: no copies into state). */

import { useSyncExternalStore } from "react";
import type { RunModel, RunSnapshot } from "../run/run-model.js";
import { session } from "../store.js";
import type { Shown } from "./run-session.js";

/** One field (or a value derived from the state alone) of what the session shows. */
export function useShown<T>(select: (shown: Shown) => T): T {
  return useSyncExternalStore(session.subscribe, () => select(session.state));
}

const noSubscription = () => () => {};

/**
 * `model` as last published: a new snapshot each time it publishes (at most once per frame while live). Views derive
 * what they draw from `snapshot.model` in memos keyed by the snapshot.
 */
export function useRun(model: RunModel): RunSnapshot;
export function useRun(model: RunModel | null): RunSnapshot | null;
export function useRun(model: RunModel | null): RunSnapshot | null {
  return useSyncExternalStore(model ? model.subscribe : noSubscription, () => model?.snapshot ?? null);
}
