/**
 * The run over wall time: one lane per sample with its generation spans (genStart → genEnd) and environment spans
 * (genEnd → envEnd), on a shared x axis in seconds. In sync mode the turns line up across lanes (lock-step); in
 * async mode every lane goes its own way. Lanes are virtualised, so 1,000 samples stay smooth.
 */

import { memo, useMemo, type CSSProperties } from "react";
import { VirtualRows } from "./VirtualRows.js";
import type { RunModel, SampleView } from "../run/run-model.js";
import { useRun } from "../session/hooks.js";
import { formatNumber, niceTicks } from "./charts/bins.js";
import { CELL_LEGEND, glyphOf, laneEnd, laneSpans, sampleSignature } from "./charts/run-states.js";
import "./views.css";

export interface TimelineProps {
  model: RunModel;
  selected: number;
  /** Lanes are memoised: pass a stable callback. */
  onSelect(sample: number): void;
}

const LANE_HEIGHT = 16;
const VIEWPORT_HEIGHT = 300;

const END_KINDS = CELL_LEGEND.filter((e) => e.glyph);

export function Timeline({ model, selected, onSelect: select }: TimelineProps) {
  // Drawn again each time the run publishes.
  useRun(model);
  const samples = model.samples;
  const now = model.summary.lastT;
  const running = model.summary.status === "running";
  // The domain: from the start to the last event, never empty. While the run goes on it grows by whole ticks (the
  // last tick at or past now): every span is placed on it, so a domain that moved with every event would restyle
  // and lay out every lane at every frame.
  const domain = running ? Math.max(1, niceTicks((now * 1.05) / 1000, 6).at(-1)! * 1000) : Math.max(now, 1);
  const ticks = useMemo(() => niceTicks(domain / 1000, 6).filter((s) => s * 1000 <= domain + 1e-9), [domain]);

  const mode = model.summary.mode;
  const pct = (ms: number) => `${(Math.min(Math.max(ms, 0), domain) / domain) * 100}%`;
  // Lanes place their spans in milliseconds times this scale, so a growing run rescales them without re-rendering
  // every lane: a lane re-renders only when its own sample changed. Open spans run to the right edge (now).
  const scale = { "--tl-k": `${100 / domain}%` } as CSSProperties;

  return (
    <div className="tl" data-testid="timeline" data-mode={mode ?? ""} style={scale}>
      <TimelineLegend />
      <p className="hint tl-mode">
        {mode === "sync"
          ? "Sync: every turn is one batched generation, then the environment steps; turns line up across lanes (lock-step)."
          : mode === "async"
            ? "Async: every sample runs its own loop; lanes move independently."
            : "Waiting for the run to start."}{" "}
        {samples.length > 0 && `${formatNumber(now / 1000, 3)} s${running ? " so far" : " in all"}.`}
      </p>
      {samples.length > 0 && (
        <div className="tl-axis" aria-hidden="true">
          <span className="tl-label" />
          <span className="tl-track">
            {ticks.map((s) => (
              <span key={s} className="tl-tick" style={{ left: pct(s * 1000) }}>
                {formatNumber(s, 3)} s
              </span>
            ))}
          </span>
        </div>
      )}
      <VirtualRows
        list={{ count: samples.length, rowHeight: LANE_HEIGHT, viewportHeight: VIEWPORT_HEIGHT, overscan: 10, selected }}
        className="tl-scroll"
        role="listbox"
        aria-label="Sample lanes over wall time"
        underlay={
          <div className="tl-grid" aria-hidden="true">
            {ticks.map((s) => (
              <span key={s} style={{ left: pct(s * 1000) }} />
            ))}
          </div>
        }
        row={(index, top) => {
          const sample = samples[index]!;
          return <Lane sample={sample} signature={sampleSignature(sample)} top={top} selected={index === selected} onSelect={select} />;
        }}
      />
    </div>
  );
}

const TimelineLegend = memo(function TimelineLegend() {
  return (
    <ul className="legend" aria-label="Legend: timeline colours">
      <li>
        <span className="tl-swatch tl-gen" aria-hidden="true" /> generation
      </li>
      <li>
        <span className="tl-swatch tl-env" aria-hidden="true" /> environment step
      </li>
      <li>
        <span className="tl-swatch tl-gen open" aria-hidden="true" /> still running
      </li>
      <li className="legend-sep">lane end:</li>
      {END_KINDS.map((e) => (
        <li key={e.kind} title={e.label}>
          <span className={`tl-end-swatch rs-${e.kind}`} aria-hidden="true">
            {e.glyph}
          </span>
          {e.label.replace(/^last turn: /, "")}
        </li>
      ))}
    </ul>
  );
});

interface LaneProps {
  sample: SampleView;
  /** Changes whenever the lane's drawing would (the sample object itself is mutated in place). */
  signature: string;
  top: number;
  selected: boolean;
  onSelect(sample: number): void;
}

/** `ms` milliseconds on the lane's scale (the `--tl-k` custom property: percent per millisecond). */
const at = (ms: number) => `calc(${Math.max(0, ms)} * var(--tl-k))`;

const Lane = memo(function Lane({ sample, top, selected, onSelect }: LaneProps) {
  // Open spans end at the right edge, which is "now": their recorded end is not needed.
  const spans = laneSpans(sample, 0);
  const end = laneEnd(sample, spans);
  const seconds = (ms: number) => `${formatNumber(ms / 1000, 3)} s`;
  return (
    <div
      role="option"
      aria-selected={selected}
      data-testid="timeline-lane"
      data-sample={sample.sample}
      className={selected ? "tl-lane selected" : "tl-lane"}
      style={{ height: LANE_HEIGHT, transform: `translateY(${top}px)` }}
      onClick={() => onSelect(sample.sample)}
      title={`sample ${sample.sample}`}
    >
      <span className="tl-label">{sample.sample}</span>
      <span className="tl-track">
        {spans.map((s) => (
          <span
            key={`${s.kind}${s.turn}`}
            className={`tl-span tl-${s.kind}${s.open ? " open" : ""}`}
            style={s.open ? { left: at(s.start), right: 0 } : { left: at(s.start), width: at(s.end - s.start) }}
            title={`sample ${sample.sample}, turn ${s.turn}: ${s.kind === "gen" ? "generation" : "environment"} ${seconds(s.start)} → ${s.open ? "now" : `${seconds(s.end)} (${seconds(s.end - s.start)})`}`}
          />
        ))}
        {end !== null && sample.termination && (
          <span
            className={`tl-end rs-${sample.termination}`}
            style={{ left: at(end) }}
            title={`sample ${sample.sample} ended: ${sample.termination.replace(/_/g, " ")}`}
          >
            {glyphOf(sample.termination)}
          </span>
        )}
      </span>
    </div>
  );
});
