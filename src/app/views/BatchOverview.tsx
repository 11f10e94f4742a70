/**
 * The batch at a glance: one row per sample (its number, idx, task, total reward and how it ended) and one cell
 * per turn, coloured by state. Rows are virtualised (fixed height, fixed-height scroll container), so a batch of
 * 1,000 samples stays smooth while it runs. The summary counts the samples that drift from the chat template (the
 * token consistency check, run in idle time: ./drift.ts), and "only drifting samples" filters the rows (j/k then move
 * among the rows shown).
 */

import { memo, useEffect, useMemo, useRef, useState } from "react";
import { compileFilter, compileValue, sortableFields, sortRows, type FilterError } from "../run/sample-filter.js";
import { runSteps } from "../run/run-steps.js";
import { StepSelect } from "./StepSelect.js";
import { MISMATCH_THRESHOLD, runMismatch, type RunMismatch } from "../run/mismatch.js";
import { runGroups, type RunGroups } from "../run/groups.js";
import { driftingFilter, driftOf, filterRows, useDrift, type DriftSummary, type RowFilter } from "./drift.js";
import type { CheckScenario, WorkerCheck } from "./token-check-view.js";
import { useMasterHeight } from "../layout/pane-context.js";
import { VirtualRows } from "./VirtualRows.js";
import type { RunModel, SampleView } from "../run/run-model.js";
import { OUTCOME_MEANING, OUTCOME_WORDS, runOutcomes, sampleOutcome, type Outcome, type RunOutcomes } from "../run/outcome.js";
import { turnBadges, type ThinkingStyle } from "./turn-badges.js";
import { useRun } from "../session/hooks.js";
import { formatNumber } from "./charts/bins.js";
import { CELL_LEGEND, glyphOf, MAX_TURN_CELLS, sampleSignature, sampleStateWords, turnCells, type CellKind } from "./charts/run-states.js";
import { SearchBox } from "./SearchBox.js";
import { Histograms } from "./charts/Histograms.js";
import "./views.css";

export interface BatchOverviewProps {
  model: RunModel;
  selected: number;
  selectedTurn: number | null;
  /** Rows are memoised: pass a stable callback. */
  onSelect(sample: number, turn: number | null): void;
  /** How the run's assistants mark thinking (for the malformed-thinking badge). */
  thinkingStyle?: ThinkingStyle;
  /** The run's scenario: the token check's tokenizer and whether the run was structured. */
  scenario?: CheckScenario;
  /** Checks a real vocabulary's samples in the rollout worker. */
  workerCheck?: WorkerCheck;
  /** The samples shown while a filter is on (null: all), for the keys that move the selection. Pass a stable callback. */
  onShownRows?(rows: readonly number[] | null): void;
  /** The run search as typed, for the transcript to mark its matches. Pass a stable callback. */
  onSearch?(text: string): void;
}

const NO_FILTERS: readonly RowFilter[] = [];

const ROW_HEIGHT = 26;
/** The rows' box where the page scrolls; in a pane it fills what the pane has left under the summary. */
const VIEWPORT_HEIGHT = 340;
const PANE_CHROME = 150;

/** The turn cell the Tab key stops at: the selected turn of the selected sample, or its first turn. */
const currentCell = (selectedTurn: number | null) => selectedTurn ?? 0;

