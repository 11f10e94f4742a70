/**
 * The result JSON of `scenario-format.md`: `{"samples": [...], "metrics": {...}}`, samples in input order, each
 * with its message log, every output batch key of its path, `termination`, and `error` where there was one.
 */

import type { BatchedDataDict, Message } from "../core/index.js";
import { z } from "zod";
import type { SavedSample } from "../policy/replay.js";
import { describeJsonError, jsonErrorOffset, jsonErrorWhat } from "./json-text.js";

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

/** One problem of a saved run: its line (1-based; null in a result JSON), the field path, what is wrong. */
export interface SavedRunProblem {
  line: number | null;
  path: string | null;
  message: string;
}

/** How many problems of a saved run its error lists (all are counted). */
export const SAVED_RUN_MAX_PROBLEMS = 5;
const MAX_PROBLEMS_PER_LINE = 3;

export const formatSavedRunProblem = (p: SavedRunProblem): string =>
  `${p.line !== null ? `line ${p.line}: ` : ""}${p.path ? `${p.path}: ` : ""}${p.message}`;

/**
 * A saved run a replay cannot use: its first problems (line, field path, what was expected) and how many there are.
 * A replay of the valid part only would silently differ from the saved run, so any problem fails it.
 */
export class SavedRunError extends Error {
  override name = "SavedRunError";
  constructor(
    readonly problems: SavedRunProblem[],
    readonly problemCount: number,
    readonly badLines: number,
    readonly lines: number | null,
  ) {
    const more = problemCount - problems.length;
    const where = lines !== null ? ` (${badLines} of ${lines} lines)` : "";
    super(
      `the saved run has ${problemCount === 1 ? "a problem" : `${problemCount} problems`}${where}; a replay needs all of it:\n` +
        problems.map(formatSavedRunProblem).join("\n") +
        (more > 0 ? `\n… and ${more} more ${more === 1 ? "problem" : "problems"}` : ""),
    );
  }
}

/** `expected …`, or `missing (expected …)` when the key is absent (the wording of the lab's JSONL import). */
const expected = (what: string) => (issue: { input?: unknown }) =>
  issue.input === undefined ? `missing (expected ${what})` : `expected ${what}`;

/** What a replay reads of a saved sample: its `idx` and its messages (their text, and tokens where saved). */
const savedSampleSchema = z.looseObject(
  {
    idx: z.number({ error: expected("a number") }),
    message_log: z.array(
      z.looseObject(
        {
          role: z.string({ error: expected("a string") }),
          content: z.string({ error: expected("a string") }),
          token_ids: z.array(z.number({ error: expected("an integer") }).int({ error: "expected an integer" }), { error: expected("a list of integers") }).optional(),
        },
        { error: expected("a message object {role, content}") },
      ),
      { error: expected("a list of messages") },
    ),
  },
  { error: expected("a sample object {idx, message_log}") },
);

/** A line is a sample when it has one of these keys (as in the lab's import); other objects (the metrics line) are skipped. */
const SAMPLE_KEYS = ["message_log", "idx", "task_name"];

const jsonType = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "a list" : typeof v === "object" ? "an object" : `a ${typeof v}`);

function fieldPath(path: readonly PropertyKey[]): string | null {
  let out = "";
  for (const part of path) out += typeof part === "number" ? `[${part}]` : `${out ? "." : ""}${String(part)}`;
  return out || null;
}

class SavedRunProblems {
  readonly problems: SavedRunProblem[] = [];
  count = 0;
  badLines = 0;
  add(found: SavedRunProblem[], total = found.length): void {
    this.badLines += 1;
    this.count += total;
    for (const p of found.slice(0, MAX_PROBLEMS_PER_LINE)) if (this.problems.length < SAVED_RUN_MAX_PROBLEMS) this.problems.push(p);
  }
  /** Checks one sample; its problems carry `line` and `prefix` (`samples[3]`) before their field path. */
  check(value: unknown, line: number | null, prefix: string): SavedSample | null {
    const parsed = savedSampleSchema.safeParse(value);
    if (parsed.success) return parsed.data as SavedSample;
    const issues = parsed.error.issues;
    this.add(
      issues.slice(0, MAX_PROBLEMS_PER_LINE).map((issue) => {
        const path = fieldPath(issue.path);
        return { line, path: prefix ? (path ? `${prefix}${path.startsWith("[") ? "" : "."}${path}` : prefix) : path, message: issue.message };
      }),
      issues.length,
    );
    return null;
  }
}

