/**
 * `calculate_rewards` (upstream-rollouts.md §2.3): one `step` per task name per call, groups in order of first
 * appearance, all groups concurrently, results put back in input order.
 *
 * `stepEnvironments` is the same dispatch with each group's failure kept to that group (decision 4): a `step` that
 * throws, times out or returns a malformed result fails only its own samples, with a message naming the
 * environment, the field and the sample. `calculateRewards` is the reference's all-or-nothing form on top of it.
 *
 * A return is checked exactly: rewards are finite numbers (NaN and ±Infinity fail the sample, as a JSON `1e400`
 * would otherwise become `total_reward: null`), each `terminateds` entry is a boolean or the number 0 or 1 (the
 * reference's tensors are bool or float 0/1; a string such as "false" is no flag), metadata is an object or null
 * nested at most `MAX_METADATA_DEPTH` levels with no `__proto__` key (so it fits every file it goes into), and an
 * error names what was there instead (`step returned an array, expected an object`).
 */

import { LabError } from "../errors.js";
import type { BatchedDataDict } from "../batch.js";
import { cloneData } from "../clone.js";
import { describeType, findJsonValueProblem, formatJsonPath, MAX_METADATA_DEPTH } from "../json-value.js";
import type { EnvironmentInterface, EnvironmentReturn, EnvMessage, Message, Metadata, StepContext } from "../types.js";

/** A batch with `message_log`, `extra_env_info` and `task_name`. */
export type RewardsBatch = BatchedDataDict;

/** One sample's share of a step: its fields, or the error that ended it. */
export type SampleStep =
  | {
      ok: true;
      observation: EnvMessage;
      metadata: Metadata;
      nextStopStrings: string[] | null;
      reward: number;
      rewardComponents: Record<string, number> | null;
      terminated: boolean;
      answer: string | null;
    }
  | { ok: false; error: string };

export interface StepOptions {
  timeoutMs?: number;
  /** Each batch row's sample number in the rollout, for error messages (default: its row). */
  sampleIds?: readonly number[];
}

const toEnvMessages = (log: readonly Message[]): EnvMessage[] => log.map((m) => ({ role: m.role, content: m.content }));

export async function stepEnvironments(
  batch: RewardsBatch,
  taskToEnv: Record<string, EnvironmentInterface>,
  options: StepOptions = {},
): Promise<SampleStep[]> {
  const logs = batch.get("message_log") as Message[][];
  const infos = batch.get("extra_env_info") as Metadata[];
  const tasks = batch.get("task_name") as string[];
  const groups = new Map<string, number[]>();
  tasks.forEach((task, i) => {
    const group = groups.get(task);
    if (group) group.push(i);
    else groups.set(task, [i]);
  });
  const results = new Array<SampleStep>(batch.size);
  await Promise.all(
    [...groups].map(async ([task, indices]) => {
      const steps = await stepGroup(taskToEnv, task, logs, infos, indices, options);
      indices.forEach((i, j) => (results[i] = steps[j]!));
    }),
  );
  return results;
}

/**
 * One sample's step, as `stepEnvironments` would step a batch of that sample alone (the async path steps each
 * sample on its own, so it skips the batch and the grouping).
 */
export function stepSample(
  log: Message[],
  info: Metadata,
  task: string,
  taskToEnv: Record<string, EnvironmentInterface>,
  options: StepOptions = {},
): Promise<SampleStep> {
  return stepGroup(taskToEnv, task, [log], [info], [0], options).then((steps) => steps[0]!);
}