export function BatchOverview(props: BatchOverviewProps) {
  const { model, selected, selectedTurn, onSelect: select, thinkingStyle = "paired", scenario = null, workerCheck, onShownRows, onSearch } = props;
  const run = useRun(model);
  const drift = useDrift(run, scenario, workerCheck);
  const [onlyDrifting, setOnlyDrifting] = useState(false);
  const [expression, setExpression] = useState("");
  // The expression reads the final batch's columns (an import's fields), present once the run ended.
  const finalBatch = run.model.finalBatch;
  const groups = useMemo(() => runGroups(run.model.samples, finalBatch), [run, finalBatch]);
  const compiled = useMemo(
    () => compileFilter(expression, { batch: finalBatch as Record<string, unknown[]> | null, drift: (s) => driftOf(s, scenario), groups }),
    [expression, finalBatch, scenario, groups],
  );
  const mismatch = useMemo(() => runMismatch(run.model.samples, finalBatch?.imported), [run, finalBatch]);
  const steps = useMemo(() => runSteps(finalBatch?.imported), [finalBatch]);
  const filters = useMemo(() => {
    const list: RowFilter[] = onlyDrifting ? [driftingFilter(scenario)] : [];
    if ("test" in compiled && compiled.test) list.push({ id: `expr:${expression}`, test: compiled.test });
    return list.length ? list : NO_FILTERS;
  }, [onlyDrifting, scenario, compiled, expression]);
  // The rows by sample number while a filter is on (recomputed as verdicts arrive); null: every sample, in order.
  const [sortKey, setSortKey] = useState("");
  const sortFields = useMemo(() => sortableFields({ batch: finalBatch as Record<string, unknown[]> | null }), [finalBatch]);
  const [sortDown, setSortDown] = useState(true);
  const filterContext = useMemo(() => ({ batch: finalBatch as Record<string, unknown[]> | null, groups }), [finalBatch, groups]);
  const rows = useMemo(() => {
    const kept = filters.length && drift.checked >= 0 ? filterRows(run.model.samples, filters) : null;
    if (!sortKey) return kept;
    const value = compileValue(sortKey, filterContext);
    if ("error" in value) return kept;
    return sortRows(kept ?? run.model.samples.map((s) => s.sample), run.model.samples, value.get, sortDown);
  }, [filters, run, drift, sortKey, sortDown, filterContext]);
  useEffect(() => onShownRows?.(rows), [rows, onShownRows]);
  useEffect(() => () => onShownRows?.(null), [onShownRows]);
  const masterHeight = useMasterHeight();
  const viewportHeight = masterHeight === null ? VIEWPORT_HEIGHT : Math.max(6 * ROW_HEIGHT, masterHeight - PANE_CHROME);
  // One Tab stop in the grid (the current cell); while the keyboard is in the grid, focus follows the selection.
  const grid = useRef<HTMLDivElement>(null);
  const keyboardInGrid = useRef(false);
  useEffect(() => {
    if (!keyboardInGrid.current) return;
    // The selected row is drawn once the list has scrolled to it: a frame or two.
    let tries = 0;
    let frame = requestAnimationFrame(function focusCurrent() {
      const cell = grid.current?.querySelector<HTMLElement>('[data-current-cell=""]');
      if (cell) cell.focus({ preventScroll: false });
      else if (++tries < 5) frame = requestAnimationFrame(focusCurrent);
    });
    return () => cancelAnimationFrame(frame);
  }, [selected, selectedTurn]);
  const selectedHasCells = (model.samples[selected]?.turns.length ?? 0) > 0;
  const samples = model.samples;
  const maxTurns = model.summary.maxRolloutTurns;
  const counts = useMemo(() => countKinds(run.model.samples), [run]);
  const outcomes = useMemo(() => runOutcomes(run.model.samples), [run]);
  const slots = Math.min(maxTurns, MAX_TURN_CELLS);

  return (
    <div className="ov" data-testid="batch-overview">
      <OutcomeSummary outcomes={outcomes} />
      <DriftLine drift={drift} only={onlyDrifting} onOnly={setOnlyDrifting} shown={rows?.length ?? null} />
      <RunMismatchLine mismatch={mismatch} />
      <GroupsLine groups={groups} onShow={setExpression} />
      {steps && <StepSelect steps={steps} expression={expression} onExpression={setExpression} />}
      <SearchBox samples={run.model.samples} version={run} onSelect={select} onSearch={onSearch} />
      <Histograms samples={run.model.samples} version={run} imported={finalBatch?.imported} expression={expression} onExpression={setExpression} />
      <SortBox fields={sortFields} value={sortKey} down={sortDown} onValue={setSortKey} onDown={setSortDown} />
      <FilterBox text={expression} onText={setExpression} error={"error" in compiled ? compiled.error : null} shown={rows?.length ?? null} total={samples.length} />
      <Legend counts={counts} total={samples.length} />
      <div className="ov-head" role="presentation">
        <span>#</span>
        <span>idx</span>
        <span>task</span>
        <span className="ov-num">reward</span>
        <span>outcome</span>
        <span className="ov-term">ended</span>
        <span className="ov-turns-head" title={maxTurns > slots ? `the first ${slots} turns are drawn, of up to ${maxTurns}` : undefined}>
          turns{maxTurns > slots ? ` (${slots} of ≤${maxTurns})` : maxTurns ? ` (max ${maxTurns})` : ""}
        </span>
      </div>
      <VirtualRows
        list={{ count: rows ? rows.length : samples.length, rowHeight: ROW_HEIGHT, viewportHeight, overscan: 8, selected: rows ? rows.indexOf(selected) : selected }}
        boxRef={grid}
        tabIndex={selectedHasCells ? -1 : 0}
        onFocus={() => (keyboardInGrid.current = true)}
        onBlur={(e) => {
          if (e.relatedTarget && !e.currentTarget.contains(e.relatedTarget as Node)) keyboardInGrid.current = false;
        }}
        before={
          samples.length === 0 ? (
            <p className="hint ov-none">No samples yet.</p>
          ) : (
            rows?.length === 0 &&
            (onlyDrifting && !expression.trim() ? (
              <p className="hint ov-none" data-testid="no-drifting">
                No drifting samples{drift.checked < drift.finished ? " so far" : ""}.
              </p>
            ) : (
              <p className="hint ov-none" data-testid="no-match">
                No sample matches the filter.
              </p>
            ))
          )
        }
        className="ov-scroll"
        role="grid"
        aria-label="Samples and their turns"
        aria-rowcount={samples.length}
        row={(index, top) => {
          const n = rows ? rows[index]! : index;
          const s = samples[n]!;
          const isSelected = n === selected;
          return (
            <Row
              sample={s}
              signature={sampleSignature(s)}
              maxTurns={maxTurns}
              top={top}
              selected={isSelected}
              selectedTurn={isSelected ? selectedTurn : null}
              onSelect={select}
              thinkingStyle={thinkingStyle}
            />
          );
        }}
      />
    </div>
  );
}

