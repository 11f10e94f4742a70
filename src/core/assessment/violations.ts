/** Violation types, their default severity and locus (fork-additions.md §4.1). */

import { pyFloat } from "../python/config.js";

export const ENV_INVALID_ACTION_KEY = "invalid_action";
export const ENV_MALFORMED_THINKING_KEY = "malformed_thinking";
export const DEFAULT_THINKING_TAGS = ["<think>", "</think>"] as const;
export const LOCUS_REWARD = "reward";
export const LOCUS_ADVANTAGE = "advantage";

export const VIOLATION_UNEXECUTED_PATTERN = "unexecuted_pattern";
export const VIOLATION_MALFORMED_TOOL_CALL = "malformed_tool_call";
export const VIOLATION_SCHEMA_UNKNOWN_TOOL = "schema_unknown_tool";
export const VIOLATION_SCHEMA_ARGS = "schema_args";
export const VIOLATION_MALFORMED_THINKING = "malformed_thinking";
export const VIOLATION_ENV_MALFORMED_THINKING = "env_malformed_thinking";
export const VIOLATION_ENV_INVALID_ACTION = "env_invalid_action";

export interface Violation {
  type: string;
  severity: number;
  locus: string;
  detail: string | null;
}

interface TypeDefaults {
  severity: number;
  locus: string;
  countsAs: "invalid_action" | "malformed_thinking";
}

export const VIOLATION_DEFAULTS: Readonly<Record<string, TypeDefaults>> = {
  [VIOLATION_UNEXECUTED_PATTERN]: { severity: 1.0, locus: LOCUS_ADVANTAGE, countsAs: "invalid_action" },
  [VIOLATION_MALFORMED_TOOL_CALL]: { severity: 1.0, locus: LOCUS_ADVANTAGE, countsAs: "invalid_action" },
  [VIOLATION_SCHEMA_UNKNOWN_TOOL]: { severity: 1.0, locus: LOCUS_ADVANTAGE, countsAs: "invalid_action" },
  [VIOLATION_SCHEMA_ARGS]: { severity: 0.5, locus: LOCUS_ADVANTAGE, countsAs: "invalid_action" },
  [VIOLATION_MALFORMED_THINKING]: { severity: 0.5, locus: LOCUS_ADVANTAGE, countsAs: "malformed_thinking" },
  [VIOLATION_ENV_MALFORMED_THINKING]: { severity: 0.5, locus: LOCUS_ADVANTAGE, countsAs: "malformed_thinking" },
  [VIOLATION_ENV_INVALID_ACTION]: { severity: 1.0, locus: LOCUS_REWARD, countsAs: "invalid_action" },
};

const own = (table: Record<string, unknown> | undefined, key: string) =>
  table !== undefined && table !== null && Object.prototype.hasOwnProperty.call(table, key);

export function isInvalidActionType(type: string): boolean {
  return own(VIOLATION_DEFAULTS, type) && VIOLATION_DEFAULTS[type]!.countsAs === "invalid_action";
}

export function isThinkingType(type: string): boolean {
  return own(VIOLATION_DEFAULTS, type) && VIOLATION_DEFAULTS[type]!.countsAs === "malformed_thinking";
}

/** `_resolve_severity`: the config's weight, else the type's default, else 1.0. */
export function resolveSeverity(severityWeights: Record<string, unknown> | undefined, type: string): number {
  if (own(severityWeights, type)) return pyFloat(severityWeights![type]);
  return own(VIOLATION_DEFAULTS, type) ? VIOLATION_DEFAULTS[type]!.severity : 1.0;
}

/** `_resolve_locus`: the config's override, else the type's default, else "reward". */
export function resolveLocus(locusOverrides: Record<string, unknown> | undefined, type: string): string {
  if (own(locusOverrides, type)) return String(locusOverrides![type]);
  return own(VIOLATION_DEFAULTS, type) ? VIOLATION_DEFAULTS[type]!.locus : LOCUS_REWARD;
}
