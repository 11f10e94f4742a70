/**
 * A side's sample, searchable: an ARIA 1.2 combobox (an input that filters a listbox of the run's samples by index,
 * task name or outcome word; ↑/↓ move, Enter chooses, Escape closes). At most `MAX_OPTIONS` options are rendered,
 * the rest counted, so a 1,000-sample run opens as fast as a 3-sample one. Task names and errors are text, shown
 * whole in each option's title when the option cuts them short.
 */

import { useEffect, useId, useMemo, useRef, useState, type KeyboardEvent } from "react";
import { sampleOutcome } from "../run/outcome.js";
import type { RunSnapshot, SampleView } from "../run/run-model.js";
import { filterSamples, fmtReward, optionText, optionTitle, outcomeWord } from "./sample-picks.js";

export interface SamplePickerProps {
  /** The side, for the labels (`Side A sample`). */
  name: "A" | "B";
  /** The side's run as published (the options follow a live run), or null while there is none. */
  run: RunSnapshot | null;
  /** The sample shown on the side (its position in the run). */
  value: number;
  onPick(sample: number): void;
}

export function SamplePicker({ name, run, value, onPick }: SamplePickerProps) {
  const id = useId();
  const [open, setOpen] = useState(false);
  const [query, setQuery] = useState("");
  // The option with the visual focus (aria-activedescendant), an index into the options shown; -1 for none.
  const [active, setActive] = useState(-1);
  // Filtered only while the list is open; again when the run publishes a new version (a live run's outcomes change).
  const matches = useMemo(() => (open && run ? filterSamples(run.model.samples, query) : null), [open, run, query]);
  const samples: readonly SampleView[] = run?.model.samples ?? [];
  const current = samples[value] ?? null;
  const shown = matches?.shown ?? [];
  const at = active < shown.length ? active : -1;
  const listId = `${id}-list`;
  const optionId = (sample: number) => `${id}-o${sample}`;
  const activeId = open && at >= 0 ? optionId(shown[at]!.sample) : undefined;
  const label = current ? optionText(current) : "";
  const input = useRef<HTMLInputElement>(null);

  useEffect(() => {
    if (activeId) document.getElementById(activeId)?.scrollIntoView({ block: "nearest" });
  }, [activeId]);
  // Closed with the focus (a sample chosen, Escape), the sample's text is selected: what is typed next replaces it.
  useEffect(() => {
    const el = input.current;
    if (!open && el && document.activeElement === el) el.select();
  }, [open, label]);

  const openWith = (q: string, activeAt: number) => {
    setOpen(true);
    setQuery(q);
    setActive(activeAt);
  };
  // Opened without a query: the visual focus starts on the sample shown (when it is among the first options).
  const openAtCurrent = () => openWith("", Math.max(0, filterSamples(samples, "").shown.findIndex((s) => s.sample === value)));
  const close = () => {
    setOpen(false);
    setQuery("");
    setActive(-1);
  };
  const choose = (sample: number) => {
    close();
    onPick(sample);
  };

  const onKeyDown = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      if (!open) return openAtCurrent();
      if (shown.length) setActive(e.key === "ArrowDown" ? Math.min(at + 1, shown.length - 1) : Math.max(at - 1, 0));
    } else if (e.key === "Enter" && open) {
      e.preventDefault();
      // With no option focused, Enter takes the first match of what was typed ("17", Enter).
      const pick = at >= 0 ? shown[at] : query.trim() ? shown[0] : undefined;
      if (pick) choose(pick.sample);
    } else if (e.key === "Escape" && open) {
      e.preventDefault();
      e.stopPropagation();
      close();
    }
  };

  const more = matches ? matches.total - shown.length : 0;
  return (
    <div className="cmp-combo">
      <input
        type="text"
        role="combobox"
        aria-label={`Side ${name} sample`}
        aria-expanded={open}
        aria-controls={listId}
        aria-autocomplete="list"
        aria-activedescendant={activeId}
        data-sample={current?.sample}
        ref={input}
        value={open ? query : label}
        title={!open && current ? optionTitle(current) : undefined}
        placeholder={samples.length ? "an index, a task or an outcome (failed, cut…)" : "no samples"}
        disabled={samples.length === 0}
        autoComplete="off"
        spellCheck={false}
        // Focused by the keyboard, the sample's text is selected, so typing replaces it with a query.
        onFocus={(e) => e.currentTarget.select()}
        onClick={() => {
          if (!open) openAtCurrent();
        }}
        // Typed after the sample's text (the caret moved to its end), only what was typed is the query.
        onChange={(e) => {
          const text = e.currentTarget.value;
          openWith(!open && label && text.startsWith(label) ? text.slice(label.length) : text, -1);
        }}
        onBlur={close}
        onKeyDown={onKeyDown}
      />
      {/* The input keeps the focus (a blur would close the list before a click on an option). */}
      <div className="cmp-combo-pop" hidden={!open} onMouseDown={(e) => e.preventDefault()}>
        <ul role="listbox" id={listId} aria-label={`Side ${name} samples`}>
          {shown.map((s, i) => (
            <li
              key={s.sample}
              id={optionId(s.sample)}
              role="option"
              aria-selected={i === at}
              data-sample={s.sample}
              className={`cmp-opt${i === at ? " active" : ""}${s.sample === value ? " current" : ""}`}
              title={optionTitle(s)}
              onMouseMove={() => i !== at && setActive(i)}
              onClick={() => choose(s.sample)}
            >
              <OptionText s={s} />
            </li>
          ))}
        </ul>
        {matches && (matches.total === 0 || more > 0) && (
          <p className="cmp-combo-more" role="status" data-testid="compare-picker-more">
            {matches.total === 0 ? `no sample matches “${query.trim()}”` : `${more} more — type to narrow`}
          </p>
        )}
      </div>
    </div>
  );
}

function OptionText({ s }: { s: SampleView }) {
  const outcome = sampleOutcome(s);
  return (
    <>
      <span className="cmp-opt-line">
        <span className="cmp-opt-n">sample {s.sample}</span>
        {" · "}
        <span className="cmp-opt-task">{s.task}</span>
        {" · "}
        <span className={`cmp-opt-outcome outcome-${outcome ?? "running"}`}>{outcomeWord(outcome)}</span>
        {" · "}
        <span className="cmp-opt-reward">reward {fmtReward(s.totalReward)}</span>
      </span>
      {s.error !== null && <span className="cmp-opt-error">{s.error}</span>}
    </>
  );
}
