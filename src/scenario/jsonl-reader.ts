/**
 * Reads a run export (JSONL) line by line and checks every line, without giving up at the first bad one: a `File` /
 * `Blob` in the page, or any `ReadableStream<Uint8Array>` (a Node file stream through `Readable.toWeb`, a test's
 * generated stream). The bytes are decoded chunk by chunk (a character split across two chunks is whole; bytes that are
 * not UTF-8 fail their line, `line 7: not valid UTF-8 at byte 5123`, instead of becoming U+FFFD) and split into lines
 * as they come: the text is never one string, only the line being read is
 * held (and at most `maxLineLength` characters of it: a longer line is skipped and reported). What is kept is the
 * valid records (that is the import), the first `maxProblems` problems and the counts.
 *
 * Each line is JSON: a sample (it has `message_log`, `idx` or `task_name`) or the run's last line (metrics,
 * scenario; it has `lab/format`, `metrics`, `scenario` or `mode`). Samples and the last line are checked against the
 * schemas below; a problem names the line and the field path: `line 1234: message_log[2].content: expected a
 * string`. A line nested deeper than the lab's JSON depth limit, or with a `__proto__` key, is refused before the
 * schemas read it (`line 3: lab/turns[0].metadata.a.a…: nested deeper than 100 levels`; src/core/json-value.ts). A last line cut short (no newline at the end and not valid JSON) is reported as truncated.
 *
 * The same checks read a saved run for a replay (./result.ts `parseSavedRun`), with its own sample schema and its
 * metrics line skipped.
 */

import { z } from "zod";
import { findJsonValueProblem, formatJsonPath, type Message, type Metadata, type TerminationReason } from "../core/index.js";
import { jsonErrorOffset, jsonErrorWhat } from "./json-text.js";
import { detectFormat, dumpFormat, FORMAT_NAMES, knownFormats, RecordProblem, type DumpFormat } from "./imports/index.js";
import { JsonlLineSplitter, readJsonlStream } from "./jsonl-lines.js";

/** `expected …`, or `missing (expected …)` when the key is absent. */
export const expected = (what: string) => (issue: { input?: unknown }) =>
  issue.input === undefined ? `missing (expected ${what})` : `expected ${what}`;

/** The largest token id: token ids are vocabulary indices, stored as int32 (src/app/run/compact-messages.ts). */
export const MAX_TOKEN_ID = 0x7fffffff;

/** Whether `x` is a token id: an integer from 0 to `MAX_TOKEN_ID`. */
export const isTokenId = (x: unknown): x is number => typeof x === "number" && (x | 0) === x && x >= 0;

const TOKEN_ID = `expected a token id (an integer from 0 to ${MAX_TOKEN_ID})`;

/** A message's `token_ids`: a list of token ids (what `isTokenId` says, element by element). */
export const tokenIdsSchema = z.array(
  z.number({ error: TOKEN_ID }).int({ error: TOKEN_ID }).min(0, { error: TOKEN_ID }).max(MAX_TOKEN_ID, { error: TOKEN_ID }),
  { error: expected("a list of token ids") },
);

const num = z.number({ error: expected("a number") });
const int = z.number({ error: expected("an integer") }).int({ error: "expected an integer" });
const str = z.string({ error: expected("a string") });
const bool = z.boolean({ error: expected("true or false") });
const strings = z.array(str, { error: expected("a list of strings") });
const metadata = z.record(z.string(), z.unknown(), { error: expected("an object or null") }).nullable();

const violation = z.looseObject(
  { type: str, severity: num, locus: str, detail: str.nullable().optional() },
  { error: expected("a violation object {type, severity, locus, detail}") },
);

const message = z.looseObject(
  {
    role: str,
    content: str,
    // A message without token ids has none (every reader of a sample line may count on the list).
    token_ids: tokenIdsSchema.default(() => []),
    generation_logprobs: z.array(num, { error: expected("a list of numbers") }).optional(),
    invalid_action_violations: z.array(violation, { error: expected("a list of violations") }).optional(),
  },
  { error: expected("a message object {role, content}") },
);

