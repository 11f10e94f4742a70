/**
 * The static HTML report: a summary table, then per failing scenario the first divergence with the golden and
 * run texts side by side (the first differing character marked) and the metric deltas. No scripts; every piece
 * of model or environment text goes in through escapeHtml.
 */

import { describeDivergence, type ScenarioComparison, type TextWindow } from "./compare.js";
import type { FailedRun } from "./report-json.js";
import { driftNote, failureSummary } from "./report-text.js";

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

function windowHtml(w: TextWindow): string {
  const at = w.at === "" ? `<mark class="end">⟨end⟩</mark>` : `<mark>${escapeHtml(w.at)}</mark>`;
  return `${w.cutBefore ? "…" : ""}${escapeHtml(w.before)}${at}${escapeHtml(w.after)}${w.cutAfter ? "…" : ""}`;
}

const fmt = (v: unknown): string => (typeof v === "number" ? String(v) : (JSON.stringify(v) ?? "(absent)"));

function scenarioSection(c: ScenarioComparison): string {
  const against = c.status === "flaky" ? ` — run 1 (as golden) against run ${c.repeat?.differing ?? "?"}` : "";
  const parts = [`<section><h2>${escapeHtml(c.name + against)}</h2>`];
  if (c.samples) {
    const d = c.samples;
    parts.push(
      `<p>First divergence: ${escapeHtml(describeDivergence(d))}</p>`,
      `<table class="diff"><tr><th>golden</th><th>run</th></tr>`,
      `<tr><td><pre>${windowHtml(d.diff.golden)}</pre></td><td><pre>${windowHtml(d.diff.run)}</pre></td></tr>`,
      `</table>`,
      `<details><summary>full texts</summary><table class="diff"><tr><th>golden</th><th>run</th></tr>`,
      `<tr><td><pre>${escapeHtml(d.goldenText)}</pre></td><td><pre>${escapeHtml(d.runText)}</pre></td></tr></table></details>`,
    );
  }
  if (c.metrics.length) {
    parts.push(`<table class="metrics"><tr><th>metric</th><th>kind</th><th>golden</th><th>run</th><th>|Δ|</th><th>tolerance</th></tr>`);
    for (const m of c.metrics) {
      const tolerance = m.kind === "float" ? String(m.tolerance) : "exact";
      const cells = [m.key, m.kind, fmt(m.golden), fmt(m.run), m.delta === null ? "" : String(m.delta), tolerance];
      parts.push(`<tr>${cells.map((x) => `<td>${escapeHtml(x)}</td>`).join("")}</tr>`);
    }
    parts.push(`</table>`);
  }
  parts.push(`</section>`);
  return parts.join("\n");
}

const STATUS: Record<ScenarioComparison["status"], string> = {
  ok: "ok",
  regressed: "REGRESSED",
  "missing-golden": "MISSING GOLDEN",
  skipped: "skipped",
  flaky: "FLAKY",
};

export function renderHtmlReport(comparisons: readonly ScenarioComparison[], title = "Regression report", failed: readonly FailedRun[] = []): string {
  const rows = comparisons.map((c) => {
    const detail = c.status === "skipped" ? (c.reason ?? "") : c.status === "ok" ? driftNote(c) : failureSummary(c);
    return `<tr class="${c.status}"><td>${escapeHtml(c.name)}</td><td>${STATUS[c.status]}</td><td>${escapeHtml(detail)}</td></tr>`;
  });
  for (const f of failed) {
    const status = f.kind === "input" ? "BAD INPUT" : "FAILED";
    rows.push(`<tr class="regressed"><td>${escapeHtml(f.name)}</td><td>${status}</td><td>${escapeHtml(f.detail)}</td></tr>`);
  }
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 1.5rem; }
table { border-collapse: collapse; margin: 0.5rem 0; }
td, th { border: 1px solid #ccc; padding: 0.25rem 0.5rem; vertical-align: top; text-align: left; }
tr.ok td:nth-child(2) { color: #176117; }
tr.skipped td:nth-child(2) { color: #666; }
tr.regressed td:nth-child(2), tr.missing-golden td:nth-child(2), tr.flaky td:nth-child(2) { color: #b00020; font-weight: bold; }
table.diff td { width: 50%; }
pre { white-space: pre-wrap; word-break: break-all; margin: 0; }
mark { background: #ffb3b3; outline: 1px solid #b00020; }
</style></head>
<body><h1>${escapeHtml(title)}</h1>
<table><tr><th>scenario</th><th>status</th><th>first divergence</th></tr>
${rows.join("\n")}
</table>
${comparisons.filter((c) => c.status === "regressed" || c.status === "flaky").map(scenarioSection).join("\n")}
</body></html>
`;
}
