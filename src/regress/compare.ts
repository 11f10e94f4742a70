/**
 * Compares one scenario's run with its golden, by rules that hold on any machine and backend: token ids, texts,
 * terminations, flags and counts must be identical; every float (each `generation_logprobs` value, a float metric,
 * a float field of a sample such as a reward) may differ by an absolute tolerance, because onnxruntime's kernels
 * round differently on CPUs with other vector units, and again on WASM and WebGPU.
 *
 * The tolerance of a key is the suite's `tolerances[key]` (`generation_logprobs`, a metric key, a sample field),
 * else `DEFAULT_FLOAT_TOLERANCE`. A number is a float when either side is not an integer; two integers compare
 * exactly (counts, ids); a logprob is always a float. Transcripts are JSONL, one sample a line; byte-identical
 * lines are equal without parsing. The first divergence is located (sample, turn, message, token index or
 * character) and classed: a float beyond its tolerance, or a token, text, value or shape difference. Pure: no
 * files, no clock.
 */

import { jsonlLines } from "../scenario/jsonl-lines.js";
import { visible } from "./visible-text.js";

/**
 * The default absolute tolerance of every float. Measured on the sample suite's built-in model: Node on two CPUs
 * (AVX2 and AVX-512) and WASM differ from each other by at most ~3e-6, the software WebGPU adapter by ~3e-4; a
 * changed weight, logit-shaping bias or final norm moves them by more than 5e-3 (src/regress/sensitivity.test.ts).
 */
export const DEFAULT_FLOAT_TOLERANCE = 1e-3;

/** The key of each generated token's log-probability in an assistant message. */
export const LOGPROBS_KEY = "generation_logprobs";

/** Key → absolute tolerance, as a suite's `tolerances` gives them (keys not named get the default). */
export type Tolerances = Readonly<Record<string, number>>;

export function toleranceOf(key: string, tolerances: Tolerances): number {
  return Object.hasOwn(tolerances, key) ? tolerances[key]! : DEFAULT_FLOAT_TOLERANCE;
}

export interface TextWindow {
  /** Whether text was cut off before / after the window. */
  cutBefore: boolean;
  before: string;
  /** The first differing character ("" where the text ends there). */
  at: string;
  after: string;
  cutAfter: boolean;
}

export interface CharDiff {
  /** Index of the first differing character (UTF-16 code unit). */
  position: number;
  run: TextWindow;
  golden: TextWindow;
}

/**
 * What kind of difference: `float` a float beyond its tolerance (the only kind a machine's rounding can cause
 * within bounds); `tokens` token ids or the number of tokens; `text` a message's content; `value` any other
 * compared-exactly value (a termination, a flag, a count, a string); `shape` a missing or extra sample, message or
 * key, an array of another length, a value of another type.
 */
export type DivergenceKind = "float" | "tokens" | "text" | "value" | "shape";

export interface SampleDivergence {
  kind: DivergenceKind;
  /** The line (position of the sample in the transcript). */
  line: number;
  /** The sample's `idx` (the golden's, or the run's where the golden has no such line). */
  idx: number | null;
  /** Assistant-message index of the turn where the run and the golden first part; null when not in a message. */
  turn: number | null;
  /** Index in `message_log` of the first differing message; null when the difference is elsewhere. */
  messageIndex: number | null;
  role: string | null;
  /** For a token id or logprob: its index in the message's `token_ids` / `generation_logprobs`. */
  tokenIndex: number | null;
  /** For a float beyond its tolerance: how far off it is. */
  delta?: { value: number; tolerance: number };
  /** Where, within the message or the sample: `content`, `token_ids[5]`, `generation_logprobs[1]`, `extra_env_info.board[2]`, `missing sample`, … */
  field: string;
  runText: string;
  goldenText: string;
  diff: CharDiff;
}

export interface MetricDelta {
  key: string;
  /** `float` when either value is a non-integer number (compared within the tolerance), else `value` (exact). */
  kind: "float" | "value";
  run: unknown;
  golden: unknown;
  /** |run − golden| where both are numbers. */
  delta: number | null;
  tolerance: number;
}

/** The largest float difference that was within its tolerance (0: none, or identical). */
export interface FloatDrift {
  maxDelta: number;
  /** The key it was under (`generation_logprobs`, a metric), or null. */
  key: string | null;
}

export type ScenarioStatus = "ok" | "regressed" | "missing-golden" | "skipped" | "flaky";