const turnRecord = z.looseObject(
  {
    turn: int.optional(),
    reward: num.nullable().optional(),
    reward_components: z.record(z.string(), num, { error: expected("an object of numbers or null") }).nullable().optional(),
    terminated: bool.optional(),
    truncated_context: bool.optional(),
    response_truncated: bool.optional(),
    input_tokens: num.nullable().optional(),
    gen_start: num.nullable().optional(),
    gen_end: num.nullable().optional(),
    env_end: num.nullable().optional(),
    metadata: metadata.optional(),
    stop_strings: strings.nullable().optional(),
  },
  { error: expected("a turn record object") },
);

/** One sample line: the message log with the spec's field names, the batch keys, and the lab's records. */
export const sampleLineSchema = z.looseObject({
  // A whole number ("expected a number" for another type, as before; "expected an integer" for 1.5).
  idx: num.int({ error: "expected an integer" }),
  task_name: str,
  message_log: z.array(message, { error: expected("a list of messages") }),
  total_reward: num.nullable().optional(),
  termination: str.nullable().optional(),
  error: str.nullable().optional(),
  "lab/prompt_messages": int.nonnegative({ error: "expected an integer ≥ 0" }).optional(),
  "lab/initial_env_info": metadata.optional(),
  "lab/initial_stop_strings": strings.nullable().optional(),
  "lab/turns": z.array(turnRecord, { error: expected("a list of turn records") }).optional(),
});

/** The run's last line: metrics and the scenario. */
export const footerLineSchema = z.looseObject({
  "lab/format": str.optional(),
  mode: z.enum(["sync", "async"], { error: expected('"sync" or "async"') }).optional(),
  max_rollout_turns: num.optional(),
  max_seq_len: num.optional(),
  partial: bool.optional(),
  metrics: z.record(z.string(), z.unknown(), { error: expected("an object") }).nullable().optional(),
  scenario: z.unknown().optional(),
});

export interface TurnRecordLine {
  turn?: number;
  reward?: number | null;
  reward_components?: Record<string, number> | null;
  terminated?: boolean;
  truncated_context?: boolean;
  response_truncated?: boolean;
  input_tokens?: number | null;
  gen_start?: number | null;
  gen_end?: number | null;
  env_end?: number | null;
  metadata?: Metadata;
  stop_strings?: string[] | null;
}

export interface SampleLine {
  idx: number;
  task_name: string;
  message_log: Message[];
  total_reward?: number | null;
  termination?: TerminationReason | null;
  error?: string | null;
  "lab/prompt_messages"?: number;
  "lab/initial_env_info"?: Metadata;
  "lab/initial_stop_strings"?: string[] | null;
  "lab/turns"?: TurnRecordLine[];
  [key: string]: unknown;
}

export type FooterLine = z.infer<typeof footerLineSchema>;

export interface ImportProblem {
  /** The file it is in, when several were read as one run. */
  file?: string;
  /** 1-based line number in the file. */
  line: number;
  /** The field path inside the line's object (`message_log[2].content`), null for the line as a whole. */
  path: string | null;
  message: string;
}

/** `line 12: message_log[0].content: expected a string`. */
export const formatProblem = (p: ImportProblem): string => `${p.file ? `${p.file} ` : ""}line ${p.line}: ${p.path ? `${p.path}: ` : ""}${p.message}`;

export interface JsonlReadOptions {
  /**
   * What the lines are: `auto` (default: the lab's own lines, or a known rollout dump, ./imports/, decided by the
   * first record), `lab`, or a dump format's name (`nemo-rl`, `verl`, …).
   */
  format?: string;
  /** The file's name (a dump's step number may be in it: `train_data_step12.jsonl`). */
  fileName?: string;
  /** How many problems to keep (all are counted). Default 20. */
  maxProblems?: number;
  /** How many problems of one line to keep (a line with a broken list can have thousands). Default 3. */
  maxProblemsPerLine?: number;
  /** A longer line is skipped and reported without being held. Default 16 Mi characters (a long run's sample with its logprobs and per-turn states is a few MB). */
  maxLineLength?: number;
  /** Called after each chunk read (and once at the end). */
  onProgress?: (progress: JsonlProgress) => void;
  /**
   * Called with the valid samples read since the last call, as they are read (before the whole file is checked: a
   * preview, not an import). They are the same objects the result's `samples` ends with.
   */
  onSamples?: (samples: SampleLine[]) => void;
  signal?: AbortSignal;
}

