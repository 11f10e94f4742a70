/**
 * What a run is called: saved runs and exports are named by their environment, policy, size and time, so a list of
 * them (or a downloads folder) says which is which without opening any.
 */

import { runProgress } from "./interrupted.js";
import type { RunModel } from "./run-model.js";

interface ScenarioNames {
  envs?: Record<string, { env?: unknown }>;
  policy?: { kind?: unknown; model?: unknown };
}

/** "sliding_puzzle · oracle", "calculator+workspace · model builtin:tiny"; null without a scenario. */
export function scenarioLabel(scenario: unknown): string | null {
  if (!scenario || typeof scenario !== "object") return null;
  const { envs, policy } = scenario as ScenarioNames;
  const names = [...new Set(Object.values(envs ?? {}).map((e) => String(e?.env ?? "?")))];
  const kind = typeof policy?.kind === "string" ? policy.kind : null;
  const who = kind === "model" && typeof policy?.model === "string" ? `model ${policy.model}` : kind;
  const parts = [names.length ? names.join("+") : null, who].filter((p): p is string => p !== null);
  return parts.length ? parts.join(" · ") : null;
}

/** The title a run is saved under: `sync · 3 samples · calculator · oracle · 12:00:00` (how it ended first if it failed). */
export function runTitle(model: RunModel, scenario: unknown, status: "finished" | "failed", at = new Date()): string {
  const { finished, total } = runProgress(model);
  const label = scenarioLabel(scenario);
  const mode = model.summary.mode ?? "run";
  const size = status === "failed" ? `${finished} of ${total} samples finished` : `${total} samples`;
  return [status === "failed" ? "failed" : null, mode, size, label, at.toLocaleTimeString()].filter(Boolean).join(" · ");
}

const pad = (n: number) => String(n).padStart(2, "0");

/** An export's file name: `rollout-calculator-oracle-3-samples-20261201-203841.jsonl` (only letters, digits, -_.). */
export function exportFileName(model?: RunModel | null, scenario?: unknown, at = new Date()): string {
  const label = scenarioLabel(scenario);
  const samples = model ? `${model.samples.length}-samples` : null;
  const stamp = `${at.getFullYear()}${pad(at.getMonth() + 1)}${pad(at.getDate())}-${pad(at.getHours())}${pad(at.getMinutes())}${pad(at.getSeconds())}`;
  const name = ["rollout", label, samples, stamp]
    .filter((p): p is string => Boolean(p))
    .join("-")
    .replace(/ · /g, "-")
    .replace(/[^\w.+-]+/g, "_");
  return `${name}.jsonl`;
}
