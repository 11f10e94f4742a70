/** The text report: one summary line per scenario, then for each failing one where it diverges and how. */

import { describeDivergence, type CharDiff, type ScenarioComparison, type TextWindow } from "./compare.js";
import type { FailedRun } from "./report-json.js";

/** Control characters and newlines shown visibly, so a window stays on one line. */
export function visible(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f]/g, (c) =>
    c === "\n" ? "\\n" : c === "\t" ? "\\t" : c === "\r" ? "\\r" : `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

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

/** A scenario whose run failed (printed as it fails, and again by a merge). */
export function failedLine(f: FailedRun): string {
  return `FAILED     ${f.name}: ${f.detail}`;
}

export function summaryLine(c: ScenarioComparison): string {
  if (c.status === "ok") return `ok         ${c.name}`;
  if (c.status === "skipped") return `skipped    ${c.name}: ${c.reason ?? "not run"}`;
  if (c.status === "missing-golden") return `MISSING    ${c.name}: no golden ${c.missing.join(", ")} (run with --update to create it)`;
  const parts: string[] = [];
  if (c.samples) parts.push(describeDivergence(c.samples));
  if (c.metrics.length) parts.push(`${c.metrics.length} metric${c.metrics.length === 1 ? "" : "s"} beyond tolerance`);
  return `REGRESSED  ${c.name}: ${parts.join("; ")}`;
}

const fmt = (v: unknown): string => (typeof v === "number" ? String(v) : (JSON.stringify(v) ?? "(absent)"));

/** The summary; `failedRuns` counts scenarios that could not run (listed as FAILED above it), which fail the suite too. */
export function renderTextReport(comparisons: readonly ScenarioComparison[], failedRuns = 0): string {
  const lines = comparisons.map(summaryLine);
  const failing = comparisons.filter((c) => c.status === "regressed");
  for (const c of failing) {
    lines.push("", `== ${c.name}`);
    if (c.samples) {
      lines.push(`  first divergence: ${describeDivergence(c.samples)}`);
      lines.push(...diffLines(c.samples.diff));
    }
    for (const m of c.metrics) {
      const delta = m.delta === null ? "" : ` (|Δ| ${m.delta}, tolerance ${m.tolerance})`;
      lines.push(`  metric ${m.key}: golden ${fmt(m.golden)}, run ${fmt(m.run)}${delta}`);
    }
  }
  const skipped = comparisons.filter((c) => c.status === "skipped").length;
  const compared = comparisons.length - skipped;
  const bad = comparisons.filter((c) => c.status === "regressed" || c.status === "missing-golden").length;
  const skippedNote = skipped ? ` (${skipped} skipped)` : "";
  const failedNote = failedRuns ? `; ${failedRuns} scenario${failedRuns === 1 ? "" : "s"} failed to run` : "";
  const verdict = bad ? `${bad} of ${compared} scenarios regressed or lack a golden` : `all ${compared} scenarios that ran match their goldens`;
  lines.push("", `${failedRuns || bad ? verdict : `all ${compared} scenarios match their goldens`}${skippedNote}${failedNote}`);
  return `${lines.join("\n")}\n`;
}