export interface JsonlProgress {
  linesRead: number;
  bytesRead: number;
  /** The file's size when known (a Blob). */
  totalBytes: number | null;
}

export interface JsonlReadResult<S = SampleLine> {
  samples: S[];
  /** The last valid metrics line, if any. */
  footer: FooterLine | null;
  /** Lines that passed (samples and metrics lines). */
  validLines: number;
  /** Lines with at least one problem. */
  badLines: number;
  /** The first problems, in file order. */
  problems: ImportProblem[];
  /** Every problem found (the list above stops at `maxProblems`). */
  problemCount: number;
  /** Lines seen, blank ones included. */
  linesRead: number;
  bytesRead: number;
  /** The most characters of text held at once (a chunk plus the line being read): what "streaming" means here. */
  maxBufferedChars: number;
}

export const DEFAULT_MAX_PROBLEMS = 20;
export const DEFAULT_MAX_LINE_LENGTH = 16 * 1024 * 1024;

/** `message_log[2].content` of a schema issue's path. */
export function fieldPath(path: readonly PropertyKey[]): string | null {
  let out = "";
  for (const part of path) out += typeof part === "number" ? `[${part}]` : `${out ? "." : ""}${String(part)}`;
  return out || null;
}

/** A line is a sample when it has one of these keys; else the metrics line when it has one of FOOTER_KEYS. */
export const SAMPLE_KEYS = ["message_log", "idx", "task_name"];
const FOOTER_KEYS = ["lab/format", "metrics", "scenario", "mode"];

const jsonType = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "a list" : typeof v === "object" ? "an object" : `a ${typeof v}`);

/** Where a read's problems are counted (a `JsonlReadResult`, or a saved run's tally: ./result.ts). */
export interface ProblemTally<P> {
  problems: P[];
  problemCount: number;
  badLines: number;
}

/** One bad line's problems (`total` of them in all) into `tally`: the first `maxPerLine` kept while under `maxProblems`. */
export function addProblems<P>(tally: ProblemTally<P>, found: readonly P[], total: number, maxProblems: number, maxPerLine: number): void {
  tally.badLines += 1;
  tally.problemCount += total;
  for (const p of found.slice(0, maxPerLine)) {
    if (tally.problems.length >= maxProblems) break;
    tally.problems.push(p);
  }
}

/**
 * `value` checked against `schema` (through the Standard Schema entry point: the same checks as safeParse, without
 * building a ZodError for a bad value): its output, or its first `max` problems by field path and how many there are.
 */
export function checkValue<T>(
  schema: z.ZodType<T>,
  value: unknown,
  max: number,
): { ok: true; value: T } | { ok: false; problems: { path: string | null; message: string }[]; total: number } {
  const parsed = schema["~standard"].validate(value);
  if (parsed instanceof Promise) throw new Error("the JSONL line schemas are synchronous");
  if (!parsed.issues) return { ok: true, value: parsed.value as T };
  const issues = parsed.issues;
  return {
    ok: false,
    problems: issues.slice(0, max).map((issue) => ({ path: fieldPath((issue.path ?? []).map((p) => (typeof p === "object" ? p.key : p))), message: issue.message })),
    total: issues.length,
  };
}

/** What the accumulator takes a line for, besides its limits. */
export interface JsonlLineOptions<S> extends Pick<JsonlReadOptions, "maxProblems" | "maxProblemsPerLine" | "maxLineLength" | "format" | "fileName"> {
  /**
   * What a sample line must be. Default: the lab's sample line (`sampleLineSchema`). Another schema may check a
   * message's `token_ids` and `generation_logprobs` only as `tokenIdsSchema` and a list of finite numbers do (a line
   * whose lists pass those checks is validated with them set aside).
   */
  sampleSchema?: z.ZodType<S>;
  /** A line that is no sample: checked as the run's metrics line (default), or skipped (a replay reads samples only). */
  otherLines?: "check" | "skip";
  /**
   * A check of a valid sample against the lines before it (a replay's `idx` must be unique): a problem (its field
   * path and what is wrong) fails the line, null passes it.
   */
  checkSample?: (sample: S, line: number) => { path: string | null; message: string } | null;
}