/** What is wrong with a line that `JSON.parse` refused: where, and why (a last line cut short reads as truncated). */
function badJsonLine(line: string, error: unknown, last: boolean): string {
  const offset = jsonErrorOffset(line);
  const what = jsonErrorWhat(error);
  const shortWhat = what.length > 160 ? `${what.slice(0, 160)}…` : what;
  if (offset === null || offset !== line.length) return `not valid JSON${offset !== null ? ` at column ${offset + 1}` : ""} (${shortWhat})`;
  return last
    ? `truncated: the file ends inside this line (no newline at the end, and its JSON stops at column ${offset + 1})`
    : `not valid JSON: the line ends before its JSON does, at column ${offset + 1} (cut short?)`;
}

/**
 * Reads a saved run for replay: a result JSON (`{"samples": [...]}`) or the lab's JSONL export (one sample per
 * line; lines without a sample's keys, such as the metrics line, are skipped). Every line is checked, and any
 * problem fails the whole read with a `SavedRunError` that lists the first few (`line 7: message_log[2].content:
 * expected a string`, `line 9: truncated: …`) and how many there are: a replay of part of a run would silently
 * differ from it.
 */
export function parseSavedRun(text: string): SavedSample[] {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const trimmed = body.trim();
  if (!trimmed.startsWith("{") || looksLikeJsonl(trimmed)) return parseSavedRunLines(body);
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch (e) {
    if (!trimmed.includes("\n")) return parseSavedRunLines(body); // one line cut short: a truncated JSONL line
    throw new SavedRunError([{ line: null, path: null, message: describeJsonError(trimmed, e) }], 1, 1, null);
  }
  const record = parsed as Record<string, unknown>;
  // One line of a sample: a JSONL export of one sample without its metrics line.
  if (!("samples" in record) && SAMPLE_KEYS.some((k) => k in record)) return parseSavedRunLines(body);
  if (!Array.isArray(record.samples)) {
    throw new SavedRunError([{ line: null, path: "samples", message: `${expected("a list of samples")({ input: record.samples })} (a result JSON; or give the run's JSONL export)` }], 1, 1, null);
  }
  const found = new SavedRunProblems();
  const samples = record.samples.map((s, i) => found.check(s, null, `samples[${i}]`));
  if (found.count > 0) throw new SavedRunError(found.problems, found.count, found.badLines, null);
  return samples as SavedSample[];
}

/** A JSONL export has a whole JSON object on one of its first lines; a result JSON (one value, maybe pretty) has none. */
function looksLikeJsonl(trimmed: string): boolean {
  let start = 0;
  for (let seen = 0; seen < 3 && start < trimmed.length; ) {
    const nl = trimmed.indexOf("\n", start);
    const line = (nl === -1 ? trimmed.slice(start) : trimmed.slice(start, nl)).trim();
    start = nl === -1 ? trimmed.length : nl + 1;
    if (!line) continue;
    seen++;
    if (nl === -1 && seen === 1) return false; // a single line: the caller decides
    if (!line.startsWith("{") || !line.endsWith("}")) continue;
    try {
      const v: unknown = JSON.parse(line);
      if (typeof v === "object" && v !== null && !Array.isArray(v)) return true;
    } catch {
      // not a whole line of JSON
    }
  }
  return false;
}

function parseSavedRunLines(text: string): SavedSample[] {
  const found = new SavedRunProblems();
  const samples: SavedSample[] = [];
  const lines = text.split("\n");
  // A text ending in a newline has an empty last piece: the real last line is the one before it.
  const endsWithNewline = lines.at(-1) === "";
  let count = 0;
  lines.forEach((raw, i) => {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (!line.trim()) return;
    count = i + 1;
    const lineNo = i + 1;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (e) {
      found.add([{ line: lineNo, path: null, message: badJsonLine(line, e, i === lines.length - 1 && !endsWithNewline) }]);
      return;
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      found.add([{ line: lineNo, path: null, message: `expected an object (a sample or the metrics line), got ${jsonType(value)}` }]);
      return;
    }
    if (!SAMPLE_KEYS.some((k) => Object.prototype.hasOwnProperty.call(value, k))) return;
    const sample = found.check(value, lineNo, "");
    if (sample) samples.push(sample);
  });
  if (found.count > 0) throw new SavedRunError(found.problems, found.count, found.badLines, count);
  return samples;
}
