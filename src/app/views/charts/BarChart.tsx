/** A small SVG bar chart: labelled bars, a y axis at nice ticks, a title per bar for its exact value. */

import { memo } from "react";
import { formatNumber, niceTicks } from "./bins.js";

export interface Bar {
  label: string;
  value: number;
  /** Tooltip text (defaults to "label: value"). */
  title?: string;
}

export interface BarChartProps {
  title: string;
  bars: readonly Bar[];
  xLabel: string;
  yLabel: string;
  colour?: string;
  emptyText?: string;
  testId?: string;
}

const W = 320;
const H = 160;
const M = { top: 10, right: 8, bottom: 30, left: 36 };

export const BarChart = memo(function BarChart({ title, bars, xLabel, yLabel, colour = "#2f6fdf", emptyText = "No data yet.", testId }: BarChartProps) {
  const plotW = W - M.left - M.right;
  const plotH = H - M.top - M.bottom;
  const maxValue = Math.max(0, ...bars.map((b) => (Number.isFinite(b.value) ? b.value : 0)));
  const ticks = niceTicks(maxValue, 4);
  const top = ticks.at(-1) || 1;
  const y = (v: number) => M.top + plotH - (Math.max(0, v) / top) * plotH;
  const slot = bars.length ? plotW / bars.length : plotW;
  const gap = Math.max(Math.min(4, slot * 0.2), slot - 48);
  // Label every k-th bar so the labels do not overlap (about 26 px each).
  const every = Math.max(1, Math.ceil(bars.length / Math.max(1, Math.floor(plotW / 26))));
  return (
    <figure className="chart" data-testid={testId}>
      <figcaption>{title}</figcaption>
      {bars.length === 0 ? (
        <p className="hint chart-empty">{emptyText}</p>
      ) : (
        <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`${title}: ${bars.map((b) => `${b.label} ${formatNumber(b.value)}`).join(", ")}`}>
          {ticks.map((t) => (
            <g key={t}>
              <line x1={M.left} x2={W - M.right} y1={y(t)} y2={y(t)} className="chart-grid" />
              <text x={M.left - 4} y={y(t) + 3} textAnchor="end" className="chart-tick">
                {formatNumber(t, 3)}
              </text>
            </g>
          ))}
          {bars.map((b, i) => {
            const x = M.left + i * slot + gap / 2;
            const v = Number.isFinite(b.value) ? b.value : 0;
            return (
              <g key={i}>
                <rect x={x} y={y(v)} width={Math.max(1, slot - gap)} height={Math.max(0, M.top + plotH - y(v))} fill={colour}>
                  <title>{b.title ?? `${b.label}: ${formatNumber(b.value, 6)}`}</title>
                </rect>
                {i % every === 0 && (
                  <text x={x + (slot - gap) / 2} y={H - M.bottom + 11} textAnchor="middle" className="chart-tick">
                    {b.label}
                  </text>
                )}
              </g>
            );
          })}
          <line x1={M.left} x2={W - M.right} y1={M.top + plotH} y2={M.top + plotH} className="chart-axis" />
          <text x={M.left + plotW / 2} y={H - 4} textAnchor="middle" className="chart-label">
            {xLabel}
          </text>
          <text x={10} y={M.top + plotH / 2} textAnchor="middle" className="chart-label" transform={`rotate(-90 10 ${M.top + plotH / 2})`}>
            {yLabel}
          </text>
        </svg>
      )}
    </figure>
  );
}, sameChart);

/** Charts redraw only when what they show changed (the panel recomputes its bars on every model change). */
function sameChart(a: BarChartProps, b: BarChartProps): boolean {
  if (a.title !== b.title || a.xLabel !== b.xLabel || a.yLabel !== b.yLabel || a.colour !== b.colour || a.testId !== b.testId) return false;
  if (a.emptyText !== b.emptyText || a.bars.length !== b.bars.length) return false;
  return a.bars.every((x, i) => {
    const y = b.bars[i]!;
    return x.label === y.label && x.value === y.value && x.title === y.title;
  });
}