interface RowProps {
  sample: SampleView;
  /** Changes whenever the row's drawing would (the sample object itself is mutated in place). */
  signature: string;
  maxTurns: number;
  top: number;
  selected: boolean;
  selectedTurn: number | null;
  onSelect(sample: number, turn: number | null): void;
  thinkingStyle: ThinkingStyle;
}

const Row = memo(function Row({ sample: s, maxTurns, top, selected, selectedTurn, onSelect, thinkingStyle }: RowProps) {
  const { kinds, overflow } = turnCells(s, maxTurns);
  const words = sampleStateWords(s);
  const outcome = sampleOutcome(s);
  const n = s.sample;
  return (
    <div
      role="row"
      data-testid="sample-row"
      data-sample={n}
      aria-selected={selected}
      aria-rowindex={n + 1}
      data-outcome={outcome ?? "running"}
      className={`ov-row outcome-${outcome ?? "running"}${selected ? " selected" : ""}`}
      style={{ height: ROW_HEIGHT, transform: `translateY(${top}px)` }}
      onClick={() => onSelect(n, null)}
    >
      <span role="gridcell" className="ov-num">
        {n}
      </span>
      <span role="gridcell" className="ov-num">
        {s.idx}
      </span>
      <span role="gridcell" className="ov-task" title={s.task}>
        {s.task}
      </span>
      <span role="gridcell" className="ov-num" title={String(s.totalReward)}>
        {formatNumber(s.totalReward)}
      </span>
      <span role="gridcell" data-testid="outcome" className={`ov-outcome outcome-${outcome ?? "running"}`} title={outcome ? `${OUTCOME_WORDS[outcome]}: ${OUTCOME_MEANING[outcome]}` : "still running"}>
        {outcome ? OUTCOME_WORDS[outcome] : "…"}
      </span>
      <span role="gridcell" data-testid="termination" className={s.state === "done" ? `ov-term end-${s.termination}` : "ov-term live"} title={words}>
        {words}
      </span>
      <span role="gridcell" className="ov-turns">
        {kinds.map((kind, i) => {
          if (kind === null || kind === "pending") return <span key={i} className={kind === null ? "ov-cell ov-empty" : "ov-cell rs-pending"} aria-hidden="true" />;
          const t = s.turns[i];
          const problems = t ? turnBadges(s, t, thinkingStyle) : [];
          const current = selected && i === currentCell(selectedTurn);
          // The environment's end of an episode: ✓ solved, ✗ not (the colour says the same).
          const failedEnd = kind === "terminated" && outcome === "failed";
          const words = `sample ${n}, turn ${i}: ${failedEnd ? "last turn: terminated by the environment, not solved" : kind === "terminated" ? "last turn: terminated by the environment, solved" : cellWords(kind)}${problems.length ? `; ${problems.join("; ")}` : ""}`;
          return (
            <button
              key={i}
              type="button"
              data-turn={i}
              data-problems={problems.length || undefined}
              className={`ov-cell rs-${kind}${failedEnd ? " rs-failed" : ""}${problems.length ? " has-problems" : ""}${selectedTurn === i ? " current" : ""}`}
              title={words}
              aria-label={words}
              aria-pressed={selectedTurn === i}
              tabIndex={current ? 0 : -1}
              data-current-cell={current ? "" : undefined}
              onClick={(e) => {
                e.stopPropagation();
                onSelect(n, i);
              }}
            >
              {failedEnd ? "✗" : glyphOf(kind)}
            </button>
          );
        })}
        {overflow > 0 && (
          <span className="ov-overflow" title={`${overflow} more turn(s) not drawn`}>
            +{overflow}
          </span>
        )}
      </span>
    </div>
  );
});

