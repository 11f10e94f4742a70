/**
 * Compares one scenario's run with its golden: transcripts (JSONL, one sample a line) byte for byte, and metrics
 * per key within the suite's absolute tolerance (`timing/` keys ignored). On a transcript difference it locates
 * the first diverging sample, turn and character, for the reports. Pure: no files, no clock.
 *
 * Tolerant mode (`logprobTolerance`, for browser runs against Node's goldens): each `generation_logprobs` value
 * may differ from the golden's by at most that much; everything else in the transcript (token ids, texts, rewards,
 * terminations, the number of logprobs) must still be identical, and a logprob beyond the tolerance is a
 * divergence like any other, named with its index and |Δ|.
 */

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

export interface SampleDivergence {
  /** The line (position of the sample in the transcript). */
  line: number;
  /** The sample's `idx` (the golden's, or the run's where the golden has no such line). */
  idx: number | null;
  /** Assistant-message index of the turn where the run and the golden first part; null when not in a message. */
  turn: number | null;
  /** Index in `message_log` of the first differing message; null when the difference is elsewhere. */
  messageIndex: number | null;
  role: string | null;
  /** For a logprob beyond tolerance (tolerant mode): how far off it is. */
  delta?: { value: number; tolerance: number };
  /** What differs: `content`, `token_ids`, a message field, a sample key, `missing sample`, `extra sample`, … */
  field: string;
  runText: string;
  goldenText: string;
  diff: CharDiff;
}

export interface MetricDelta {
  key: string;
  run: unknown;
  golden: unknown;
  /** |run − golden| where both are numbers. */
  delta: number | null;
  tolerance: number;
}

export interface ScenarioComparison {
  name: string;
  status: "ok" | "regressed" | "missing-golden" | "skipped";
  /** Why the scenario was not run (status skipped). */
  reason?: string;
  /** Golden files that are absent (status missing-golden). */
  missing: string[];
  samples: SampleDivergence | null;
  metrics: MetricDelta[];
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

function splitLines(text: string): string[] {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines;
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
const str = (v: Json): string => (typeof v === "string" ? v : JSON.stringify(v) ?? "undefined");
const same = (a: Json, b: Json): boolean => JSON.stringify(a) === JSON.stringify(b);

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

function divergence(
  line: number,
  idx: number | null,
  field: string,
  runText: string,
  goldenText: string,
  at: { turn: number; messageIndex: number; role: string | null } | null = null,
): SampleDivergence {
  return {
    line,
    idx,
    turn: at?.turn ?? null,
    messageIndex: at?.messageIndex ?? null,
    role: at?.role ?? null,
    field,
    runText,
    goldenText,
    diff: charDiff(runText, goldenText),
  };
}

export interface CompareOptions {
  /** Tolerant mode: the largest allowed |run − golden| of each `generation_logprobs` value. */
  logprobTolerance?: number;
}

/** The first logprob of two same-length arrays that differs by more than the tolerance, or null. */
function logprobBeyond(run: Json, golden: Json, tolerance: number): { index: number; delta: number } | null | "shape" {
  if (!Array.isArray(run) || !Array.isArray(golden) || run.length !== golden.length) return "shape";
  for (let i = 0; i < golden.length; i++) {
    const r = run[i] as Json;
    const g = golden[i] as Json;
    if (typeof r !== "number" || typeof g !== "number") {
      if (!same(r, g)) return "shape";
      continue;
    }
    const delta = Math.abs(r - g);
    if (r !== g && !(delta <= tolerance)) return { index: i, delta };
  }
  return null;
}

/**
 * Locates the first difference between two (byte-different) transcript lines. In tolerant mode, null when they
 * differ only by logprobs within the tolerance.
 */
function lineDivergence(line: number, runLine: string, goldenLine: string, options: CompareOptions = {}): SampleDivergence | null {
  const tolerance = options.logprobTolerance;
  let run: Record<string, Json>;
  let golden: Record<string, Json>;
  try {
    run = JSON.parse(runLine) as Record<string, Json>;
    golden = JSON.parse(goldenLine) as Record<string, Json>;
  } catch {
    return divergence(line, null, "line", runLine, goldenLine);
  }
  const idx = typeof golden.idx === "number" ? golden.idx : typeof run.idx === "number" ? run.idx : null;
  const runLog = (Array.isArray(run.message_log) ? run.message_log : []) as MessageJson[];
  const goldenLog = (Array.isArray(golden.message_log) ? golden.message_log : []) as MessageJson[];
  const n = Math.max(runLog.length, goldenLog.length);
  for (let i = 0; i < n; i++) {
    const r = runLog[i];
    const g = goldenLog[i];
    const log = g ? goldenLog : runLog;
    const role = str((g ?? r)?.role ?? null);
    const at = { turn: turnOf(log, i), messageIndex: i, role };
    if (!r || !g) {
      const field = r ? "extra message in the run" : "message missing from the run";
      return divergence(line, idx, field, r ? str(r.content) : "", g ? str(g.content) : "", at);
    }
    for (const key of ["role", "content", ...new Set([...Object.keys(g), ...Object.keys(r)])]) {
      if (same(r[key], g[key])) continue;
      if (tolerance !== undefined && key === "generation_logprobs") {
        const beyond = logprobBeyond(r[key], g[key], tolerance);
        if (beyond === null) continue;
        if (beyond !== "shape") {
          const runValue = (r[key] as number[])[beyond.index]!;
          const goldenValue = (g[key] as number[])[beyond.index]!;
          return {
            ...divergence(line, idx, `${key}[${beyond.index}]`, String(runValue), String(goldenValue), at),
            delta: { value: beyond.delta, tolerance },
          };
        }
      }
      return divergence(line, idx, key, str(r[key] ?? null), str(g[key] ?? null), at);
    }
  }
  for (const key of new Set([...Object.keys(golden), ...Object.keys(run)])) {
    if (key !== "message_log" && !same(run[key], golden[key])) {
      return divergence(line, idx, key, str(run[key] ?? null), str(golden[key] ?? null));
    }
  }
  // Within tolerance; or, in exact mode, same values with different bytes (key order, number spelling).
  return tolerance !== undefined ? null : divergence(line, idx, "serialization", runLine, goldenLine);
}

/**
 * The first diverging sample of two JSONL transcripts, or null when they are byte-identical (in tolerant mode:
 * identical but for logprobs within the tolerance).
 */
export function compareTranscripts(runJsonl: string, goldenJsonl: string, options: CompareOptions = {}): SampleDivergence | null {
  if (runJsonl === goldenJsonl) return null;
  const runLines = splitLines(runJsonl);
  const goldenLines = splitLines(goldenJsonl);
  const n = Math.max(runLines.length, goldenLines.length);
  let tolerated = false;
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
      return divergence(i, idx, r === undefined ? "sample missing from the run" : "extra sample in the run", r ?? "", g ?? "");
    }
    const d = lineDivergence(i, r, g, options);
    if (d) return d;
    tolerated = true;
  }
  if (tolerated) return null;
  // Only the line endings differ.
  return divergence(0, null, "line endings", runJsonl, goldenJsonl);
}