export interface ScenarioComparison {
  name: string;
  status: ScenarioStatus;
  /** Why the scenario was not run (status skipped). */
  reason?: string;
  /** Golden files that are absent (status missing-golden). */
  missing: string[];
  /** The first divergence from the golden; for status flaky, between the first run and `repeat.differing`. */
  samples: SampleDivergence | null;
  metrics: MetricDelta[];
  /** How close the floats came to their tolerance where they matched. */
  drift: FloatDrift;
  /** With `--repeat N`: the number of runs, and the first run (1-based) that differed from run 1, or null. */
  repeat?: { runs: number; differing: number | null };
}

export function toJsonl(samples: readonly unknown[]): string {
  return samples.map((s) => `${JSON.stringify(s)}\n`).join("");
}

export function metricsJson(metrics: Record<string, unknown>): string {
  return `${JSON.stringify(metrics, null, 2)}\n`;
}

export function isTimingKey(key: string): boolean {
  return key.startsWith("timing/");
}

/** The first index where a and b differ, or -1 when equal. */
export function firstDifference(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
}

function textWindow(text: string, position: number, radius: number): TextWindow {
  const start = Math.max(0, position - radius);
  const end = Math.min(text.length, position + 1 + radius);
  return {
    cutBefore: start > 0,
    before: text.slice(start, position),
    at: text.slice(position, position + 1),
    after: text.slice(position + 1, end),
    cutAfter: end < text.length,
  };
}

/** The first differing character of two texts with a window of `radius` characters around it on each side. */
export function charDiff(run: string, golden: string, radius = 40): CharDiff {
  const position = Math.max(0, firstDifference(run, golden));
  return { position, run: textWindow(run, position, radius), golden: textWindow(golden, position, radius) };
}

type Json = unknown;
const str = (v: Json): string => (typeof v === "string" ? v : (JSON.stringify(v) ?? "undefined"));
const isObject = (v: Json): v is Record<string, Json> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Records a float difference within tolerance. */
function drifted(drift: FloatDrift, key: string, delta: number): void {
  if (delta > drift.maxDelta) {
    drift.maxDelta = delta;
    drift.key = key;
  }
}

/** A difference found inside a value: where (a path below the value), what kind, both sides. */
interface Found {
  kind: DivergenceKind;
  path: string;
  run: Json;
  golden: Json;
  delta?: { value: number; tolerance: number };
  tokenIndex?: number;
}

/** How deep the comparison descends; deeper values compare by their JSON text (our writer's data is shallow). */
const MAX_DEPTH = 200;

/**
 * The first difference between two JSON values under the rules above, or null. `key` is the nearest property name
 * (it names the tolerance); `float` forces float comparison of numbers (logprobs).
 */
function firstValueDifference(r: Json, g: Json, path: string, key: string, tolerances: Tolerances, drift: FloatDrift, float = false, depth = 0): Found | null {
  if (r === g) return null;
  if (typeof r === "number" && typeof g === "number") {
    const isFloat = float || !Number.isInteger(r) || !Number.isInteger(g);
    if (!isFloat) return { kind: "value", path, run: r, golden: g };
    const tolerance = toleranceOf(key, tolerances);
    const delta = Math.abs(r - g);
    if (delta <= tolerance) {
      drifted(drift, key, delta);
      return null;
    }
    return { kind: "float", path, run: r, golden: g, delta: { value: delta, tolerance } };
  }
  if (depth >= MAX_DEPTH) return JSON.stringify(r) === JSON.stringify(g) ? null : { kind: "value", path, run: r, golden: g };
  if (Array.isArray(r) && Array.isArray(g)) {
    if (r.length !== g.length) return { kind: "shape", path: `${path}.length`, run: r.length, golden: g.length };
    for (let i = 0; i < g.length; i++) {
      const found = firstValueDifference(r[i], g[i], `${path}[${i}]`, key, tolerances, drift, float, depth + 1);
      if (found) return found;
    }
    return null;
  }
  if (isObject(r) && isObject(g)) {
    for (const k of Object.keys(g)) {
      if (!Object.hasOwn(r, k)) return { kind: "shape", path: joinPath(path, k), run: undefined, golden: g[k] };
      const found = firstValueDifference(r[k], g[k], joinPath(path, k), k, tolerances, drift, float, depth + 1);
      if (found) return found;
    }
    for (const k of Object.keys(r)) if (!Object.hasOwn(g, k)) return { kind: "shape", path: joinPath(path, k), run: r[k], golden: undefined };
    return null;
  }
  const sameType = typeof r === typeof g && Array.isArray(r) === Array.isArray(g) && (r === null) === (g === null);
  return { kind: sameType ? "value" : "shape", path, run: r, golden: g };
}

