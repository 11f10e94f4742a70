/**
 * Where a run model is kept in this browser: one owner for what was a `savedAs` field cast onto run models. A run
 * with no entry is not kept yet (./recovery.ts saves it once it ends, or once it is shown, for an imported file).
 */

import type { RunModel } from "./run-model.js";

export type KeptAs =
  /** Saved among the saved runs (./saved-runs.ts) under this id. */
  | { state: "saved"; id: string }
  /** Being saved. */
  | { state: "pending" }
  /** Its save failed: the page said so, with another try; it is not tried again on its own. */
  | { state: "unsaved" }
  /** A fork: kept with its original run's forks, never saved on its own. */
  | { state: "fork" };

const keptAs = new WeakMap<RunModel, KeptAs>();

export function keptAsOf(model: RunModel | null): KeptAs | null {
  return model ? (keptAs.get(model) ?? null) : null;
}

export function setKeptAs(model: RunModel, kept: KeptAs): void {
  keptAs.set(model, kept);
}

/** The saved run's id, once `model` is saved. */
export function savedRunId(model: RunModel | null): string | null {
  const kept = keptAsOf(model);
  return kept?.state === "saved" ? kept.id : null;
}

export const isFork = (model: RunModel | null): boolean => keptAsOf(model)?.state === "fork";
