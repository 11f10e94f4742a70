/**
 * A run as JSONL: one sample per line (the message log with the spec's field names, the output batch keys,
 * `termination`, and the lab's per-turn record under `lab/turns`), then one line with the metrics and the
 * scenario. Importing rebuilds the same run model, so an imported run shows the same transcript; the replay
 * policy reads the same file (it takes the lines that have a `message_log`).
 *
 * Reading and checking the lines is src/scenario/jsonl-reader.ts: the page streams a file through `readJsonl` (every line
 * checked, the first problems kept with their lines and field paths) and builds the run of its valid lines with
 * `buildRun`; `importJsonl` reads a text in memory (a saved run) and rejects it at its first problem.
 */

import { LabError } from "../../core/index.js";
import type { Message, Metadata, RolloutEvent, TerminationReason } from "../../core/index.js";
import { formatProblem, JsonlAccumulator, type JsonlReadResult, type SampleLine } from "../../scenario/jsonl-reader.js";
import type { EnvironmentMetrics } from "../../scenario/environment-metrics.js";
import type { ForkContinuation } from "../../policy/fork-policy.js";
import { ENDED_EARLY } from "./interrupted.js";
import { RunModel } from "./run-model.js";

export const JSONL_FORMAT = "rollout-lab-run/1";

interface TurnRecord {
  turn: number;
  reward: number | null;
  reward_components: Record<string, number> | null;
  terminated: boolean;
  truncated_context: boolean;
  response_truncated: boolean;
  input_tokens: number;
  gen_start: number;
  gen_end: number | null;
  env_end: number | null;
  metadata: Metadata;
  /** The stop strings the next turn uses (what a fork from the next turn needs); absent in older exports. */
  stop_strings?: string[] | null;
}

function messageJson(m: Message): Message {
  const out: Message = { role: m.role, content: m.content, token_ids: m.token_ids };
  if (m.generation_logprobs) out.generation_logprobs = m.generation_logprobs;
  if (m.invalid_action_violations?.length) out.invalid_action_violations = m.invalid_action_violations;
  return out;
}

export function exportJsonl(model: RunModel, scenario: unknown): string {
  const lines = model.samples.map((_, i) => exportSampleLine(model, i));
  lines.push(exportFooterLine(model, scenario));
  return `${lines.join("\n")}\n`;
}

/** The line of sample `i` (what `exportJsonl` writes for it; also used to export a run in slices: ./export-slices.ts). */
export function exportSampleLine(model: RunModel, i: number): string {
  const batch = model.finalBatch;
  const s = model.samples[i]!;
  const extra: Record<string, unknown> = {};
  if (batch) {
    for (const [key, column] of Object.entries(batch)) {
      if (!["message_log", "error"].includes(key)) extra[key] = column[i];
    }
  }
  const turns: TurnRecord[] = s.turns.map((t) => ({
    turn: t.turn,
    reward: t.reward,
    reward_components: t.rewardComponents,
    terminated: t.terminated,
    truncated_context: t.truncatedContext,
    response_truncated: t.responseTruncated,
    input_tokens: t.inputTokens,
    gen_start: t.genStart,
    gen_end: t.genEnd,
    env_end: t.envEnd,
    metadata: t.metadata,
    ...(t.stopStrings !== undefined ? { stop_strings: t.stopStrings } : {}),
  }));
  return JSON.stringify({
    idx: s.idx,
    task_name: s.task,
    message_log: s.messages.map(messageJson),
    ...extra,
    total_reward: s.totalReward,
    termination: s.termination,
    ...(s.error ? { error: s.error } : {}),
    "lab/prompt_messages": s.promptMessages,
    "lab/initial_env_info": s.initialMetadata,
    ...(s.initialStopStrings !== undefined ? { "lab/initial_stop_strings": s.initialStopStrings } : {}),
    "lab/turns": turns,
  });
}

/** The run's last line: metrics and the scenario. */
export function exportFooterLine(model: RunModel, scenario: unknown): string {
  return JSON.stringify(exportFooter(model, scenario));
}

/** The export's last line, as an object (a scripted scenario can make it megabytes: see ./export-slices.ts). */
export function exportFooter(model: RunModel, scenario: unknown): Record<string, unknown> {
  return {
    "lab/format": JSONL_FORMAT,
    mode: model.summary.mode,
    max_rollout_turns: model.summary.maxRolloutTurns,
    max_seq_len: model.summary.maxSeqLen,
    // Exported while under way (paused, or a live run's checkpoint), it is no whole run.
    partial: model.summary.partial || model.summary.status === "running",
    ...(model.summary.status === "failed" && model.summary.error ? { [RUN_ERROR_KEY]: model.summary.error } : {}),
    metrics: model.summary.metrics ?? {},
    ...(model.summary.environmentMetrics ? { [ENVIRONMENT_METRICS_KEY]: model.summary.environmentMetrics } : {}),
    ...(model.summary.forkContinuation ? { [FORK_KEY]: forkFooter(model.summary.forkContinuation) } : {}),
    scenario,
  };
}