const joinPath = (path: string, key: string): string => (path ? `${path}.${key}` : key);

interface MessageJson {
  role?: unknown;
  content?: unknown;
  [key: string]: unknown;
}

/** The turn a message belongs to: an assistant message's own index; a prompt or observation, the turn it follows. */
function turnOf(log: readonly MessageJson[], index: number): number {
  let assistantsBefore = 0;
  for (let i = 0; i < index; i++) if (log[i]?.role === "assistant") assistantsBefore++;
  return log[index]?.role === "assistant" ? assistantsBefore : Math.max(0, assistantsBefore - 1);
}

interface Where {
  line: number;
  idx: number | null;
  turn?: number;
  messageIndex?: number;
  role?: string | null;
}

function divergence(where: Where, kind: DivergenceKind, field: string, runText: string, goldenText: string, extra: Partial<SampleDivergence> = {}): SampleDivergence {
  return {
    kind,
    line: where.line,
    idx: where.idx,
    turn: where.turn ?? null,
    messageIndex: where.messageIndex ?? null,
    role: where.role ?? null,
    tokenIndex: null,
    field,
    runText,
    goldenText,
    diff: charDiff(runText, goldenText),
    ...extra,
  };
}

function fromFound(where: Where, found: Found, prefix = ""): SampleDivergence {
  const field = prefix ? joinPath(prefix, found.path) : found.path;
  const extra: Partial<SampleDivergence> = {};
  if (found.delta) extra.delta = found.delta;
  if (found.tokenIndex !== undefined) extra.tokenIndex = found.tokenIndex;
  const show = (v: Json) => (v === undefined ? "(absent)" : str(v));
  return divergence(where, found.kind, field, show(found.run), show(found.golden), extra);
}

/** The first difference between two messages at the same position of a log, or null. */
function messageDifference(r: MessageJson, g: MessageJson, tolerances: Tolerances, drift: FloatDrift): Found | null {
  const keys = ["role", "content", "token_ids", LOGPROBS_KEY, ...Object.keys(g), ...Object.keys(r)];
  for (const key of new Set(keys)) {
    const inR = Object.hasOwn(r, key);
    const inG = Object.hasOwn(g, key);
    if (!inR && !inG) continue;
    if (inR !== inG) return { kind: "shape", path: key, run: r[key], golden: g[key] };
    const rv = r[key];
    const gv = g[key];
    if (key === "content" && typeof rv === "string" && typeof gv === "string") {
      if (rv !== gv) return { kind: "text", path: key, run: rv, golden: gv };
      continue;
    }
    if ((key === "token_ids" || key === LOGPROBS_KEY) && Array.isArray(rv) && Array.isArray(gv)) {
      const isLogprobs = key === LOGPROBS_KEY;
      if (rv.length !== gv.length) return { kind: "tokens", path: `${key}.length`, run: rv.length, golden: gv.length };
      for (let i = 0; i < gv.length; i++) {
        const found = firstValueDifference(rv[i], gv[i], `${key}[${i}]`, key, tolerances, drift, isLogprobs);
        if (found) return { ...found, kind: found.kind === "value" ? "tokens" : found.kind, tokenIndex: i };
      }
      continue;
    }
    const found = firstValueDifference(rv, gv, key, key, tolerances, drift);
    if (found) return found;
  }
  return null;
}

