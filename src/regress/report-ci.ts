/**
 * The reports a CI system reads: JUnit XML (`--junit <file>`: one testcase per scenario, named by the scenario,
 * its failure message the first divergence) and Markdown for a CI step summary (`--summary <file>`: a table of
 * scenarios, verdicts and first divergences; GitHub's `$GITHUB_STEP_SUMMARY`). Model and environment text goes
 * into both, so both escape it: XML's five characters and the control characters XML 1.0 cannot hold; Markdown's
 * table and code characters and HTML (a step summary renders it).
 */

import { firstDivergenceLine, type ScenarioComparison } from "./compare.js";
import { reportTitle, type FailedRun, type RegressReport } from "./report-json.js";
import { scenarioName } from "./suite.js";
import { driftNote, evidenceLines, failureSummary } from "./report-text.js";
import { visible } from "./visible-text.js";

type Row = { name: string; comparison: ScenarioComparison | null; failed: FailedRun | null };

/** The scenarios of a report in suite order, each with its comparison or its failure. */
function rows(report: RegressReport): Row[] {
  const byName = new Map<string, Row>();
  for (const c of report.comparisons) byName.set(c.name, { name: c.name, comparison: c, failed: null });
  for (const f of report.failed) byName.set(f.name, { name: f.name, comparison: null, failed: f });
  const ordered = report.suite.scenarios.filter((n) => byName.has(n)).map((n) => byName.get(n)!);
  return ordered.length === byName.size ? ordered : [...byName.values()];
}

// XML 1.0 allows tab, newline, carriage return and U+0020 up; not other C0 controls, lone surrogates, U+FFFE/F.
const XML_INVALID = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

export function escapeXml(text: string): string {
  return text
    .replace(XML_INVALID, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
    .replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" })[c]!);
}

const attr = (name: string, value: string | number) => ` ${name}="${escapeXml(String(value))}"`;

/** `<failure>`, `<error>`, `<skipped>` or nothing for one scenario. */
function junitOutcome(row: Row): string {
  const f = row.failed;
  if (f) {
    const type = f.kind === "input" ? "bad input" : "run failed";
    return `<error${attr("type", type)}${attr("message", f.detail)}>${escapeXml(f.detail)}</error>`;
  }
  const c = row.comparison!;
  if (c.status === "ok") return driftNote(c) ? `<system-out>${escapeXml(driftNote(c))}</system-out>` : "";
  if (c.status === "skipped") return `<skipped${attr("message", c.reason ?? "not run")}/>`;
  const message = c.status === "missing-golden" ? failureSummary(c) : (firstDivergenceLine(c) ?? failureSummary(c));
  const body = [failureSummary(c), ...evidenceLines(c)].join("\n");
  return `<failure${attr("type", c.status)}${attr("message", message)}>${escapeXml(body)}</failure>`;
}

export function renderJunit(report: RegressReport): string {
  const all = rows(report);
  const count = (p: (r: Row) => boolean) => all.filter(p).length;
  const failures = count((r) => !!r.comparison && ["regressed", "missing-golden", "flaky"].includes(r.comparison.status));
  const errors = count((r) => !!r.failed);
  const skipped = count((r) => r.comparison?.status === "skipped");
  const suiteName = reportTitle(report).replace(/^Regression report: /, "");
  const classname = `rollout-lab.regress.${scenarioName(report.suite.file)}`;
  const totals = `${attr("tests", all.length)}${attr("failures", failures)}${attr("errors", errors)}${attr("skipped", skipped)}${attr("time", report.seconds)}`;
  const cases = all.map((r) => {
    const outcome = junitOutcome(r);
    const head = `    <testcase${attr("name", r.name)}${attr("classname", classname)}`;
    return outcome ? `${head}>\n      ${outcome}\n    </testcase>` : `${head}/>`;
  });
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites${attr("name", "rollout-lab regress")}${totals}>`,
    `  <testsuite${attr("name", suiteName)}${totals}>`,
    ...cases,
    `  </testsuite>`,
    `</testsuites>`,
    "",
  ].join("\n");
}

/** Text for a Markdown table cell: one line, no table or code syntax, no HTML. */
export function markdownCell(text: string): string {
  return visible(text)
    .replace(/[&<>]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;" })[c]!)
    .replace(/[|`*_[\]\\]/g, (c) => `\\${c}`);
}

const VERDICT: Record<ScenarioComparison["status"], string> = {
  ok: "✅ ok",
  skipped: "⏭️ skipped",
  regressed: "❌ regressed",
  "missing-golden": "❌ missing golden",
  flaky: "❌ flaky",
};

export function renderMarkdownSummary(report: RegressReport): string {
  const all = rows(report);
  const lines = [`### ${markdownCell(reportTitle(report))}`, ""];
  const tally = new Map<string, number>();
  const verdictOf = (r: Row) => (r.failed ? (r.failed.kind === "input" ? "❌ bad input" : "❌ run failed") : VERDICT[r.comparison!.status]);
  for (const r of all) tally.set(verdictOf(r), (tally.get(verdictOf(r)) ?? 0) + 1);
  const counts = [...tally].map(([v, n]) => `${n} ${v.replace(/^\S+ /, "")}`).join(", ");
  lines.push(`**${all.length} scenario${all.length === 1 ? "" : "s"}: ${counts}** (${report.seconds.toFixed(1)} s)`, "");
  lines.push("| scenario | verdict | first divergence |", "| --- | --- | --- |");
  for (const r of all) {
    const c = r.comparison;
    const detail = r.failed ? r.failed.detail : c!.status === "skipped" ? (c!.reason ?? "") : c!.status === "ok" ? driftNote(c!) : failureSummary(c!);
    lines.push(`| ${markdownCell(r.name)} | ${verdictOf(r)} | ${markdownCell(detail)} |`);
  }
  return `${lines.join("\n")}\n`;
}