/** Metric keys (other than `timing/`) whose run and golden values differ by more than their tolerance. */
export function compareMetrics(
  run: Record<string, unknown>,
  golden: Record<string, unknown>,
  tolerances: Record<string, number> = {},
): MetricDelta[] {
  const out: MetricDelta[] = [];
  const keys = [...new Set([...Object.keys(golden), ...Object.keys(run)])].filter((k) => !isTimingKey(k)).sort();
  for (const key of keys) {
    const tolerance = tolerances[key] ?? 0;
    const r = run[key];
    const g = golden[key];
    if (typeof r === "number" && typeof g === "number") {
      const delta = Math.abs(r - g);
      const within = r === g || delta <= tolerance;
      if (!within) out.push({ key, run: r, golden: g, delta: Number.isNaN(delta) ? null : delta, tolerance });
    } else if (!same(r, g)) {
      out.push({ key, run: r, golden: g, delta: null, tolerance });
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
  tolerances: Record<string, number> = {},
  options: CompareOptions = {},
): ScenarioComparison {
  const missing = [
    ...(golden.samplesJsonl === null ? ["samples.jsonl"] : []),
    ...(golden.metrics === null ? ["metrics.json"] : []),
  ];
  const samples = golden.samplesJsonl === null ? null : compareTranscripts(run.samplesJsonl, golden.samplesJsonl, options);
  const metrics = golden.metrics === null ? [] : compareMetrics(run.metrics, golden.metrics, tolerances);
  const status = missing.length ? "missing-golden" : samples || metrics.length ? "regressed" : "ok";
  return { name, status, missing, samples, metrics };
}

/** A one-line description of where a sample divergence is. */
export function describeDivergence(d: SampleDivergence): string {
  const where = [`sample idx ${d.idx ?? "?"}`];
  if (d.turn !== null) where.push(`turn ${d.turn}`);
  if (d.messageIndex !== null) where.push(`message ${d.messageIndex}${d.role ? ` (${d.role})` : ""}`);
  where.push(d.delta ? `${d.field} |Δ| ${d.delta.value} > tolerance ${d.delta.tolerance}` : `${d.field} at char ${d.diff.position}`);
  return where.join(", ");
}

/** A scenario the backend cannot run, reported as such (it neither passes nor fails the suite). */
export function skippedScenario(name: string, reason: string): ScenarioComparison {
  return { name, status: "skipped", reason, missing: [], samples: null, metrics: [] };
}