/** The first difference between two transcript lines (one sample each), or null when they match. */
function lineDivergence(line: number, runLine: string, goldenLine: string, tolerances: Tolerances, drift: FloatDrift): SampleDivergence | null {
  let run: Json;
  let golden: Json;
  try {
    run = JSON.parse(runLine);
    golden = JSON.parse(goldenLine);
  } catch {
    return divergence({ line, idx: null }, "shape", "line (not JSON)", runLine, goldenLine);
  }
  if (!isObject(run) || !isObject(golden)) return divergence({ line, idx: null }, "shape", "line (not a sample object)", runLine, goldenLine);
  const idx = typeof golden.idx === "number" ? golden.idx : typeof run.idx === "number" ? run.idx : null;
  const runLog = (Array.isArray(run.message_log) ? run.message_log : []) as MessageJson[];
  const goldenLog = (Array.isArray(golden.message_log) ? golden.message_log : []) as MessageJson[];
  const n = Math.max(runLog.length, goldenLog.length);
  for (let i = 0; i < n; i++) {
    const r = runLog[i];
    const g = goldenLog[i];
    const log = g ? goldenLog : runLog;
    const where: Where = { line, idx, turn: turnOf(log, i), messageIndex: i, role: str((g ?? r)?.role ?? null) };
    if (!isObject(r) || !isObject(g)) {
      const field = r ? "extra message in the run" : "message missing from the run";
      return divergence(where, "shape", field, r ? str(r.content) : "", g ? str(g.content) : "");
    }
    const found = messageDifference(r, g, tolerances, drift);
    if (found) {
      const d = fromFound(where, found);
      // A text difference is shown whole (the window finds the character); other kinds show the two values.
      return found.kind === "text" ? { ...d, diff: charDiff(d.runText, d.goldenText) } : d;
    }
  }
  const rest = (o: Record<string, Json>) => Object.fromEntries(Object.entries(o).filter(([k]) => k !== "message_log"));
  const found = firstValueDifference(rest(run), rest(golden), "", "", tolerances, drift);
  return found ? fromFound({ line, idx }, found) : null;
}

/**
 * The first diverging sample of two JSONL transcripts under the rules above, or null when they match. `drift`
 * collects the largest float difference that was within its tolerance.
 */
export function compareTranscripts(
  runJsonl: string,
  goldenJsonl: string,
  tolerances: Tolerances = {},
  drift: FloatDrift = { maxDelta: 0, key: null },
): SampleDivergence | null {
  if (runJsonl === goldenJsonl) return null;
  const runLines = jsonlLines(runJsonl);
  const goldenLines = jsonlLines(goldenJsonl);
  const n = Math.max(runLines.length, goldenLines.length);
  for (let i = 0; i < n; i++) {
    const r = runLines[i];
    const g = goldenLines[i];
    if (r === g) continue;
    if (r === undefined || g === undefined) {
      const text = (r ?? g)!;
      let idx: number | null = null;
      try {
        const parsed = JSON.parse(text) as { idx?: unknown };
        if (typeof parsed.idx === "number") idx = parsed.idx;
      } catch {
        // Not JSON: no idx to show.
      }
      return divergence({ line: i, idx }, "shape", r === undefined ? "sample missing from the run" : "extra sample in the run", r ?? "", g ?? "");
    }
    const d = lineDivergence(i, r, g, tolerances, drift);
    if (d) return d;
  }
  return null;
}

/** Metric keys (other than `timing/`) whose run and golden values differ beyond the rules above. */
export function compareMetrics(
  run: Record<string, unknown>,
  golden: Record<string, unknown>,
  tolerances: Tolerances = {},
  drift: FloatDrift = { maxDelta: 0, key: null },
): MetricDelta[] {
  const out: MetricDelta[] = [];
  const keys = [...new Set([...Object.keys(golden), ...Object.keys(run)])].filter((k) => !isTimingKey(k)).sort();
  for (const key of keys) {
    const tolerance = toleranceOf(key, tolerances);
    const r = run[key];
    const g = golden[key];
    if (typeof r === "number" && typeof g === "number") {
      const found = firstValueDifference(r, g, key, key, tolerances, drift);
      if (found) {
        const delta = Math.abs(r - g);
        out.push({ key, kind: found.kind === "float" ? "float" : "value", run: r, golden: g, delta: Number.isNaN(delta) ? null : delta, tolerance });
      }
    } else if (firstValueDifference(r, g, key, key, tolerances, drift) || Object.hasOwn(run, key) !== Object.hasOwn(golden, key)) {
      out.push({ key, kind: "value", run: r, golden: g, delta: null, tolerance });
    }
  }
  return out;
}

export interface ScenarioArtifacts {
  samplesJsonl: string;
  metrics: Record<string, unknown>;
}

