/**
 * Small histograms of the run's samples (reward, tokens, turns, mismatch when the run has one), collapsed by
 * default. A bar is a button: it sets the filter expression that selects its samples (so the user sees and edits
 * it); pressing the same bar again clears the filter.
 */

import { memo, useMemo, useState } from "react";
import type { SampleView } from "../../run/run-model.js";
import { binExpression, binValues, type Histogram } from "../../run/histograms.js";
import { sampleMismatch } from "../../run/mismatch.js";
import { formatNumber } from "./bins.js";

export const Histograms = memo(function Histograms(props: {
  samples: readonly SampleView[];
  /** Changes whenever the run publishes (a live run's samples grow in place). */
  version: unknown;
  imported: unknown[] | undefined;
  expression: string;
  onExpression(e: string): void;
}) {
  const { samples, version, imported, expression, onExpression } = props;
  const [open, setOpen] = useState(false);
  const histograms = useMemo(() => {
    if (!open) return [];
    const list: Histogram[] = [
      binValues("reward", samples.map((s) => s.totalReward)),
      binValues("tokens", samples.map((s) => s.messages.reduce((n, m) => n + m.token_ids.length, 0)), { integer: true }),
      binValues("turns", samples.map((s) => s.turns.filter(Boolean).length), { integer: true }),
    ];
    const mismatch = samples.map((s) => sampleMismatch(s, imported?.[s.sample])?.meanAbs ?? null);
    if (mismatch.some((v) => v !== null)) list.push(binValues("mismatch", mismatch));
    return list;
    // eslint-disable-next-line react-hooks/exhaustive-deps -- `version` is what says the samples changed
  }, [open, samples, imported, version]);
  return (
    <details className="ov-hists" data-testid="histograms" open={open} onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>histograms</summary>
      {histograms.map((h) => {
        const most = Math.max(1, ...h.bins.map((b) => b.count));
        return (
          <div key={h.field} className="ov-hist" data-field={h.field}>
            <span className="hint">{h.field}</span>
            <div className="ov-hist-bars">
              {h.bins.map((bin, i) => {
                const expr = binExpression(h, bin);
                const label = `${h.field} ${formatNumber(bin.lo)}–${formatNumber(bin.hi)}: ${bin.count} samples`;
                return (
                  <button
                    key={i}
                    type="button"
                    className="ov-hist-bar"
                    data-testid="histogram-bar"
                    aria-label={label}
                    title={label}
                    aria-pressed={expression === expr}
                    onClick={() => onExpression(expression === expr ? "" : expr)}
                  >
                    <span style={{ height: `${(100 * bin.count) / most}%` }} />
                  </button>
                );
              })}
            </div>
            {h.missing > 0 && <span className="hint"> {h.missing} without a value</span>}
          </div>
        );
      })}
    </details>
  );
});
