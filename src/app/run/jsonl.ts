/**
 * A run as JSONL: one sample per line (the message log with the spec's field names, the output batch keys,
 * `termination`, and the lab's per-turn record under `lab/turns`), then one line with the metrics and the
 * scenario. Importing rebuilds the same run model, so an imported run shows the same transcript; the replay
 * policy reads the same file (it takes the lines that have a `message_log`).
 */

import type { Message, Metadata, RolloutEvent, TerminationReason } from "../../core/index.js";
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
  const batch = model.finalBatch;
  const lines = model.samples.map((s, i) => {
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
  });
  lines.push(
    JSON.stringify({
      "lab/format": JSONL_FORMAT,
      mode: model.summary.mode,
      max_rollout_turns: model.summary.maxRolloutTurns,
      max_seq_len: model.summary.maxSeqLen,
      partial: model.summary.partial,
      metrics: model.summary.metrics ?? {},
      scenario,
    }),
  );
  return `${lines.join("\n")}\n`;
}

export class ImportError extends Error {
  override name = "ImportError";
}

interface ImportedSample {
  idx: number;
  task_name: string;
  message_log: Message[];
  total_reward?: number;
  termination?: TerminationReason | null;
  error?: string;
  "lab/prompt_messages"?: number;
  "lab/initial_env_info"?: Metadata;
  "lab/initial_stop_strings"?: string[] | null;
  "lab/turns"?: TurnRecord[];
  [key: string]: unknown;
}

/** Rebuilds a run model from an export (or from a runner result's samples); errors name the line and field. */
export function importJsonl(text: string): { model: RunModel; scenario: unknown } {
  const samples: ImportedSample[] = [];
  let footer: Record<string, unknown> | null = null;
  text.split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (e) {
      throw new ImportError(`line ${i + 1}: not valid JSON (${(e as Error).message})`);
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw new ImportError(`line ${i + 1}: expected an object`);
    const record = value as Record<string, unknown>;
    if ("message_log" in record) samples.push(checkSample(record, i + 1));
    else footer = record;
  });
  if (samples.length === 0) throw new ImportError("no sample lines (objects with a message_log)");
  const meta = (footer ?? {}) as { mode?: "sync" | "async"; max_rollout_turns?: number; max_seq_len?: number; partial?: boolean; metrics?: Record<string, unknown>; scenario?: unknown };
  const model = new RunModel();
  const events: RolloutEvent[] = [];
  const firstAssistant = (s: ImportedSample) => {
    const at = s.message_log.findIndex((m) => m.role === "assistant");
    return at < 0 ? s.message_log.length : at;
  };
  events.push({
    type: "rollout_start",
    t: 0,
    mode: meta.mode ?? "sync",
    maxRolloutTurns: meta.max_rollout_turns ?? 0,
    maxSeqLen: meta.max_seq_len ?? 0,
    samples: samples.map((s, sample) => {
      const prompt = s["lab/prompt_messages"] ?? firstAssistant(s);
      return {
        sample,
        idx: s.idx,
        task_name: s.task_name,
        message_log: s.message_log.slice(0, prompt),
        extra_env_info: s["lab/initial_env_info"] ?? null,
        ...(s["lab/initial_stop_strings"] !== undefined ? { stop_strings: s["lab/initial_stop_strings"] } : {}),
      };
    }),
  });
  samples.forEach((s, sample) => {
    const prompt = s["lab/prompt_messages"] ?? firstAssistant(s);
    const rest = s.message_log.slice(prompt);
    const records = s["lab/turns"] ?? [];
    for (let k = 0, turn = 0; k < rest.length; turn++) {
      const record = records[turn];
      const assistant = rest[k]!;
      const observation = rest[k + 1];
      events.push({ type: "turn_start", t: record?.gen_start ?? 0, sample, turn, inputTokens: record?.input_tokens ?? 0 });
      events.push({ type: "assistant_message", t: record?.gen_end ?? 0, sample, turn, message: assistant, truncated: record?.response_truncated ?? false });
      if (observation) {
        events.push({
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
        });
      }
      k += 2;
    }
    events.push({
      type: "sample_end",
      t: 0,
      sample,
      idx: s.idx,
      termination: s.termination ?? "max_turns",
      error: s.error ?? null,
      totalReward: s.total_reward ?? 0,
      turns: records.length,
    });
  });
  const batch: Record<string, unknown[]> = {};
  for (const key of new Set(samples.flatMap((s) => Object.keys(s).filter((k) => !k.startsWith("lab/"))))) {
    batch[key] = samples.map((s) => s[key] ?? null);
  }
  events.push({ type: "rollout_end", t: 0, batch, metrics: meta.metrics ?? {}, partial: meta.partial ?? false });
  for (const e of events) model.apply(e);
  return { model, scenario: meta.scenario ?? null };
}

function checkSample(record: Record<string, unknown>, line: number): ImportedSample {
  const fail = (field: string, expected: string) => {
    throw new ImportError(`line ${line}: ${field}: expected ${expected}`);
  };
  if (typeof record.idx !== "number") fail("idx", "a number");
  if (typeof record.task_name !== "string") fail("task_name", "a string");
  if (!Array.isArray(record.message_log)) fail("message_log", "a list of messages");
  (record.message_log as unknown[]).forEach((m, j) => {
    const msg = m as Partial<Message> | null;
    if (!msg || typeof msg !== "object") fail(`message_log[${j}]`, "an object");
    if (typeof msg!.role !== "string") fail(`message_log[${j}].role`, "a string");
    if (typeof msg!.content !== "string") fail(`message_log[${j}].content`, "a string");
    if (msg!.token_ids !== undefined && !(Array.isArray(msg!.token_ids) && msg!.token_ids.every(Number.isInteger))) {
      fail(`message_log[${j}].token_ids`, "a list of integers");
    }
    if (msg!.token_ids === undefined) (msg as Message).token_ids = [];
  });
  return record as ImportedSample;
}