/** Compares a run with its golden (null parts of the golden are missing files, named in the result). */
export function compareScenario(
  name: string,
  run: ScenarioArtifacts,
  golden: { samplesJsonl: string | null; metrics: Record<string, unknown> | null },
  tolerances: Tolerances = {},
): ScenarioComparison {
  const missing = [...(golden.samplesJsonl === null ? ["samples.jsonl"] : []), ...(golden.metrics === null ? ["metrics.json"] : [])];
  const drift: FloatDrift = { maxDelta: 0, key: null };
  const samples = golden.samplesJsonl === null ? null : compareTranscripts(run.samplesJsonl, golden.samplesJsonl, tolerances, drift);
  const metrics = golden.metrics === null ? [] : compareMetrics(run.metrics, golden.metrics, tolerances, drift);
  const status = missing.length ? "missing-golden" : samples || metrics.length ? "regressed" : "ok";
  return { name, status, missing, samples, metrics, drift };
}

/**
 * Compares the repeated runs of one scenario with its first (`--repeat N`): null when all match under the same
 * rules, else the first differing run (2-based) with its divergence from run 1.
 */
export function compareRepeats(runs: readonly ScenarioArtifacts[], tolerances: Tolerances = {}): { run: number; comparison: ScenarioComparison } | null {
  const [first, ...others] = runs;
  if (!first) return null;
  for (let k = 0; k < others.length; k++) {
    const comparison = compareScenario("", others[k]!, first, tolerances);
    if (comparison.status !== "ok") return { run: k + 2, comparison };
  }
  return null;
}

/** A difference as `2.93e-4` when small, else with 3 significant digits. */
export function formatNumber(value: number): string {
  return value !== 0 && Math.abs(value) < 1e-3 ? value.toExponential(2) : String(Number(value.toPrecision(3)));
}

const KIND_LABEL: Record<DivergenceKind, string> = {
  float: "float beyond tolerance",
  tokens: "tokens differ",
  text: "text differs",
  value: "value differs",
  shape: "shape differs",
};

/** At most `n` characters of a value's text, for one-line messages (control characters made visible). */
function short(text: string, n = 60): string {
  const flat = visible(text.replace(/\s+/g, " "));
  return flat.length > n ? `${flat.slice(0, n - 1)}…` : flat;
}

/**
 * A one-line description of where a sample divergence is and what it is, e.g. `float beyond tolerance: sample idx
 * 3, turn 1, message 3 (assistant), token 1, generation_logprobs[1]: golden -2.000001, run -2.001 (|Δ| 0.000999 >
 * tolerance 0.001)` or `text differs: sample idx 0, turn 2, message 5 (assistant), content at char 1`.
 */
export function describeDivergence(d: SampleDivergence): string {
  const where = [`sample idx ${d.idx ?? "?"}`];
  if (d.turn !== null) where.push(`turn ${d.turn}`);
  if (d.messageIndex !== null) where.push(`message ${d.messageIndex}${d.role ? ` (${d.role})` : ""}`);
  if (d.tokenIndex !== null) where.push(`token ${d.tokenIndex}`);
  let what: string;
  if (d.kind === "text") what = `${d.field} at char ${d.diff.position}`;
  else {
    what = `${d.field}: golden ${short(d.goldenText)}, run ${short(d.runText)}`;
    if (d.delta) what += ` (|Δ| ${formatNumber(d.delta.value)} > tolerance ${d.delta.tolerance})`;
  }
  return `${KIND_LABEL[d.kind]}: ${[...where, what].join(", ")}`;
}

/** A one-line description of a metric beyond its rule. */
export function describeMetric(m: MetricDelta): string {
  const fmt = (v: unknown): string => (typeof v === "number" ? String(v) : (JSON.stringify(v) ?? "(absent)"));
  const delta = m.kind === "float" && m.delta !== null ? ` (|Δ| ${formatNumber(m.delta)} > tolerance ${m.tolerance})` : "";
  return `metric ${m.key}: golden ${fmt(m.golden)}, run ${fmt(m.run)}${delta}`;
}

/** The first divergence of a failing comparison in one line (a sample's, else the first metric's), or null. */
export function firstDivergenceLine(c: ScenarioComparison): string | null {
  if (c.samples) return describeDivergence(c.samples);
  const m = c.metrics[0];
  return m ? describeMetric(m) : null;
}

/** A scenario the backend cannot run, reported as such (it neither passes nor fails the suite). */
export function skippedScenario(name: string, reason: string): ScenarioComparison {
  return { name, status: "skipped", reason, missing: [], samples: null, metrics: [], drift: { maxDelta: 0, key: null } };
}