/** How many finished samples drift from the chat template, and the filter to show only them. */
const DriftLine = memo(function DriftLine(props: { drift: DriftSummary; only: boolean; onOnly(only: boolean): void; shown: number | null }) {
  const { drift, only, onOnly, shown } = props;
  if (drift.needsModel) {
    return (
      <p className="ov-summary hint" data-testid="run-summary-drift" data-state="needs_model">
        drift from the chat template: not checked, it needs the tokenizer of {drift.needsModel} (run the scenario in this page to load it)
      </p>
    );
  }
  if (drift.finished === 0) return null;
  return (
    <p className="ov-summary" data-testid="run-summary-drift-line">
      <span data-testid="run-summary-drift" data-drifting={drift.drifting} data-checked={drift.checked} className={drift.drifting ? "has-problems" : undefined}>
        {drift.drifting} of {drift.checked} drift from the chat template
      </span>
      {drift.checked < drift.finished && <span className="hint"> (checking: {drift.checked} of {drift.finished} finished samples)</span>}{" "}
      <label className="ov-filter">
        <input type="checkbox" data-testid="only-drifting" checked={only} onChange={(e) => onOnly(e.currentTarget.checked)} /> only drifting samples
        {only && shown !== null && <span className="hint"> ({shown} shown)</span>}
      </label>
    </p>
  );
});

/** Sorting the rows by a field: the sample order, or a field's value up or down (j / k follow the order shown). */
const SortBox = memo(function SortBox(props: { fields: string[]; value: string; down: boolean; onValue(v: string): void; onDown(down: boolean): void }) {
  const { fields, value, down, onValue, onDown } = props;
  return (
    <label className="ov-sort">
      <span className="hint">sort </span>
      <select data-testid="sample-sort" aria-label="Sort the samples by" value={value} onChange={(e) => onValue(e.currentTarget.value)}>
        <option value="">by sample</option>
        {fields.map((f) => (
          <option key={f} value={f}>
            by {f}
          </option>
        ))}
      </select>
      {value && (
        <button type="button" className="link" data-testid="sample-sort-direction" onClick={() => onDown(!down)} aria-label={down ? "highest first: show lowest first" : "lowest first: show highest first"}>
          {down ? "highest first" : "lowest first"}
        </button>
      )}
    </label>
  );
});

