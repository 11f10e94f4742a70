/** Small pure helpers of the transcript: running totals, number formatting, wrapped observations. */

import { observationText, type Violation } from "../../../core/index.js";
import type { TurnView } from "../../run/run-model.js";

export interface StructuredView {
  enabled: boolean;
  envelope: "fork" | "template";
  thinkingStyle: "paired" | "closing_only";
}

/** The sum of rewards up to and including each turn (a turn without a reward yet adds nothing). */
export function runningTotals(turns: readonly (TurnView | undefined)[]): number[] {
  let total = 0;
  return turns.map((t) => (total += t?.reward ?? 0));
}

/** A reward or severity for a chip: at most four decimals, no float noise, a sign when asked. */
export function formatNumber(x: number, signed = false): string {
  if (!Number.isFinite(x)) return String(x);
  const rounded = Math.round(x * 1e4) / 1e4;
  const text = Object.is(rounded, -0) ? "0" : String(rounded);
  return signed && rounded > 0 ? `+${text}` : text;
}

/** One violation in words: `type · severity 0.5 · advantage` (the detail goes in the chip's title). */
export function violationLabel(v: Violation): string {
  return `${v.type} · severity ${formatNumber(v.severity)} · ${v.locus}`;
}

/**
 * The text an observation was tokenized from, when the structured protocol's envelope is on; null when off.
 * `assistantText` should be the assistant turn decoded with nothing skipped (the "template" envelope drops its
 * `<|im_end|>` when the turn already ended with one).
 */
export function wrappedObservation(
  content: string,
  structured: StructuredView | null,
  assistantText: string,
  generationPrefill?: string,
): string | null {
  if (!structured?.enabled) return null;
  return observationText(content, { enabled: true, envelope: structured.envelope }, { assistantText, generationPrefill });
}