function isBlank(line: string): boolean {
  for (let k = 0; k < line.length; k++) {
    const c = line.charCodeAt(k);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d && c !== 0xfeff) return false;
  }
  return true;
}

/** A read of nothing yet: what a reader adds its lines to. */
export function emptyReadResult<S = SampleLine>(): JsonlReadResult<S> {
  return { samples: [], footer: null, validLines: 0, badLines: 0, problems: [], problemCount: 0, linesRead: 0, bytesRead: 0, maxBufferedChars: 0 };
}

/**
 * The line checker, fed text in pieces (`push`; bytes: `lines.pushBytes`) and told when the text ends (`end`); its
 * lines are split by ./jsonl-lines.ts (`JsonlLineSplitter`), which holds only the pieces of the line not finished yet.
 * Used by the streaming reader and by `importJsonl` on a text in memory.
 */
export class JsonlAccumulator<S = SampleLine> {
  private readonly maxProblems: number;
  private readonly maxPerLine: number;
  private readonly sampleSchema: z.ZodType<S>;
  private readonly skipOtherLines: boolean;
  private readonly checkSample: JsonlLineOptions<S>["checkSample"];
  private ended = false;
  private readonly format: string;
  private readonly fileName: string | undefined;
  /** The dump format the lines are in (named, or found in the first record); null: the lab's own lines. */
  private dump: DumpFormat | null;
  /** Whether the first record decided already (`auto`). */
  private decided = false;
  /** How many records of a dump were converted (a record's position, for its `idx` where it has none). */
  private converted = 0;
  readonly result: JsonlReadResult<S> = emptyReadResult<S>();
  /** Where the input is split into lines (it counts them, and the bytes, in `result`). */
  readonly lines: JsonlLineSplitter;

  constructor(options: JsonlLineOptions<S> = {}) {
    const format = options.format ?? "auto";
    if (format !== "auto" && format !== "lab" && !dumpFormat(format)) throw new Error(`unknown format '${format}' (expected ${FORMAT_NAMES.join(", ")})`);
    this.format = format;
    this.dump = dumpFormat(format) ?? null;
    this.fileName = options.fileName;
    this.maxProblems = options.maxProblems ?? DEFAULT_MAX_PROBLEMS;
    this.maxPerLine = options.maxProblemsPerLine ?? 3;
    this.sampleSchema = options.sampleSchema ?? (sampleLineSchema as unknown as z.ZodType<S>);
    this.skipOtherLines = options.otherLines === "skip";
    this.checkSample = options.checkSample;
    this.lines = new JsonlLineSplitter(
      {
        line: (text, lineNo, atEnd) => {
          const line = text.endsWith("\r") ? text.slice(0, -1) : text;
          if (!isBlank(line)) this.check(line, lineNo, atEnd);
        },
        badLine: (lineNo, message) => this.problem([{ line: lineNo, path: null, message }]),
      },
      options.maxLineLength ?? DEFAULT_MAX_LINE_LENGTH,
      this.result,
    );
  }

  push(text: string): void {
    if (this.ended) throw new Error("JsonlAccumulator: push after end");
    this.lines.push(text);
  }

  end(): JsonlReadResult<S> {
    this.ended = true;
    this.lines.end();
    return this.result;
  }

  /**
   * A dump's record as the lab's sample line (null: the line is the lab's own; false: a problem was reported). In
   * `auto`, the first record decides whether the lines are the lab's or which dump's.
   */
  private fromDump(record: Record<string, unknown>, lineNo: number): Record<string, unknown> | null | false {
    if (this.format === "lab") return null;
    if (!this.decided && !this.dump) {
      this.decided = true;
      if (isLabRecord(record)) return null;
      this.dump = detectFormat(record);
      // A metrics line of the lab's that no dump format claims (a hand-written one first): the lab's lines.
      if (!this.dump && FOOTER_KEYS.some((k) => Object.prototype.hasOwnProperty.call(record, k))) return null;
      if (!this.dump) {
        const keys = Object.keys(record).slice(0, 12).join(", ");
        this.problem([{ line: lineNo, path: null, message: `not a run the lab reads (its keys: ${keys || "none"}); expected one of: ${knownFormats()}` }]);
        return false;
      }
    }
    this.decided = true;
    if (!this.dump) return null;
    try {
      return this.dump.convert(record, { position: this.converted++, ...(this.fileName ? { fileName: this.fileName } : {}) }) as unknown as Record<string, unknown>;
    } catch (e) {
      if (!(e instanceof RecordProblem)) throw e;
      this.problem([{ line: lineNo, path: e.path, message: `${e.message} (${this.dump.name})` }]);
      return false;
    }
  }