/** The run's GRPO groups: how many, their sizes, and the ones with zero reward variance (a filter away). */
const GroupsLine = memo(function GroupsLine({ groups, onShow }: { groups: RunGroups; onShow(expression: string): void }) {
  const multi = groups.groups.filter((g) => g.samples.length > 1);
  if (multi.length === 0) return null;
  const sizes = multi.map((g) => g.samples.length);
  const [lo, hi] = [Math.min(...sizes), Math.max(...sizes)];
  const by = [...new Set(multi.map((g) => g.by))].join(", ");
  const meanStd = multi.reduce((a, g) => a + g.std, 0) / multi.length;
  return (
    <p className="ov-summary" data-testid="run-groups">
      {multi.length} group{multi.length === 1 ? "" : "s"} of {lo === hi ? lo : `${lo}–${hi}`} samples (by {by}) · mean reward std {formatNumber(meanStd, 4)} ·{" "}
      <span className={groups.zeroVariance ? "has-problems" : undefined}>
        {groups.zeroVariance} with zero reward variance (no gradient)
      </span>
      {groups.zeroVariance > 0 && (
        <>
          {" "}
          <button type="button" className="link" data-testid="show-zero-variance" onClick={() => onShow("zero_variance")}>
            show them
          </button>
        </>
      )}
    </p>
  );
});

/** The run's training–inference mismatch, where its dump has the trainer's log-probabilities (../run/mismatch.ts). */
const RunMismatchLine = memo(function RunMismatchLine({ mismatch }: { mismatch: RunMismatch | null }) {
  if (!mismatch) return null;
  return (
    <p className="ov-summary" data-testid="run-mismatch">
      trainer vs engine log-probs: mean |Δ| {formatNumber(mismatch.meanAbs, 4)} over {mismatch.tokens} trained tokens of {mismatch.samples} samples · max{" "}
      {formatNumber(mismatch.maxAbs, 4)} · {formatNumber(mismatch.overThreshold * 100, 3)}% over {MISMATCH_THRESHOLD} ·{" "}
      <span className={mismatch.ratioOutliers ? "has-problems" : undefined}>
        {mismatch.ratioOutliers} with a sequence ratio outside [0.5, 2]
      </span>{" "}
      <span className="hint">(filter: mismatch &gt; 0.1)</span>
    </p>
  );
});

/**
 * The filter expression over the samples (../run/sample-filter.ts): `reward < 0.5 and turns > 3`, `text ~
 * "Traceback"`, `drift`, any imported field. An expression that cannot be read says why, with its offending part
 * marked, and filters nothing.
 */
const FilterBox = memo(function FilterBox(props: { text: string; onText(text: string): void; error: FilterError | null; shown: number | null; total: number }) {
  const { text, onText, error, shown, total } = props;
  return (
    <div className="ov-filter-box">
      <label>
        <span className="hint">filter </span>
        <input
          type="search"
          data-testid="sample-filter"
          aria-label="Filter the samples"
          aria-invalid={error ? true : undefined}
          placeholder={'reward < 0.5 and turns > 3 · termination == "error" · text ~ "Traceback" · drift'}
          value={text}
          spellCheck={false}
          onChange={(e) => onText(e.currentTarget.value)}
        />
      </label>
      {error ? (
        <p className="ov-filter-error" data-testid="sample-filter-error" role="status">
          {error.message}:{" "}
          <code>
            {text.slice(0, error.start)}
            <mark>{text.slice(error.start, Math.max(error.end, error.start)) || "␣"}</mark>
            {text.slice(Math.max(error.end, error.start))}
          </code>
        </p>
      ) : (
        text.trim() &&
        shown !== null && (
          <span className="hint" data-testid="sample-filter-count">
            {" "}
            {shown} of {total} shown
          </span>
        )
      )}
    </div>
  );
});

const cellWords = (kind: CellKind) => CELL_LEGEND.find((e) => e.kind === kind)?.label ?? kind;

const OUTCOME_ORDER: readonly Outcome[] = ["solved", "failed", "cut", "error", "stopped"];

