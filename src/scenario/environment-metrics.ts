/**
 * The environments' own metrics after a run: each task's `global_post_process_and_metrics` (the reference declares
 * it and no rollout calls it; NeMo RL's trainers do, after the rollout) given the samples of that task as one batch
 * of columns, as a trainer would give it. They are kept beside the rollout's result, never in it: the result's
 * `metrics` are exactly the rollout path's (`scenario-format.md`), and goldens compare those.
 */

import { NoPostProcessError, type EnvironmentInterface } from "../core/index.js";
import type { RolloutResultJson } from "./result.js";

/** One task's post-processing: its metrics, or why there are none (the environment's error, with its traceback). */
export type EnvironmentMetrics = { task: string; metrics: Record<string, number> } | { task: string; error: string };

/**
 * The batch of columns one task's samples make, in input order: every key of the result's samples (`message_log`
 * with its `token_ids`, `total_reward`, `idx`, …), and `rewards`, the total rewards again, which is the name the
 * reference's trainers give them (`batch["rewards"]`) when they post-process.
 */
export function postProcessBatch(result: RolloutResultJson, task: string): Record<string, unknown[]> {
  const samples = result.samples.filter((s) => s.task_name === task);
  const keys = [...new Set(samples.flatMap((s) => Object.keys(s)))];
  const batch: Record<string, unknown[]> = {};
  for (const key of keys) batch[key] = samples.map((s) => (s as unknown as Record<string, unknown>)[key] ?? null);
  batch.rewards = samples.map((s) => s.total_reward);
  return batch;
}

/** Whether every metric is a finite number (an environment's answer is checked like any input). */
function checkedMetrics(task: string, metrics: unknown): Record<string, number> {
  if (typeof metrics !== "object" || metrics === null || Array.isArray(metrics)) {
    throw new Error(`global_post_process_and_metrics of '${task}' returned metrics that are not an object: ${JSON.stringify(metrics)?.slice(0, 200)}`);
  }
  const out: Record<string, number> = {};
  for (const [key, value] of Object.entries(metrics)) {
    const number = typeof value === "boolean" ? Number(value) : value;
    if (typeof number !== "number" || !Number.isFinite(number)) {
      throw new Error(`global_post_process_and_metrics of '${task}' returned metrics.${key} = ${JSON.stringify(value) ?? String(value)}, not a finite number`);
    }
    out[key] = number;
  }
  return out;
}

/**
 * Each task's environment metrics, for the tasks whose environment has `globalPostProcessAndMetrics` and samples in
 * the result. An environment that fails says so for its task alone; the others and the result are kept.
 */
export async function environmentMetrics(result: RolloutResultJson, taskToEnv: Record<string, EnvironmentInterface>): Promise<EnvironmentMetrics[]> {
  const reports: EnvironmentMetrics[] = [];
  for (const [task, env] of Object.entries(taskToEnv)) {
    if (!env.globalPostProcessAndMetrics || !result.samples.some((s) => s.task_name === task)) continue;
    try {
      const answer = await env.globalPostProcessAndMetrics(postProcessBatch(result, task));
      if (!Array.isArray(answer) || answer.length !== 2) {
        throw new Error(`global_post_process_and_metrics of '${task}' returned ${JSON.stringify(answer)?.slice(0, 200)}, expected [batch, metrics]`);
      }
      reports.push({ task, metrics: checkedMetrics(task, answer[1]) });
    } catch (e) {
      if (e instanceof NoPostProcessError) continue;
      reports.push({ task, error: e instanceof Error ? e.message : String(e) });
    }
  }
  return reports;
}
