/**
 * Side-by-side comparison of two samples (of the current run, a run saved in this browser, or a JSONL file),
 * aligned turn by turn: the prompt, then each turn's assistant message and observation beside the other side's,
 * with differing spans highlighted, per-turn reward and flag differences, and the first divergence marked and
 * scrolled to. Everything from a model, an environment or a file is rendered as text.
 */

import { memo, useCallback, useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import { useDetailScroll } from "../layout/pane-context.js";
import { JsonlFileButton, useJsonlImport } from "../ImportJsonl.js";
import { tokenCount } from "../run/compact-messages.js";
import type { SampleView } from "../run/run-model.js";
import { savedRunId } from "../run/kept-as.js";
import type { RunSnapshot } from "../run/run-model.js";
import { useRun, useShown } from "../session/hooks.js";
import { useLab } from "../store.js";
import { TERMINATION_WORDS } from "../termination.js";
import { firstLines } from "../views/transcript/segments.js";
import { DiffParts } from "../views/tokens/DiffParts.js";
import { splitByRanges } from "../views/tokens/diff.js";
import { compareSamples, sideSample, type AlignedRow, type FirstChar, type MessagePair, type SampleComparison, type SideTurn } from "./align.js";
import { comparedSides, resolveSource, type CompareSide, type SourceKey } from "./compare-slice.js";
import { fmtReward, nextFailureAfter, optionText, samePromptSuccess } from "./sample-picks.js";
import { SamplePicker } from "./SamplePicker.js";
import "./compare.css";

const COLLAPSED_LINES = 6;
const COLLAPSED_CHARS = 600;
const MAX_MARKS = 500;

/** A side's sample: the one picked, or the run's last when it has fewer. */
function sampleAt(run: RunSnapshot | null, sample: number): SampleView | null {
  const samples = run?.model.samples ?? [];
  return samples.length ? (samples[Math.min(sample, samples.length - 1)] ?? null) : null;
}

export function CompareView() {
  const model = useShown((s) => s.model);
  // The current run's sample count follows it while it is live.
  useRun(model);
  const selected = useLab((s) => s.selection.selected);
  const picked = { a: useLab((s) => s.compare.a), b: useLab((s) => s.compare.b), auto: useLab((s) => s.compare.auto) };
  const saved = useLab((s) => s.compare.saved);
  const savedModels = useLab((s) => s.compare.savedModels);
  const files = useLab((s) => s.compare.files);
  const onlyDiffering = useLab((s) => s.compare.onlyDiffering);
  const message = useLab((s) => s.compare.message);
  const { setSide, swap, setOnlyDiffering, refreshSaved, ensureLoaded, addRead, setMessage } = useLab.getState().compare;
  // Until the user picks a side, the sides follow the selection (computed here, not copied into the store).
  const { a, b } = comparedSides(picked, { selected, samples: model?.samples.length ?? 0 });
  // The file is streamed and checked; one with problems adds nothing until the user asks for its valid lines.
  const { importFile, panel: importPanel } = useJsonlImport((read, name, skipped) => addRead(name, read, skipped), setMessage);

  useEffect(() => {
    void refreshSaved();
  }, [refreshSaved]);
  useEffect(() => {
    ensureLoaded(a.source);
    ensureLoaded(b.source);
  }, [ensureLoaded, a.source, b.source]);

  const ra = resolveSource(a.source, model, { savedModels, files });
  const rb = resolveSource(b.source, model, { savedModels, files });
  // Each side's run as published (a live current run's changes; a saved run or a file does not change).
  const runA = useRun("model" in ra ? ra.model : null);
  const runB = useRun("model" in rb ? rb.model : null);
  const sa = sampleAt(runA, a.sample);
  const sb = sampleAt(runB, b.sample);
  const comparison = useMemo(() => {
    const [left, right] = [sampleAt(runA, a.sample), sampleAt(runB, b.sample)];
    return left && right ? compareSamples(sideSample(left), sideSample(right)) : null;
  }, [runA, runB, a.sample, b.sample]);

  const sourceLabel = (key: SourceKey): string => {
    if (key === "current") return "the current run";
    if (key.startsWith("saved:")) return `saved run “${saved.find((r) => `saved:${r.id}` === key)?.title ?? "?"}”`;
    const file = files.find((f) => `file:${f.id}` === key);
    return file?.label ?? `file ${file?.name ?? "?"}`;
  };
  const label = (side: CompareSide, s: SampleView | null) => (s ? `sample ${s.sample} (idx ${s.idx}) of ${sourceLabel(side.source)}` : sourceLabel(side.source));

  const currentSavedAs = savedRunId(model);
  const sources: { key: SourceKey; text: string; disabled?: boolean }[] = [
    { key: "current", text: model ? `Current run (${model.samples.length} samples)` : "Current run (none)", disabled: !model },
    ...saved.map((r) => ({ key: `saved:${r.id}`, text: `Saved: ${r.title}${r.id === currentSavedAs ? " (the current run)" : ""}` })),
    ...files.map((f) => ({ key: `file:${f.id}`, text: f.label ?? `File: ${f.name}` })),
  ];

  return (
    <div className="cmp" data-testid="compare-view">
      <div className="cmp-pickers">
        <SidePicker name="A" side={a} run={runA} sources={sources} onChange={(side) => setSide("a", side)} />
        <button type="button" className="secondary cmp-swap" onClick={swap} title="Swap A and B" aria-label="Swap A and B">
          ⇄
        </button>
        <SidePicker name="B" side={b} run={runB} sources={sources} onChange={(side) => setSide("b", side)}>
          <CompareWith run={runA} a={sa?.sample ?? null} onPick={(sample) => setSide("b", { source: a.source, sample })} />
        </SidePicker>
      </div>
      <div className="cmp-tools">
        <JsonlFileButton label="Add a JSONL file…" ariaLabel="Compare with a JSONL file" className="cmp-file" onFile={(file) => (setMessage(null), void importFile(file))} />
        <label className="cmp-only">
          <input type="checkbox" checked={onlyDiffering} onChange={(e) => setOnlyDiffering(e.target.checked)} /> only turns that differ
        </label>
        {message && (
          <span className="hint" data-testid="compare-message">
            {message}
          </span>
        )}
      </div>
      {importPanel}
      {comparison && sa && sb ? (
        <ComparisonBody comparison={comparison} aLabel={label(a, sa)} bLabel={label(b, sb)} a={sa} b={sb} onlyDiffering={onlyDiffering} />
      ) : (
        <p className="hint" data-testid="compare-summary">
          {"loading" in ra || "loading" in rb ? "loading the saved run…" : "error" in ra ? `A: ${ra.error}` : "error" in rb ? `B: ${rb.error}` : "choose two samples"}
        </p>
      )}
    </div>
  );
}

function SidePicker(props: {
  name: "A" | "B";
  side: CompareSide;
  run: RunSnapshot | null;
  sources: { key: SourceKey; text: string; disabled?: boolean }[];
  onChange(side: CompareSide): void;
  children?: ReactNode;
}) {
  const { name, side, run, sources, onChange, children } = props;
  const sample = Math.min(side.sample, Math.max(0, (run?.model.samples.length ?? 0) - 1));
  return (
    <fieldset className={`cmp-picker cmp-side-${name.toLowerCase()}`}>
      <legend>Side {name}</legend>
      <select aria-label={`Side ${name} source`} value={side.source} onChange={(e) => onChange({ source: e.target.value, sample: side.sample })}>
        {sources.map((s) => (
          <option key={s.key} value={s.key} disabled={s.disabled}>
            {s.text}
          </option>
        ))}
        {!sources.some((s) => s.key === side.source) && <option value={side.source}>(gone)</option>}
      </select>
      <SamplePicker name={name} run={run} value={sample} onPick={(picked) => onChange({ source: side.source, sample: picked })} />
      {children}
    </fieldset>
  );
}

/**
 * Shortcuts for side B, found in A's run: the next sample after A (round the batch) that failed, errored or was cut
 * off, and a success of A's prompt (./sample-picks.ts says what counts as the same prompt). Each is disabled with
 * the reason when there is none; it stays focusable (aria-disabled) so the reason can be read.
 */
function CompareWith({ run, a, onPick }: { run: RunSnapshot | null; a: number | null; onPick(sample: number): void }) {
  const picks = useMemo(() => (run && a !== null ? { failure: nextFailureAfter(run.model.samples, a), success: samePromptSuccess(run.model.samples, a) } : null), [run, a]);
  const samples = run?.model.samples ?? [];
  const noRun = "side A has no sample yet";
  const shortcut = (text: string, testId: string, pick: number | null | undefined, none: string) => {
    const target = pick === null || pick === undefined ? null : samples[pick];
    const why = target ? `B becomes ${optionText(target)}` : picks ? none : noRun;
    return (
      <button
        type="button"
        className="secondary cmp-with-btn"
        data-testid={testId}
        aria-disabled={!target}
        title={why}
        aria-description={why}
        onClick={() => target && onPick(target.sample)}
      >
        {text}
      </button>
    );
  };
  return (
    <div className="cmp-with" role="group" aria-label="Compare A with">
      <span className="cmp-with-label">compare A with</span>
      {shortcut("the next failure", "compare-next-failure", picks?.failure, "no other sample failed")}
      {shortcut("a success of the same prompt", "compare-same-prompt", picks?.success, "no success of this prompt in this run")}
    </div>
  );
}

export interface ComparisonBodyProps {
  comparison: SampleComparison;
  aLabel: string;
  bLabel: string;
  a: Pick<SampleView, "termination" | "totalReward" | "error" | "state">;
  b: Pick<SampleView, "termination" | "totalReward" | "error" | "state">;
  onlyDiffering?: boolean;
}

/** The comparison itself (exported for tests). */
export function ComparisonBody(props: ComparisonBodyProps) {
  const { comparison, aLabel, bLabel, a, b, onlyDiffering = false } = props;
  const { rows, first } = comparison;
  const list = useRef<HTMLOListElement>(null);
  const firstRow = first?.row ?? null;

  // The first diverging turn is brought into view in what scrolls the rows: the detail pane where the lab has panes
  // (one scroll, no box inside it; only as far as needed, so the pickers above stay in view when they can), else
  // the rows' own box, to its top (the page stays).
  const pane = useDetailScroll();
  const scrollToFirst = useCallback(
    (page = false) => {
      const container = list.current;
      const el = container?.querySelector<HTMLElement>('[data-first="true"]');
      if (!container || !el) return;
      if (page) el.scrollIntoView({ block: "start", behavior: "smooth" });
      else if (pane) el.scrollIntoView({ block: "nearest" });
      else container.scrollTop += el.getBoundingClientRect().top - container.getBoundingClientRect().top - 4;
    },
    [pane],
  );
  // Again when the sides change or a live run first parts (not on every frame of a live run).
  useEffect(() => {
    scrollToFirst();
  }, [firstRow, aLabel, bLabel, onlyDiffering, scrollToFirst]);

  const shown = onlyDiffering ? rows.filter((r) => r.differences.length > 0) : rows;
  const hidden = rows.length - shown.length;
  return (
    <>
      <div className={first ? "cmp-summary diverged" : "cmp-summary same"}>
        <p data-testid="compare-summary" data-diverged={first ? "true" : "false"} data-first-turn={first ? (first.where === "turn" ? first.turn! : first.where) : undefined}>
          {comparison.summary}
        </p>
        {firstRow !== null && (
          <button type="button" className="tx-link" onClick={() => scrollToFirst(true)}>
            go to the first divergence
          </button>
        )}
        {first?.text && <FirstCharView at={first.text} />}
      </div>
      <div className="cmp-heads">
        <span className="cmp-head-a" data-testid="compare-label-a">
          A · {aLabel}
        </span>
        <span className="cmp-head-b" data-testid="compare-label-b">
          B · {bLabel}
        </span>
      </div>
      <ol className="cmp-rows" ref={list}>
        {shown.map((row) => {
          const index = rows.indexOf(row);
          return <Row key={row.turn ?? "prompt"} row={row} first={index === firstRow} />;
        })}
        {hidden > 0 && (
          <li className="hint cmp-hidden">
            {hidden} identical {hidden === 1 ? "row" : "rows"} hidden
          </li>
        )}
      </ol>
      <div className="cmp-ending" data-testid="compare-ending" data-diverged={comparison.ending.length ? "true" : "false"}>
        <EndingCell side={a} differs={comparison.ending.length > 0} name="A" />
        <EndingCell side={b} differs={comparison.ending.length > 0} name="B" />
      </div>
    </>
  );
}

function FirstCharView({ at }: { at: FirstChar }) {
  const win = (w: FirstChar["a"]) => (
    <code>
      {w.cutBefore && "…"}
      {w.before}
      {w.at === "" ? <mark className="cmp-mark cmp-end">⟨end⟩</mark> : <mark className="cmp-mark">{w.at}</mark>}
      {w.after}
      {w.cutAfter && "…"}
    </code>
  );
  return (
    <dl className="cmp-firstchar" data-testid="compare-first-char">
      <dt>A, char {at.position}</dt>
      <dd>{win(at.a)}</dd>
      <dt>B, char {at.position}</dt>
      <dd>{win(at.b)}</dd>
    </dl>
  );
}

const Row = memo(function Row({ row, first }: { row: AlignedRow; first: boolean }) {
  const diverged = row.differences.length > 0;
  const fields = new Set(row.differences.map((d) => d.field));
  return (
    <li
      className={`cmp-row${diverged ? " diverged" : ""}${first ? " first" : ""}`}
      data-testid="compare-turn"
      data-turn={row.turn ?? "prompt"}
      data-diverged={diverged ? "true" : "false"}
      data-first={first ? "true" : undefined}
    >
      <div className="cmp-row-head">
        <span className="cmp-turn-title">{row.turn === null ? "Prompt" : `Turn ${row.turn}`}</span>
        {first && <span className="tx-chip cmp-first-chip">first divergence</span>}
        {diverged ? (
          row.differences.map((d, i) => (
            <span key={i} className="tx-chip tx-warn" data-testid="compare-difference" data-field={d.field}>
              {d.field}: {d.detail}
            </span>
          ))
        ) : (
          <span className="tx-chip tx-ok">same</span>
        )}
      </div>
      <div className="cmp-cols">
        {(["a", "b"] as const).map((side) => (
          <div key={side} className={`cmp-col cmp-col-${side}`} data-side={side}>
            {row.turn !== null && !(side === "a" ? row.a : row.b) ? (
              <p className="tx-muted cmp-none">no turn {row.turn}</p>
            ) : (
              <>
                {row.turn !== null && <TurnFacts turn={(side === "a" ? row.a : row.b)!} other={side === "a" ? row.b : row.a} fields={fields} />}
                {row.pairs.map((p, i) => (
                  <MessageCell key={i} pair={p} side={side} />
                ))}
              </>
            )}
          </div>
        ))}
      </div>
    </li>
  );
});

function TurnFacts({ turn, other, fields }: { turn: SideTurn; other: SideTurn | null; fields: Set<string> }) {
  const rewardDiffers = fields.has("reward") || fields.has("reward components");
  const delta = other && turn.reward !== null && other.reward !== null && turn.reward !== other.reward ? turn.reward - other.reward : null;
  return (
    <div className="cmp-facts">
      <span className={`tx-chip ${rewardDiffers ? "cmp-differs" : turn.reward !== null && turn.reward > 0 ? "tx-ok" : "tx-muted"}`} data-testid="compare-reward">
        reward {fmtReward(turn.reward)}
        {delta !== null && ` (Δ ${fmtReward(delta)})`}
      </span>
      {turn.rewardComponents &&
        Object.entries(turn.rewardComponents).map(([k, v]) => (
          <span key={k} className="tx-chip tx-muted">
            {k} {fmtReward(v)}
          </span>
        ))}
      {(turn.terminated || fields.has("termination")) && <span className={`tx-chip ${fields.has("termination") ? "cmp-differs" : "tx-muted"}`}>{turn.terminated ? "terminated" : "not terminated"}</span>}
      {(turn.truncatedContext || fields.has("context truncated")) && (
        <span className={`tx-chip ${fields.has("context truncated") ? "cmp-differs" : "tx-warn"}`}>{turn.truncatedContext ? "context truncated" : "context not truncated"}</span>
      )}
      {(turn.responseTruncated || fields.has("response truncated")) && (
        <span className={`tx-chip ${fields.has("response truncated") ? "cmp-differs" : "tx-warn"}`}>{turn.responseTruncated ? "response truncated" : "response complete"}</span>
      )}
      {turn.violations.map((v, i) => (
        <span key={i} className={`tx-chip ${fields.has("violations") ? "cmp-differs" : "tx-bad"}`} title={v.detail ?? undefined}>
          {v.type}
        </span>
      ))}
    </div>
  );
}

function MessageCell({ pair, side }: { pair: MessagePair; side: "a" | "b" }) {
  const message = side === "a" ? pair.a : pair.b;
  const other = side === "a" ? pair.b : pair.a;
  if (!message) {
    return other ? <p className={`tx-muted cmp-none cmp-missing`}>{pair.kind === "assistant" ? "no response" : pair.kind === "observation" ? "no observation" : "no such message"}</p> : null;
  }
  const ranges = pair.diff ? pair.diff.hunks.slice(0, MAX_MARKS).map((h) => (side === "a" ? ([h.aStart, h.aEnd] as const) : ([h.bStart, h.bEnd] as const))) : null;
  const differs = ranges !== null || !other;
  const tokens = tokenCount(message);
  return (
    <div className={`tx-msg ${message.role}${differs ? " cmp-msg-differs" : ""}`}>
      <div className="tx-msg-head">
        <span className="tx-role">{message.role}</span>
        {pair.kind === "prompt" && <span className="tx-chip tx-muted">prompt</span>}
        <span className="tx-count">{tokens ? `${tokens} tokens` : `${message.content.length} chars`}</span>
      </div>
      {ranges ? (
        <pre className="tx-body" data-testid="compare-text">
          <DiffParts parts={splitByRanges(message.content, ranges)} markClass="cmp-mark" gapClass="cmp-gap" markTestId="compare-mark" />
        </pre>
      ) : (
        <CollapsibleText text={message.content} />
      )}
    </div>
  );
}

function CollapsibleText({ text }: { text: string }) {
  const [open, setOpen] = useState(false);
  const collapsed = useMemo(() => firstLines(text, COLLAPSED_LINES, COLLAPSED_CHARS), [text]);
  return (
    <>
      <pre className="tx-body" data-testid="compare-text">
        {open || !collapsed.cut ? text : `${collapsed.head}…`}
      </pre>
      {collapsed.cut && (
        <button type="button" className="tx-link" onClick={() => setOpen(!open)}>
          {open ? "collapse" : `show all (${collapsed.hiddenLines} more ${collapsed.hiddenLines === 1 ? "line" : "lines"})`}
        </button>
      )}
    </>
  );
}

function EndingCell({ side, differs, name }: { side: ComparisonBodyProps["a"]; differs: boolean; name: string }) {
  return (
    <div className={`cmp-end${differs ? " cmp-differs-box" : ""}`}>
      <strong>{name}</strong> ended: {side.termination !== null ? (TERMINATION_WORDS[side.termination] ?? side.termination) : side.state === "done" ? "no termination" : "still running"} · total reward{" "}
      {fmtReward(side.totalReward)}
      {side.error !== null && <pre className="error">{side.error}</pre>}
    </div>
  );
}
