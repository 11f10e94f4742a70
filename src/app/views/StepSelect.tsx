/**
 * The step selector of a run read from several files (../run/run-steps.ts): each step (or file) with its sample
 * count; choosing one sets the filter expression that shows it, so the filter box says what is shown and can be
 * edited from there (another expression typed there shows as "other filter").
 */

import { memo } from "react";
import type { RunSteps } from "../run/run-steps.js";

export const StepSelect = memo(function StepSelect({ steps, expression, onExpression }: { steps: RunSteps; expression: string; onExpression(expression: string): void }) {
  const current = expression.trim();
  const chosen = steps.steps.find((s) => s.expression === current);
  const value = current === "" ? "" : chosen ? chosen.expression : "other";
  const total = steps.steps.reduce((n, s) => n + s.samples, 0);
  return (
    <label className="ov-steps" data-testid="run-steps">
      <span className="hint">{steps.by} </span>
      <select aria-label={steps.by === "step" ? "Show the samples of step" : "Show the samples of file"} value={value} onChange={(e) => onExpression(e.currentTarget.value)}>
        <option value="">
          all {steps.steps.length} {steps.by === "step" ? "steps" : "files"} ({total.toLocaleString("en")} samples)
        </option>
        {steps.steps.map((s) => (
          <option key={s.expression} value={s.expression}>
            {steps.by} {s.label} ({s.samples.toLocaleString("en")})
          </option>
        ))}
        {value === "other" && (
          <option value="other" disabled>
            other filter
          </option>
        )}
      </select>
    </label>
  );
});