  private problem(problems: ImportProblem[], total = problems.length): void {
    addProblems(this.result, problems, total, this.maxProblems, this.maxPerLine);
  }

  private check(line: string, lineNo: number, atEnd: boolean): void {
    // A line that does not start with `{` and end with `}` is no sample: our own scanner says why without JSON.parse
    // building an error (that takes tens of µs: a million lines of junk add up).
    const trimmed = line.trim();
    const early = trimmed.charCodeAt(0) === 0x7b && trimmed.charCodeAt(trimmed.length - 1) === 0x7d ? null : jsonErrorOffset(line);
    let value: unknown;
    try {
      if (early !== null) throw new NotJson(unexpectedAt(line, early));
      value = JSON.parse(line);
    } catch (e) {
      const offset = early ?? jsonErrorOffset(line);
      const what = e instanceof NotJson ? e.what : jsonErrorWhat(e);
      const shortWhat = what.length > 160 ? `${what.slice(0, 160)}…` : what;
      const message =
        offset !== line.length
          ? `not valid JSON${offset !== null ? ` at column ${offset + 1}` : ""} (${shortWhat})`
          : atEnd
            ? `truncated: the file ends inside this line (no newline at the end, and its JSON stops at column ${offset + 1})`
            : `not valid JSON: the line ends before its JSON does, at column ${offset + 1} (cut short?)`;
      this.problem([{ line: lineNo, path: null, message }]);
      return;
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      this.problem([{ line: lineNo, path: null, message: `expected an object (a sample or the metrics line), got ${jsonType(value)}` }]);
      return;
    }
    this.checkRecord(value as Record<string, unknown>, lineNo);
  }

  /**
   * A record read from a file that is not JSONL (a Parquet row: ./imports/parquet.ts), checked as a line's object
   * is: `lineNo` is its 1-based row number, which its problems name as their line.
   */
  pushRecord(record: Record<string, unknown>, lineNo: number): void {
    if (this.ended) throw new Error("JsonlAccumulator: push after end");
    this.result.linesRead += 1;
    this.checkRecord(record, lineNo);
  }

  private checkRecord(parsed: Record<string, unknown>, lineNo: number): void {
    let record = parsed;
    const foreign = this.fromDump(record, lineNo);
    if (foreign === false) return;
    if (foreign) record = foreign;
    const isSample = SAMPLE_KEYS.some((k) => Object.prototype.hasOwnProperty.call(record, k));
    if (!isSample && this.skipOtherLines) return;
    const isFooter = !isSample && FOOTER_KEYS.some((k) => Object.prototype.hasOwnProperty.call(record, k));
    if (!isSample && !isFooter) {
      this.problem([
        { line: lineNo, path: null, message: "expected a sample (idx, task_name, message_log) or the metrics line (lab/format, metrics, scenario)" },
      ]);
      return;
    }
    // The messages' number lists (most of a line) are checked here when they are clean, not element by element
    // through the schema (which then sees them empty); a list with any doubt goes through the schema as it is.
    const aside = isSample ? setAsideNumberLists(record) : null;
    // Depth and `__proto__` keys, before any schema reads the line (on the line with its clean number lists set
    // aside: those hold no object, and they are most of a line).
    const shape = findJsonValueProblem(aside ? aside.record : record);
    if (shape) {
      this.problem([{ line: lineNo, path: formatJsonPath(shape.path), message: shape.message }]);
      return;
    }
    const checked = checkValue<unknown>(isSample ? this.sampleSchema : footerLineSchema, aside ? aside.record : record, this.maxPerLine);
    if (!checked.ok) {
      this.problem(
        checked.problems.map((p) => ({ line: lineNo, ...p })),
        checked.total,
      );
      return;
    }
    if (aside) aside.restore(checked.value as { message_log: Record<string, unknown>[] });
    const extra = isSample && this.checkSample ? this.checkSample(checked.value as S, lineNo) : null;
    if (extra) {
      this.problem([{ line: lineNo, ...extra }]);
      return;
    }
    this.result.validLines += 1;
    if (isSample) this.result.samples.push(checked.value as S);
    else this.result.footer = checked.value as FooterLine;
  }
}