/** The footer's key for why a failed run failed (its worker crashed, its device was lost): its import fails as it did. */
export const RUN_ERROR_KEY = "lab/run_error";

/** The error of a sample the export caught under way: it reads back ended, `cancelled`, and why. */
export const EXPORTED_UNDER_WAY = `${ENDED_EARLY}the run was exported while this sample was under way`;

/** The footer's key for the environments' metrics after the run (beside the rollout's `metrics`, never in them). */
export const ENVIRONMENT_METRICS_KEY = "lab/environment_metrics";

/**
 * The footer's key for a fork's continuation (`{sample_id, turn_offset, forced_response?}`): how the fork's policy
 * went on from the original's row and turn, which its scenario cannot say (RunSummary.forkContinuation).
 */
export const FORK_KEY = "lab/fork";

const forkFooter = (c: ForkContinuation) => ({ sample_id: c.sampleId, turn_offset: c.turnOffset, ...(c.forcedResponse !== undefined ? { forced_response: c.forcedResponse } : {}) });

/** A fork's continuation an export's footer kept, or null (none, or not of that shape: then the run is a plain one). */
export function forkContinuationOf(footer: JsonlReadResult["footer"]): ForkContinuation | null {
  const kept = (footer as Record<string, unknown> | null)?.[FORK_KEY];
  if (typeof kept !== "object" || kept === null || Array.isArray(kept)) return null;
  const { sample_id: sampleId, turn_offset: turnOffset, forced_response: forced } = kept as Record<string, unknown>;
  const count = (x: unknown): x is number => typeof x === "number" && Number.isInteger(x) && x >= 0;
  if (!count(sampleId) || !count(turnOffset) || (forced !== undefined && typeof forced !== "string")) return null;
  return { sampleId, turnOffset, ...(forced !== undefined ? { forcedResponse: forced } : {}) };
}

/** The environments' metrics an export's footer kept: the well-formed entries (an odd one is left out, not fatal). */
export function environmentMetricsOf(footer: JsonlReadResult["footer"]): EnvironmentMetrics[] | null {
  const kept = (footer as Record<string, unknown> | null)?.[ENVIRONMENT_METRICS_KEY];
  if (!Array.isArray(kept)) return null;
  const reports: EnvironmentMetrics[] = [];
  for (const r of kept as unknown[]) {
    if (typeof r !== "object" || r === null || typeof (r as { task?: unknown }).task !== "string") continue;
    const { task, metrics, error } = r as { task: string; metrics?: unknown; error?: unknown };
    if (typeof error === "string") reports.push({ task, error });
    else if (typeof metrics === "object" && metrics !== null && Object.values(metrics).every((v) => typeof v === "number")) {
      reports.push({ task, metrics: metrics as Record<string, number> });
    }
  }
  return reports.length ? reports : null;
}

export class ImportError extends LabError {
  override name = "ImportError";
  override readonly code = "invalid_import";
}

export { formatProblem, readJsonl, type ImportProblem, type JsonlReadResult } from "../../scenario/jsonl-reader.js";

/** The problems of a read in words: the first ones with their lines and fields, and how many there are in all. */
export function describeProblems(read: Pick<JsonlReadResult, "problems" | "problemCount" | "badLines">): string {
  const shown = read.problems.map(formatProblem).join("\n");
  const more = read.problemCount - read.problems.length;
  return more > 0 ? `${shown}\n… and ${more} more ${more === 1 ? "problem" : "problems"} (${read.badLines} bad lines in all)` : shown;
}

/**
 * Rebuilds a run model from an export (or from a runner result's samples) held in memory; every line must be
 * valid: the first problem throws an ImportError naming its line and field. (The page streams files through
 * `readJsonl` and lets the user import the valid lines of a file with problems.)
 */
