/**
 * The result JSON of `scenario-format.md`: `{"samples": [...], "metrics": {...}}`, samples in input order, each
 * with its message log, every output batch key of its path, `termination`, and `error` where there was one.
 */

import { LabError } from "../core/index.js";
import { findJsonValueProblem, formatJsonPath, type BatchedDataDict, type Message } from "../core/index.js";
import { z } from "zod";
import type { SavedSample } from "../policy/replay.js";
import { describeJsonError } from "./json-text.js";
import { addProblems, checkValue, expected, JsonlAccumulator, SAMPLE_KEYS, tokenIdsSchema, type ProblemTally } from "./jsonl-reader.js";

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
export class SavedRunError extends LabError {
  override name = "SavedRunError";
  override readonly code = "invalid_saved_run";
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

/** What a replay reads of a saved sample: its `idx` and its messages (their text, and tokens where saved). */
const savedSampleSchema = z.looseObject(
  {
    idx: z.number({ error: expected("a number") }).int({ error: "expected an integer" }),
    message_log: z.array(
      z.looseObject(
        {
          role: z.string({ error: expected("a string") }),
          content: z.string({ error: expected("a string") }),
          token_ids: tokenIdsSchema.optional(),
        },
        { error: expected("a message object {role, content}") },
      ),
      { error: expected("a list of messages") },
    ),
  },
  { error: expected("a sample object {idx, message_log}") },
) as unknown as z.ZodType<SavedSample>;

/** A saved run's problems so far (as the JSONL checker counts them: ./jsonl-reader.ts). */
const tally = (): ProblemTally<SavedRunProblem> => ({ problems: [], problemCount: 0, badLines: 0 });
const addSavedRunProblems = (into: ProblemTally<SavedRunProblem>, found: SavedRunProblem[], total: number) =>
  addProblems(into, found, total, SAVED_RUN_MAX_PROBLEMS, MAX_PROBLEMS_PER_LINE);

/**
 * Reads a saved run for replay: a result JSON (`{"samples": [...]}`) or the lab's JSONL export (one sample per
 * line; lines without a sample's keys, such as the metrics line, are skipped). Every line is checked, and any
 * problem fails the whole read with a `SavedRunError` that lists the first few (`line 7: message_log[2].content:
 * expected a string`, `line 9: truncated: …`) and how many there are: a replay of part of a run would silently
 * differ from it. A replay matches samples by `idx`, so two samples of one `idx` are an error too (`line 4: idx: 2 is
 * also the idx of line 2`), and so is a value nested too deep or a `__proto__` key (src/core/json-value.ts).
 */
export function parseSavedRun(text: string): SavedSample[] {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const trimmed = body.trim();
  if (!trimmed.startsWith("{")) return parseSavedRunLines(body);
  let parsed: unknown;
  try {
    // First as one value: a result JSON written a sample per line looks like JSONL line by line. JSONL fails fast
    // (at the end of its first line).
    parsed = JSON.parse(trimmed);
  } catch (e) {
    if (!trimmed.includes("\n") || looksLikeJsonl(trimmed)) return parseSavedRunLines(body); // one line cut short: a truncated JSONL line
    throw new SavedRunError([{ line: null, path: null, message: describeJsonError(trimmed, e) }], 1, 1, null);
  }
  const record = parsed as Record<string, unknown>;
  // One line of a sample: a JSONL export of one sample without its metrics line.
  if (!Object.hasOwn(record, "samples") && SAMPLE_KEYS.some((k) => Object.hasOwn(record, k))) return parseSavedRunLines(body);
  const shape = findJsonValueProblem(parsed);
  if (shape) throw new SavedRunError([{ line: null, path: formatJsonPath(shape.path), message: shape.message }], 1, 1, null);
  if (!Array.isArray(record.samples)) {
    throw new SavedRunError([{ line: null, path: "samples", message: `${expected("a list of samples")({ input: record.samples })} (a result JSON; or give the run's JSONL export)` }], 1, 1, null);
  }
  const found = tally();
  const firstOfIdx = new Map<number, number>();
  const samples = record.samples.map((s, i) => {
    const prefix = `samples[${i}]`;
    const checked = checkValue(savedSampleSchema, s, MAX_PROBLEMS_PER_LINE);
    if (checked.ok) {
      const first = firstOfIdx.get(checked.value.idx);
      if (first === undefined) {
        firstOfIdx.set(checked.value.idx, i);
        return checked.value;
      }
      addSavedRunProblems(found, [{ line: null, path: `${prefix}.idx`, message: `${checked.value.idx} is also the idx of samples[${first}] (a replay matches samples by idx)` }], 1);
      return null;
    }
    const problems = checked.problems.map(({ path, message }) => ({ line: null, path: path ? `${prefix}${path.startsWith("[") ? "" : "."}${path}` : prefix, message }));
    addSavedRunProblems(found, problems, checked.total);
    return null;
  });
  if (found.problemCount > 0) throw new SavedRunError(found.problems, found.problemCount, found.badLines, null);
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

/** A JSONL saved run, every line through the JSONL checker (./jsonl-reader.ts) with the replay's sample schema. */
function parseSavedRunLines(text: string): SavedSample[] {
  const firstOfIdx = new Map<number, number>();
  const acc = new JsonlAccumulator<SavedSample>({
    sampleSchema: savedSampleSchema,
    // The metrics line, and any other object that is no sample, is not the replay's business.
    otherLines: "skip",
    maxProblems: SAVED_RUN_MAX_PROBLEMS,
    maxProblemsPerLine: MAX_PROBLEMS_PER_LINE,
    // The text is in memory already: no line is too long to hold.
    maxLineLength: Number.POSITIVE_INFINITY,
    checkSample: (sample, line) => {
      const first = firstOfIdx.get(sample.idx);
      if (first === undefined) {
        firstOfIdx.set(sample.idx, line);
        return null;
      }
      return { path: "idx", message: `${sample.idx} is also the idx of line ${first} (a replay matches samples by idx)` };
    },
  });
  acc.push(text);
  const read = acc.end();
  if (read.problemCount > 0) throw new SavedRunError(read.problems, read.problemCount, read.badLines, read.linesRead);
  return read.samples;
}

/**
 * The text of `JSON.stringify(value, null, indent)`, in pieces: the top `levels` levels of objects and arrays are
 * written member by member, each member below them by one `JSON.stringify` (its lines indented to its place), so no
 * piece is bigger than one of those members (a result's sample). The pieces joined are byte for byte the one
 * string, which a run of tens of thousands of samples cannot be (V8's strings stop at 2^29 − 24 characters: "Invalid
 * string length"). For plain data (what a result is); a value with `toJSON` is written by `JSON.stringify` whole.
 */
export function* jsonTextChunks(value: unknown, indent = 2, levels = 2): Generator<string> {
  if (!(indent > 0)) {
    const text = JSON.stringify(value);
    if (text !== undefined) yield text;
    return;
  }
  const step = " ".repeat(indent);
  // JSON.stringify leaves out object members it cannot write (undefined, functions, symbols) and writes them as
  // null in arrays.
  const skipped = (v: unknown) => v === undefined || typeof v === "function" || typeof v === "symbol";
  function* write(v: unknown, pad: string, level: number): Generator<string> {
    if (level >= levels || v === null || typeof v !== "object" || typeof (v as { toJSON?: unknown }).toJSON === "function") {
      const text = JSON.stringify(v, null, indent);
      yield pad && text.includes("\n") ? text.replace(/\n/g, `\n${pad}`) : text;
      return;
    }
    const inner = pad + step;
    if (Array.isArray(v)) {
      if (v.length === 0) return void (yield "[]");
      for (let i = 0; i < v.length; i++) {
        yield `${i === 0 ? "[" : ","}\n${inner}`;
        const item: unknown = v[i];
        if (skipped(item)) yield "null";
        else yield* write(item, inner, level + 1);
      }
      yield `\n${pad}]`;
      return;
    }
    const record = v as Record<string, unknown>;
    let first = true;
    for (const key of Object.keys(record)) {
      const item = record[key];
      if (skipped(item)) continue;
      yield `${first ? "{" : ","}\n${inner}${JSON.stringify(key)}: `;
      first = false;
      yield* write(item, inner, level + 1);
    }
    yield first ? "{}" : `\n${pad}}`;
  }
  if (skipped(value)) return; // JSON.stringify gives undefined: no text
  yield* write(value, "", 0);
}