/** The run at a glance: how many samples were solved, failed, cut off, errors, stopped; the mean reward; turn problems. */
const OutcomeSummary = memo(function OutcomeSummary({ outcomes }: { outcomes: RunOutcomes }) {
  const { samples, finished, counts, meanReward, truncatedResponses, turnsWithViolations } = outcomes;
  if (samples === 0) return null;
  return (
    <p className="ov-summary" data-testid="run-summary">
      <strong data-testid="run-summary-solved">
        solved {counts.solved} of {samples}
      </strong>
      {finished < samples && <span className="hint"> ({samples - finished} still running)</span>}
      {OUTCOME_ORDER.slice(1).map((o) =>
        counts[o] ? (
          <span key={o} className={`ov-summary-item outcome-${o}`} data-outcome={o} title={OUTCOME_MEANING[o]}>
            {" "}
            · {OUTCOME_WORDS[o]} {counts[o]}
          </span>
        ) : null,
      )}
      {meanReward !== null && <span className="ov-summary-item"> · mean reward {formatNumber(meanReward)}</span>}
      {truncatedResponses > 0 && (
        <span className="ov-summary-item has-problems" data-testid="run-summary-truncated">
          {" "}
          · {truncatedResponses} truncated {truncatedResponses === 1 ? "response" : "responses"}
        </span>
      )}
      {turnsWithViolations > 0 && (
        <span className="ov-summary-item has-problems" data-testid="run-summary-violations">
          {" "}
          · {turnsWithViolations} {turnsWithViolations === 1 ? "turn" : "turns"} with violations
        </span>
      )}
    </p>
  );
});

type Counts = Partial<Record<CellKind, number>>;

/** Samples per state: in progress by what they do now, finished by how they ended. */
function countKinds(samples: readonly SampleView[]): Counts {
  const counts: Counts = {};
  const add = (k: CellKind) => (counts[k] = (counts[k] ?? 0) + 1);
  for (const s of samples) {
    if (s.state === "done") add(s.termination ?? "ok");
    else if (s.state === "generating") add("generating");
    else if (s.state === "environment") add("environment");
    else add("pending");
  }
  return counts;
}

/**
 * One line: the states the batch's cells are in now, each with its count (a state no cell is in is not listed; the
 * title lists them all). "turn done" is always there, as the colour most cells have.
 */
const Legend = memo(function Legend({ counts, total }: { counts: Counts; total: number }) {
  const shown = CELL_LEGEND.filter((e) => e.kind === "ok" || counts[e.kind]);
  return (
    <ul className="legend legend-line" aria-label="Legend: turn cell colours" title={CELL_LEGEND.map((e) => `${e.glyph ? `${e.glyph} ` : ""}${e.label}`).join("\n")}>
      {shown.map((e) => (
        <li key={e.kind} title={`${e.label}: ${legendTitle(e.kind)}`} data-kind={e.kind}>
          <span className={`ov-cell swatch rs-${e.kind}`} aria-hidden="true">
            {e.glyph}
          </span>
          {e.short}
          {e.kind !== "ok" && e.kind !== "pending" && counts[e.kind] ? <span className="legend-count"> · {counts[e.kind]}</span> : null}
        </li>
      ))}
      <li className="legend-total">
        {total} samples{counts.pending ? ` · ${counts.pending} waiting for their next turn` : ""}
      </li>
    </ul>
  );
}, sameLegend);

function sameLegend(a: { counts: Counts; total: number }, b: { counts: Counts; total: number }): boolean {
  if (a.total !== b.total) return false;
  const keys = new Set([...Object.keys(a.counts), ...Object.keys(b.counts)]) as Set<CellKind>;
  for (const k of keys) if (a.counts[k] !== b.counts[k]) return false;
  return true;
}

function legendTitle(kind: CellKind): string {
  switch (kind) {
    case "pending":
      return "A turn still to come.";
    case "generating":
      return "The policy is generating this turn; the count is the samples generating now.";
    case "environment":
      return "The response is with the environment; the count is the samples waiting for it.";
    case "ok":
      return "A finished turn the sample went on from.";
    default:
      return "A sample's last turn, by how the sample ended; the count is the samples that ended so.";
  }
}