/** One `step` call for the samples at `indices` (all of task `task`); a failure fails only them. */
async function stepGroup(
  taskToEnv: Record<string, EnvironmentInterface>,
  task: string,
  logs: readonly Message[][],
  infos: readonly Metadata[],
  indices: number[],
  options: StepOptions,
): Promise<SampleStep[]> {
  const env = Object.prototype.hasOwnProperty.call(taskToEnv, task) ? taskToEnv[task] : undefined;
  if (!env) return indices.map(() => ({ ok: false, error: `No environment found for task type: ${task}` }));
  const timeoutMs = options.timeoutMs !== undefined && options.timeoutMs > 0 ? options.timeoutMs : undefined;
  const deadline = timeoutMs !== undefined ? new AbortController() : null;
  try {
    const context: StepContext = deadline ? { timeoutMs, signal: deadline.signal } : {};
    // Environments get copies: an in-process environment must not be able to change the rollout's state.
    const call = env.step(
      indices.map((i) => toEnvMessages(logs[i]!)),
      indices.map((i) => cloneData(infos[i] ?? null)),
      context,
    );
    const ret = await withTimeout(Promise.resolve(call), timeoutMs, task, deadline);
    return splitReturn(ret, task, indices, options.sampleIds);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    const prefix = e instanceof StepTimeoutError || e instanceof ReturnShapeError ? "" : `environment '${task}' step failed: `;
    return indices.map(() => ({ ok: false, error: prefix + message }));
  }
}

class StepTimeoutError extends LabError {
  override name = "StepTimeoutError";
  override readonly code = "step_timeout";
}
/** A return that does not fit the interface: its message already names the environment and the field. */
class ReturnShapeError extends LabError {
  override name = "ReturnShapeError";
  override readonly code = "step_return";
}

/** The step or its timeout; at the timeout `deadline` is aborted (the step's work is told to stop). */
function withTimeout<T>(promise: Promise<T>, timeoutMs: number | undefined, task: string, deadline: AbortController | null): Promise<T> {
  if (timeoutMs === undefined) return promise;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new StepTimeoutError(`environment '${task}' step timed out after ${timeoutMs} ms`);
      reject(error);
      deadline?.abort(error);
    }, timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Checks one group's return and splits it per sample; a bad field fails only the samples it concerns. */
