/**
 * The result JSON of `scenario-format.md`: `{"samples": [...], "metrics": {...}}`, samples in input order, each
 * with its message log, every output batch key of its path, `termination`, and `error` where there was one.
 */

import type { BatchedDataDict, Message } from "../core/index.js";
import type { SavedSample } from "../policy/replay.js";

export interface ResultSample {
  idx: number;
  task_name: string;
  message_log: Message[];
  extra_env_info: unknown;
  total_reward: number;
  truncated: boolean;
  termination: string;
  error?: string;
  [key: string]: unknown;
}

export interface RolloutResultJson {
  samples: ResultSample[];
  metrics: Record<string, unknown>;
}

const LEADING_KEYS = ["idx", "task_name", "message_log", "extra_env_info", "total_reward", "truncated", "termination"];

function messageJson(m: Message): Message {
  const out: Message = { role: m.role, content: m.content, token_ids: m.token_ids };
  if (m.generation_logprobs) out.generation_logprobs = m.generation_logprobs;
  if (m.invalid_action_violations?.length) out.invalid_action_violations = m.invalid_action_violations;
  return out;
}

export function batchToResult(batch: BatchedDataDict, metrics: Record<string, unknown>): RolloutResultJson {
  const keys = [...LEADING_KEYS, ...batch.keys().filter((k) => !LEADING_KEYS.includes(k) && k !== "error")];
  const samples = batch.rows().map((row) => {
    const sample: Record<string, unknown> = {};
    for (const key of keys) {
      if (!(key in row)) continue;
      sample[key] = key === "message_log" ? (row[key] as Message[]).map(messageJson) : row[key];
    }
    if (typeof row.error === "string") sample.error = row.error;
    return sample as ResultSample;
  });
  return { samples, metrics };
}

/** Timing values are wall clock: left out wherever two runs are compared. */
export function withoutTiming(metrics: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(metrics).filter(([k]) => !k.startsWith("timing/")));
}

/**
 * Reads a saved run for replay: a result JSON (`{"samples": [...]}`) or the lab's JSONL export (one sample per
 * line; lines without a `message_log`, such as a metrics line, are skipped).
 */
export function parseSavedRun(text: string): SavedSample[] {
  const trimmed = text.trim();
  let samples: unknown[];
  if (trimmed.startsWith("{") && !trimmed.includes("\n{")) {
    const parsed = JSON.parse(trimmed) as { samples?: unknown[] };
    if (!Array.isArray(parsed.samples)) throw new Error("expected a result with a 'samples' list");
    samples = parsed.samples;
  } else {
    samples = trimmed
      .split("\n")
      .filter((line) => line.trim())
      .map((line, i) => {
        try {
          return JSON.parse(line) as unknown;
        } catch (e) {
          throw new Error(`line ${i + 1}: not valid JSON: ${(e as Error).message}`);
        }
      })
      .filter((s) => typeof s === "object" && s !== null && "message_log" in s);
  }
  return samples.map((s, i) => {
    const sample = s as Partial<SavedSample>;
    if (typeof sample.idx !== "number" || !Array.isArray(sample.message_log)) {
      throw new Error(`sample ${i}: expected {idx: number, message_log: [...]}`);
    }
    return sample as SavedSample;
  });
}