/**
 * Surely a lab line: a sample's keys (but `idx`, which NeMo RL's dumps have too) or the export's last line's own
 * (`lab/format`, `scenario`). `metrics` and `mode` alone are not: other writers use those names (verifiers' results).
 */
const isLabRecord = (record: Record<string, unknown>) =>
  ["message_log", "task_name", "lab/format", "scenario"].some((k) => Object.prototype.hasOwnProperty.call(record, k));

const isTokenIdList = (v: unknown[]) => {
  for (let i = 0; i < v.length; i++) if (!isTokenId(v[i])) return false;
  return true;
};
const isNumberList = (v: unknown[]) => {
  for (let i = 0; i < v.length; i++) {
    const x = v[i];
    if (typeof x !== "number" || !Number.isFinite(x)) return false;
  }
  return true;
};

/**
 * The sample line with its messages' `token_ids` and `generation_logprobs` emptied, when every such list is what the
 * schema asks (token ids, finite numbers), and how to put them back into the schema's output; null otherwise.
 */
function setAsideNumberLists(record: Record<string, unknown>): { record: Record<string, unknown>; restore(sample: { message_log: Record<string, unknown>[] }): void } | null {
  const log = record.message_log;
  if (!Array.isArray(log)) return null;
  const lists: [unknown, unknown][] = [];
  const messages: unknown[] = [];
  for (const m of log) {
    if (typeof m !== "object" || m === null || Array.isArray(m)) return null;
    const { token_ids: ids, generation_logprobs: lp } = m as { token_ids?: unknown; generation_logprobs?: unknown };
    if (ids !== undefined && !(Array.isArray(ids) && isTokenIdList(ids))) return null;
    if (lp !== undefined && !(Array.isArray(lp) && isNumberList(lp))) return null;
    lists.push([ids, lp]);
    const copy: Record<string, unknown> = { ...m };
    if (ids !== undefined) copy.token_ids = [];
    if (lp !== undefined) copy.generation_logprobs = [];
    messages.push(copy);
  }
  return {
    record: { ...record, message_log: messages },
    restore(sample) {
      sample.message_log.forEach((m, i) => {
        const [ids, lp] = lists[i]!;
        if (ids !== undefined) m.token_ids = ids;
        if (lp !== undefined) m.generation_logprobs = lp;
      });
    },
  };
}

class NotJson {
  constructor(readonly what: string) {}
}

/** What is wrong at `offset` of a line that is not JSON, in the words JSON.parse would use. */
function unexpectedAt(line: string, offset: number | null): string {
  if (offset === null || offset >= line.length) return "Unexpected end of JSON input";
  const ch = String.fromCodePoint(line.codePointAt(offset)!);
  return `Unexpected token '${ch}'`;
}

/** A file or a byte stream, read chunk by chunk. */
export type JsonlSource = Blob | ReadableStream<Uint8Array>;

/** Streams `source` through the checker; never throws for bad content (only for an abort or a failing stream). */
export async function readJsonl(source: JsonlSource, options: JsonlReadOptions = {}): Promise<JsonlReadResult> {
  const totalBytes = typeof Blob !== "undefined" && source instanceof Blob ? source.size : null;
  const stream = typeof Blob !== "undefined" && source instanceof Blob ? (source.stream() as ReadableStream<Uint8Array>) : (source as ReadableStream<Uint8Array>);
  const acc = new JsonlAccumulator(options);
  let handed = 0;
  const progress = () => {
    if (options.onSamples && acc.result.samples.length > handed) {
      const fresh = acc.result.samples.slice(handed);
      handed = acc.result.samples.length;
      options.onSamples(fresh);
    }
    options.onProgress?.({ linesRead: acc.result.linesRead, bytesRead: acc.result.bytesRead, totalBytes });
  };
  await readJsonlStream(stream, acc.lines, { signal: options.signal, afterChunk: progress });
  const result = acc.end();
  progress();
  return result;
}
