/** The text report: one summary line per scenario, then for each failing one where it diverges and how. */

import { describeDivergence, describeMetric, formatNumber, type CharDiff, type ScenarioComparison, type TextWindow } from "./compare.js";
import { isFailing, type FailedRun } from "./report-json.js";
import { visible } from "./visible-text.js";

/** `…before[at]after…`, with a caret line under the first differing character. */
function windowLines(label: string, w: TextWindow): [string, string] {
  const head = `${label}${w.cutBefore ? "…" : ""}${visible(w.before)}`;
  const at = w.at === "" ? "⟨end⟩" : visible(w.at);
  return [`${head}${at}${visible(w.after)}${w.cutAfter ? "…" : ""}`, `${" ".repeat([...head].length)}^`];
}

export function diffLines(diff: CharDiff, indent = "    "): string[] {
  const [run, runCaret] = windowLines("run:    ", diff.run);
  const [golden, goldenCaret] = windowLines("golden: ", diff.golden);
  return [`${indent}${golden}`, `${indent}${goldenCaret}`, `${indent}${run}`, `${indent}${runCaret}`];
}

/** A scenario whose run failed or whose input is bad (printed as it fails, and again by a merge). */
export function failedLine(f: FailedRun): string {
  return `${f.kind === "input" ? "BAD INPUT " : "FAILED    "} ${visible(f.name)}: ${visible(f.detail)}`;
}

/** `floats within 2.93e-4 of the golden (generation_logprobs)` for a match whose floats were not identical, else "". */
export function driftNote(c: ScenarioComparison): string {
  return c.drift.maxDelta > 0 ? `floats within ${formatNumber(c.drift.maxDelta)} of the golden (${c.drift.key})` : "";
}

/** What failed, in one line: the first divergence and the count of metrics beyond their rules. */
export function failureSummary(c: ScenarioComparison): string {
  if (c.status === "missing-golden") return `no golden ${c.missing.join(", ")} (run with --update to create it)`;
  const parts: string[] = [];
  if (c.status === "flaky" && c.repeat) parts.push(`run ${c.repeat.differing} of ${c.repeat.runs} differs from run 1`);
  if (c.samples) parts.push(describeDivergence(c.samples));
  if (c.metrics.length) parts.push(`${c.metrics.length} metric${c.metrics.length === 1 ? "" : "s"} beyond tolerance`);
  return parts.join("; ");
}

export function summaryLine(c: ScenarioComparison): string {
  if (c.status === "ok") return `ok         ${c.name}${c.drift.maxDelta > 0 ? `: ${driftNote(c)}` : ""}`;
  if (c.status === "skipped") return `skipped    ${c.name}: ${c.reason ?? "not run"}`;
  if (c.status === "missing-golden") return `MISSING    ${c.name}: ${failureSummary(c)}`;
  return `${c.status === "flaky" ? "FLAKY     " : "REGRESSED "} ${c.name}: ${failureSummary(c)}`;
}

/** The summary; `failedRuns` counts scenarios that could not run (listed as FAILED above it), which fail the suite too. */
export function renderTextReport(comparisons: readonly ScenarioComparison[], failedRuns = 0): string {
  const lines = comparisons.map(summaryLine);
  for (const c of comparisons.filter((c) => c.status === "regressed" || c.status === "flaky")) {
    lines.push(...detailLines(c));
  }
  const skipped = comparisons.filter((c) => c.status === "skipped").length;
  const compared = comparisons.length - skipped;
  const bad = comparisons.filter(isFailing).length;
  const skippedNote = skipped ? ` (${skipped} skipped)` : "";
  const failedNote = failedRuns ? `; ${failedRuns} scenario${failedRuns === 1 ? "" : "s"} failed to run` : "";
  const verdict = bad ? `${bad} of ${compared} scenarios regressed, are flaky or lack a golden` : `all ${compared} scenarios that ran match their goldens`;
  lines.push("", `${failedRuns || bad ? verdict : `all ${compared} scenarios match their goldens`}${skippedNote}${failedNote}`);
  return `${lines.join("\n")}\n`;
}

/** A failing scenario's section: the first divergence with the two texts around it, each metric beyond its rule. */
export function detailLines(c: ScenarioComparison): string[] {
  const against = c.status === "flaky" ? `run 1 (as golden) against run ${c.repeat?.differing ?? "?"}` : null;
  const lines = ["", `== ${c.name}${against ? `: ${against}` : ""}`];
  if (c.samples) lines.push(`  first divergence: ${describeDivergence(c.samples)}`);
  return [...lines, ...evidenceLines(c)];
}

/** The texts around a text difference (a float's or a token's two values are in its description) and each metric. */
export function evidenceLines(c: ScenarioComparison): string[] {
  const lines: string[] = [];
  if (c.samples && c.samples.kind !== "float" && c.samples.kind !== "tokens") lines.push(...diffLines(c.samples.diff));
  for (const m of c.metrics) lines.push(`  ${describeMetric(m)}`);
  return lines;
}