export function importJsonl(text: string): { model: RunModel; scenario: unknown } {
  const acc = new JsonlAccumulator({ maxProblems: 1 });
  acc.push(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  const read = acc.end();
  if (read.problemCount > 0) {
    const more = read.problemCount - 1;
    throw new ImportError(`${formatProblem(read.problems[0]!)}${more > 0 ? ` (and ${more} more ${more === 1 ? "problem" : "problems"})` : ""}`);
  }
  return buildRun(read);
}

/** The run model of the valid lines of a read; an ImportError when there is no sample among them. */
export function buildRun(read: Pick<JsonlReadResult, "samples" | "footer">): { model: RunModel; scenario: unknown } {
  const model = new RunModel();
  for (const e of runEvents(read)) model.apply(e);
  model.setEnvironmentMetrics(environmentMetricsOf(read.footer));
  model.setForkContinuation(forkContinuationOf(read.footer));
  return { model, scenario: read.footer?.scenario ?? null };
}

/**
 * The events that rebuild the run of the valid lines of a read, in order (what `buildRun` applies; also applied a
 * few samples at a time: ./build-slices.ts). Throws an ImportError when there is no sample among them.
 */
export function* runEvents(read: Pick<JsonlReadResult, "samples" | "footer">): Generator<RolloutEvent> {
  const samples = read.samples;
  if (samples.length === 0) throw new ImportError("no sample lines (objects with a message_log)");
  yield { ...runStart(read.footer), samples: samples.map(sampleStart) };
  for (let sample = 0; sample < samples.length; sample++) yield* sampleEvents(samples[sample]!, sample);
  yield* runEndEvents(samples, read.footer);
}

/** The number of prompt messages of a sample line. */
function promptOf(s: SampleLine): number {
  const at = s.message_log.findIndex((m) => m.role === "assistant");
  return Math.min(s["lab/prompt_messages"] ?? (at < 0 ? s.message_log.length : at), s.message_log.length);
}

type RolloutStart = Extract<RolloutEvent, { type: "rollout_start" }>;

/** The `rollout_start` event of a read (its samples aside: `sampleStart` each), from its last line's settings. */
export function runStart(footer: JsonlReadResult["footer"]): RolloutStart {
  const meta = footer ?? {};
  return { type: "rollout_start", t: 0, mode: meta.mode ?? "sync", maxRolloutTurns: meta.max_rollout_turns ?? 0, maxSeqLen: meta.max_seq_len ?? 0, samples: [] };
}

/** Sample line `s` (the run's sample `sample`) as the `rollout_start` event lists it: its prompt and first state. */
export function sampleStart(s: SampleLine, sample: number): RolloutStart["samples"][number] {
  return {
    sample,
    idx: s.idx,
    task_name: s.task_name,
    message_log: s.message_log.slice(0, promptOf(s)),
    extra_env_info: s["lab/initial_env_info"] ?? null,
    ...(s["lab/initial_stop_strings"] !== undefined ? { stop_strings: s["lab/initial_stop_strings"] } : {}),
  };
}

/** The events of one sample line after the run's start: each turn's, then its end. */
export function* sampleEvents(s: SampleLine, sample: number): Generator<RolloutEvent> {
  const rest = s.message_log.slice(promptOf(s));
  const records = s["lab/turns"] ?? [];
  for (let k = 0, turn = 0; k < rest.length; turn++) {
    const record = records[turn];
    const assistant = rest[k]!;
    const observation = rest[k + 1];
    yield { type: "turn_start", t: record?.gen_start ?? 0, sample, turn, inputTokens: record?.input_tokens ?? 0 };
    yield { type: "assistant_message", t: record?.gen_end ?? 0, sample, turn, message: assistant, truncated: record?.response_truncated ?? false };
    if (observation) {
      yield {
        type: "env_step",
        t: record?.env_end ?? 0,
        sample,
        turn,
        observation,
        reward: record?.reward ?? 0,
        rewardComponents: record?.reward_components ?? null,
        terminated: record?.terminated ?? false,
        truncatedContext: record?.truncated_context ?? false,
        violations: assistant.invalid_action_violations ?? [],
        metadata: record?.metadata ?? null,
        ...(record?.stop_strings !== undefined ? { stopStrings: record.stop_strings } : {}),
      };
    }
    k += 2;
  }
  yield {
    type: "sample_end",
    t: 0,
    sample,
    idx: s.idx,
    // The lab's export writes null for a sample under way (a paused run's, a checkpoint's): it ended there, cancelled.
    // Another tool's dump, converted, may name no ending (NeMo RL's, verl's, TRL's): it ended, how is not recorded.
    termination: caughtUnderWay(s) ? "cancelled" : ((s.termination ?? NOT_RECORDED) as TerminationReason),
    error: caughtUnderWay(s) ? (s.error ?? EXPORTED_UNDER_WAY) : (s.error ?? null),
    totalReward: s.total_reward ?? 0,
    turns: records.length,
  };
}

/** The ending of an imported sample whose dump names none (it did end: the dump holds it whole). */
export const NOT_RECORDED = "not_recorded";

/** A sample line of the lab's own export (its turn records) without an ending: the export caught it under way. */
const caughtUnderWay = (s: SampleLine) => s.termination === null && s["lab/turns"] !== undefined;

/**
 * The events that end the run of a read: its `rollout_end` (the final batch: the sample lines' keys but their message
 * logs, per sample; the metrics; partial when the footer says so or a sample was under way), and a failed run's
 * `rollout_error` after it.
 */
export function runEndEvents(samples: readonly SampleLine[], footer: JsonlReadResult["footer"]): RolloutEvent[] {
  const meta = footer ?? {};
  const batch: Record<string, unknown[]> = {};
  // The message logs are the samples' own (the run model keeps no second column of them).
  for (const key of new Set(samples.flatMap((s) => Object.keys(s).filter((k) => !k.startsWith("lab/") && k !== "message_log")))) {
    batch[key] = samples.map((s) => s[key] ?? null);
  }
  const partial = (meta.partial ?? false) || samples.some(caughtUnderWay);
  const end: RolloutEvent = { type: "rollout_end", t: 0, batch, metrics: meta.metrics ?? {}, partial };
  const error = (meta as Record<string, unknown>)[RUN_ERROR_KEY];
  return typeof error === "string" && error ? [end, { type: "rollout_error", t: 0, error }] : [end];
}
