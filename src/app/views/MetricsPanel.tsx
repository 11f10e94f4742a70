/**
 * Every metric key of the run's path, live (the reference formulas over the samples' current state) and then the
 * rollout's own values once it ended; plus three small charts: total reward per sample, turns per sample and
 * generated tokens per turn.
 */

import { memo, useMemo } from "react";
import { generatedTokens, liveMetrics, type MetricValue } from "../run/live-metrics.js";
import type { RunModel, RunSnapshot } from "../run/run-model.js";
import type { EnvironmentMetrics } from "../../scenario/environment-metrics.js";
import { useRun } from "../session/hooks.js";
import { BarChart, type Bar } from "./charts/BarChart.js";
import { useThrottledValue } from "./useThrottled.js";
import { formatNumber, histogramBins, meanByIndex, type Bin } from "./charts/bins.js";
import "./views.css";

export interface MetricsPanelProps {
  model: RunModel;
  invalidActionEnabled: boolean;
}

/** While a run is live, the metrics (computed over every sample and turn) follow it at most this often. */
export const LIVE_METRICS_MS = 500;

export function MetricsPanel({ model, invalidActionEnabled }: MetricsPanelProps) {
  const run = useRun(model);
  const shown = useThrottledValue(run, model.summary.status === "running" ? LIVE_METRICS_MS : 0);
  return <MetricsBody run={shown} invalidActionEnabled={invalidActionEnabled} />;
}

const MetricsBody = memo(function MetricsBody({ run, invalidActionEnabled }: { run: RunSnapshot; invalidActionEnabled: boolean }) {
  const { model } = run;
  const metrics = useMemo(() => liveMetrics(run.model, { invalidActionEnabled }), [run, invalidActionEnabled]);
  const charts = useMemo(() => {
    const samples = run.model.samples;
    return {
      rewards: histogramBars(histogramBins(samples.map((s) => s.totalReward), 16), "sample"),
      turns: histogramBars(histogramBins(samples.map((s) => s.turns.filter(Boolean).length), 24), "sample"),
      tokens: meanByIndex(samples.map((s) => s.turns.map((t) => (t ? generatedTokens(s, t) : null)))).map(
        (m): Bar => ({
          label: String(m.index),
          value: m.mean,
          title: `turn ${m.index}: ${formatNumber(m.mean, 4)} generated tokens on average over ${m.count} sample(s)`,
        }),
      ),
    };
  }, [run]);
  const final = model.summary.metrics !== null;
  const entries = Object.entries(metrics);
  return (
    <div className="mx">
      <p className="hint">
        {final
          ? `The rollout's own metrics (${model.summary.mode ?? "?"} path)${model.summary.partial ? ", from a run stopped early" : ""}.`
          : `Live: the ${model.summary.mode ?? ""} path's formulas over the samples' current state; the rollout's own values replace them when it ends.`}
      </p>
      <div className="mx-body">
        <div className="mx-table-wrap">
          <table className="mx-table" data-testid="metrics" data-final={final}>
            <thead>
              <tr>
                <th>key</th>
                <th>value</th>
              </tr>
            </thead>
            <tbody>
              {entries.length === 0 ? (
                <tr>
                  <td colSpan={2} className="hint">
                    No metrics yet.
                  </td>
                </tr>
              ) : (
                entries.map(([key, value]) => <MetricRow key={key} name={key} text={shortText(value)} value={value} />)
              )}
            </tbody>
          </table>
          {model.summary.environmentMetrics && <EnvironmentMetricsTable reports={model.summary.environmentMetrics} />}
        </div>
        <div className="mx-charts">
          <BarChart title="Total reward per sample" bars={charts.rewards} xLabel="total reward" yLabel="samples" colour="#009E73" testId="chart-reward" />
          <BarChart title="Turns per sample" bars={charts.turns} xLabel="turns" yLabel="samples" colour="#2f6fdf" testId="chart-turns" />
          <BarChart
            title="Generated tokens per turn (mean over samples)"
            bars={charts.tokens}
            xLabel="turn (index)"
            yLabel="tokens"
            colour="#E69F00"
            testId="chart-tokens"
          />
        </div>
      </div>
    </div>
  );
});

/**
 * The environments' own metrics after the run (`global_post_process_and_metrics`), one group per task, beside the
 * rollout's; an environment's error (a Python traceback from the bridge) is shown as text where its metrics would be.
 */
function EnvironmentMetricsTable({ reports }: { reports: readonly EnvironmentMetrics[] }) {
  return (
    <table className="mx-table mx-env" data-testid="environment-metrics">
      <caption className="hint">The environments&apos; own metrics (global_post_process_and_metrics), after the run</caption>
      <thead>
        <tr>
          <th>key</th>
          <th>value</th>
        </tr>
      </thead>
      <tbody>
        {reports.map((r) =>
          "error" in r ? (
            <tr key={r.task} data-task={r.task}>
              <td className="mx-key">{r.task}</td>
              <td>
                <pre className="mx-env-error" data-testid="environment-metrics-error">
                  {r.error}
                </pre>
              </td>
            </tr>
          ) : Object.keys(r.metrics).length === 0 ? (
            <tr key={r.task} data-task={r.task}>
              <td className="mx-key">{r.task}</td>
              <td className="hint">no metrics</td>
            </tr>
          ) : (
            Object.entries(r.metrics).map(([name, value]) => <MetricRow key={`${r.task}/${name}`} name={`${r.task}/${name}`} text={shortText(value)} value={value} />)
          ),
        )}
      </tbody>
    </table>
  );
}

/** One key and its value; redrawn only when the shown text changed. */
const MetricRow = memo(
  function MetricRow({ name, text, value }: { name: string; text: string; value: MetricValue }) {
    return (
      <tr data-metric={name}>
        <td className="mx-key">{name}</td>
        <td className="mx-value" title={fullText(value)}>
          {text}
        </td>
      </tr>
    );
  },
  (a, b) => a.name === b.name && a.text === b.text && (typeof a.value !== "number" || a.value === b.value),
);

/** Histogram bars: integer or single bins labelled by value, ranges by their lower edge (the title has both). */
function histogramBars(bins: readonly Bin[], unit: string): Bar[] {
  const byValue = bins.length === 1 || bins.every((b) => b.label === String(b.x0));
  return bins.map((b, i) => ({
    label: byValue ? b.label : formatNumber(b.x0, 3),
    value: b.count,
    title: `${byValue ? b.label : `${formatNumber(b.x0)} ≤ x ${i === bins.length - 1 ? "≤" : "<"} ${formatNumber(b.x1)}`}: ${b.count} ${unit}${b.count === 1 ? "" : "s"}`,
  }));
}

function shortText(value: MetricValue): string {
  if (typeof value === "number") return formatNumber(value, 6);
  if (Array.isArray(value)) {
    const head = value.slice(0, 8).map((v) => formatNumber(v, 4)).join(", ");
    return `[${head}${value.length > 8 ? ", …" : ""}] (${value.length} value${value.length === 1 ? "" : "s"})`;
  }
  return JSON.stringify(value);
}

function fullText(value: MetricValue): string {
  if (typeof value === "number") return String(value);
  const text = JSON.stringify(value);
  return text.length > 2000 ? `${text.slice(0, 2000)}…` : text;
}