function splitReturn(ret: EnvironmentReturn, task: string, indices: number[], sampleIds?: readonly number[]): SampleStep[] {
  const n = indices.length;
  const where = `environment '${task}'`;
  if (!ret || typeof ret !== "object" || Array.isArray(ret)) {
    throw new ReturnShapeError(`${where} step returned ${describeType(ret)}, expected an object`);
  }
  const lists: [string, unknown][] = [
    ["observations", ret.observations],
    ["metadata", ret.metadata],
    ["terminateds", ret.terminateds],
  ];
  if (ret.next_stop_strings !== null && ret.next_stop_strings !== undefined) {
    lists.push(["next_stop_strings", ret.next_stop_strings]);
  }
  if (ret.answers !== null && ret.answers !== undefined) lists.push(["answers", ret.answers]);
  const rewardsIsList = Array.isArray(ret.rewards);
  if (rewardsIsList) lists.push(["rewards", ret.rewards]);
  else if (ret.rewards && typeof ret.rewards === "object") {
    for (const [name, values] of Object.entries(ret.rewards)) {
      if (name === "__proto__") throw new ReturnShapeError(`${where} returned a reward named '__proto__', which is not allowed`);
      lists.push([`rewards['${name}']`, values]);
    }
  } else throw new ReturnShapeError(`${where} returned rewards as ${describeType(ret.rewards)}, expected a list or named lists`);
  for (const [field, value] of lists) {
    if (!Array.isArray(value)) throw new ReturnShapeError(`${where} returned ${field} as ${describeType(value)}, expected a list of ${n}`);
    if (value.length !== n) throw new ReturnShapeError(`${where} returned ${field} with ${value.length} entries for a step of ${n} samples`);
  }
  return indices.map((sampleIndex, j): SampleStep => {
    const fail = (field: string, why: string): SampleStep => ({
      ok: false,
      error: `${where} returned an invalid ${field} for sample ${sampleIds?.[sampleIndex] ?? sampleIndex}: ${why}`,
    });
    const observation = ret.observations[j] as EnvMessage | undefined;
    if (!observation || typeof observation.content !== "string" || typeof observation.role !== "string") {
      return fail("observation", "expected {role: string, content: string}");
    }
    let reward = 0;
    let components: Record<string, number> | null = null;
    if (rewardsIsList) {
      const value = (ret.rewards as unknown[])[j];
      const why = notFinite(value);
      if (why) return fail("reward", why);
      reward = value as number;
    } else {
      components = {};
      for (const [name, values] of Object.entries(ret.rewards as Record<string, unknown[]>)) {
        const value = values[j];
        const why = notFinite(value);
        if (why) return fail(`reward '${name}'`, why);
        components[name] = value as number;
        reward += value as number;
      }
      // Finite components can still add up to ±Infinity.
      if (!Number.isFinite(reward)) return fail("reward", `its components add up to ${reward}`);
    }
    const flag = ret.terminateds[j];
    if (typeof flag !== "boolean" && flag !== 0 && flag !== 1) {
      return fail("terminated", `expected true or false (or the number 0 or 1), got ${valueWords(flag)}`);
    }
    let metadata = (ret.metadata[j] ?? null) as Metadata;
    if (metadata !== null && (typeof metadata !== "object" || Array.isArray(metadata))) {
      return fail("metadata", `expected an object or null, got ${describeType(metadata)}`);
    }
    // Before the copy below (which recurses): too deep a value, or a `__proto__` key, fails here by name.
    const shape = metadata === null ? null : findJsonValueProblem(metadata, { maxDepth: MAX_METADATA_DEPTH, shared: true });
    if (shape) return fail("metadata", `${formatJsonPath(["metadata", ...shape.path])}: ${shape.message}`);
    try {
      // The rollout keeps its own copy: later changes by the environment cannot reach it, and a value that
      // cannot be copied (a function, a socket) fails here rather than in an export.
      metadata = cloneData(metadata);
    } catch (e) {
      return fail("metadata", `it cannot be copied (${(e as Error).message})`);
    }
    const stops = ret.next_stop_strings ? ret.next_stop_strings[j] : null;
    if (stops !== null && stops !== undefined && !(Array.isArray(stops) && stops.every((s) => typeof s === "string"))) {
      return fail("next_stop_strings", "expected a list of strings or null");
    }
    return {
      ok: true,
      observation: { role: observation.role, content: observation.content },
      metadata,
      nextStopStrings: stops ?? null,
      reward,
      rewardComponents: components,
      terminated: flag === true || flag === 1,
      answer: ret.answers ? (ret.answers[j] ?? null) : null,
    };
  });
}

/** Why `value` is no reward (not a number, NaN, ±Infinity), or null when it is one. */
function notFinite(value: unknown): string | null {
  if (typeof value !== "number") return `${valueWords(value)} is not a number`;
  if (Number.isNaN(value)) return "NaN is not a number";
  if (!Number.isFinite(value)) return `${value} is not a finite number`;
  return null;
}

/** A value in an error: `the string "false"`, `an array`, `null`, `2`. */
function valueWords(value: unknown): string {
  if (typeof value === "string") return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return describeType(value);
}

/** The reference's `calculate_rewards`: any failure rejects. Rewards come back as a list, or named lists. */
export async function calculateRewards(
  batch: RewardsBatch,
  taskToEnv: Record<string, EnvironmentInterface>,
  options: StepOptions = {},
): Promise<EnvironmentReturn> {
  const steps = await stepEnvironments(batch, taskToEnv, options);
  const failed = steps.find((s) => !s.ok);
  if (failed && !failed.ok) throw new Error(failed.error);
  const ok = steps as Extract<SampleStep, { ok: true }>[];
  const named = ok.length > 0 && ok[0]!.rewardComponents !== null;
  return {
    observations: ok.map((s) => s.observation),
    metadata: ok.map((s) => s.metadata),
    next_stop_strings: ok.map((s) => s.nextStopStrings),
    rewards: named
      ? Object.fromEntries(Object.keys(ok[0]!.rewardComponents!).map((k) => [k, ok.map((s) => s.rewardComponents![k] ?? 0)]))
      : ok.map((s) => s.reward),
    terminateds: ok.map((s) => s.terminated),
    answers: ok.map((s) => s.answer),
  };
}
