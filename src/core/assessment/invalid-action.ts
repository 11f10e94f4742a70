/**
 * The per-turn invalid-action / malformed-thinking assessment (fork-additions.md §4.3–§4.5), with decision 9:
 * a tool-call parse failure is `malformed_tool_call`.
 */

import { JSON_DECODE_ERROR_PREFIX, MISSING_NAME_OR_ARGUMENTS_PREFIX } from "../protocol/hermes.js";
import { assessToolCalls, type ToolRegistry } from "../protocol/registry.js";
import { pyTruthy, type ThinkingStyle } from "../protocol/structured.js";
import { pyRepr } from "../python/repr.js";
import { pyGet } from "../python/config.js";
import type { Metadata } from "../types.js";
import {
  DEFAULT_THINKING_TAGS,
  ENV_INVALID_ACTION_KEY,
  ENV_MALFORMED_THINKING_KEY,
  isInvalidActionType,
  isThinkingType,
  resolveLocus,
  resolveSeverity,
  VIOLATION_ENV_INVALID_ACTION,
  VIOLATION_ENV_MALFORMED_THINKING,
  VIOLATION_MALFORMED_THINKING,
  VIOLATION_MALFORMED_TOOL_CALL,
  VIOLATION_SCHEMA_ARGS,
  VIOLATION_SCHEMA_UNKNOWN_TOOL,
  VIOLATION_UNEXECUTED_PATTERN,
  type Violation,
} from "./violations.js";

export type PenaltyMode = "auto" | "reward" | "advantage" | "both";

export interface PenaltyStepScale {
  schedule?: "constant" | "linear" | (string & {});
  start?: number;
  end?: number;
  steps?: number;
}

/** `InvalidActionPenaltyConfig` (§4.2); every field optional, with the effective defaults of the reference. */
export interface InvalidActionPenaltyConfig {
  enabled?: boolean;
  invalid_action_penalty?: number;
  malformed_thinking_penalty?: number;
  use_environment_flags?: boolean;
  invalid_tool_call_patterns?: string[];
  thinking_tags?: string[];
  reward_floor?: number | null;
  penalty_mode?: PenaltyMode | null;
  severity_weights?: Record<string, number>;
  locus_overrides?: Record<string, string>;
  enable_schema_validation?: boolean;
  penalty_step_scale?: PenaltyStepScale;
}

export interface InvalidActionVerdict {
  invalid_action: boolean;
  malformed_thinking: boolean;
  violations: Violation[];
}

/** Counts non-overlapping occurrences, as Python's str.count does for a non-empty needle. */
function countOccurrences(text: string, needle: string): number {
  return needle === "" ? text.length + 1 : text.split(needle).length - 1;
}

export function detectMalformedThinking(
  text: string,
  thinkingTags: readonly string[] = DEFAULT_THINKING_TAGS,
  style: ThinkingStyle | string = "paired",
): boolean {
  if (thinkingTags.length !== 2) {
    throw new Error(`thinking_tags must be an (open, close) pair, got ${pyRepr([...thinkingTags])}`);
  }
  const [open, close] = thinkingTags as [string, string];
  const nClose = countOccurrences(text, close);
  // Close tags go first: custom tags may contain one another.
  const nOpen = countOccurrences(close === "" ? text : text.split(close).join(""), open);
  if (style === "closing_only") return nOpen > 0 || nClose > 1;
  if (style !== "paired") throw new Error(`style must be 'paired' or 'closing_only', got ${pyRepr(style)}`);
  if (nOpen === 0 && nClose === 0) return false;
  return nOpen !== nClose || nOpen > 1;
}

export function detectInvalidToolCall(text: string, patterns: readonly string[]): boolean {
  return patterns.some((p) => p !== "" && text.includes(p));
}

/** `_classify_schema_failure`, with parse failures classified first (decision 9; BUG-F1 in the reference). */
export function classifySchemaFailure(reason: string): string {
  if (reason.startsWith(JSON_DECODE_ERROR_PREFIX) || reason.startsWith(MISSING_NAME_OR_ARGUMENTS_PREFIX)) {
    return VIOLATION_MALFORMED_TOOL_CALL;
  }
  if (reason.includes("unknown tool")) return VIOLATION_SCHEMA_UNKNOWN_TOOL;
  const head = reason.split(";", 1)[0]!;
  const lower = head.toLowerCase();
  if (head.includes(": ") && !["invalid", "could not", "no "].some((p) => lower.startsWith(p))) {
    return VIOLATION_SCHEMA_ARGS;
  }
  return VIOLATION_MALFORMED_TOOL_CALL;
}

export function assessAssistantTurn(
  assistantText: string,
  cfg: InvalidActionPenaltyConfig,
  envMetadata: Metadata | undefined,
  thinkingStyle: ThinkingStyle | string = "paired",
  registry: ToolRegistry | null = null,
): InvalidActionVerdict {
  const violations: Violation[] = [];
  const add = (type: string, detail: string | null = null) =>
    violations.push({
      type,
      severity: resolveSeverity(cfg.severity_weights, type),
      locus: resolveLocus(cfg.locus_overrides, type),
      detail,
    });

  // Python truth tests of `cfg.get(key, True)`: None, [] and {} are off.
  const useFlags = pyTruthy(pyGet(cfg, "use_environment_flags", true));
  const envInvalid = Boolean(useFlags && envMetadata && pyTruthy(envMetadata[ENV_INVALID_ACTION_KEY] ?? false));
  const envMalformed = Boolean(useFlags && envMetadata && pyTruthy(envMetadata[ENV_MALFORMED_THINKING_KEY] ?? false));
  if (envInvalid) add(VIOLATION_ENV_INVALID_ACTION);
  if (envMalformed) add(VIOLATION_ENV_MALFORMED_THINKING);

  let invalidDetected = envInvalid;
  if (!invalidDetected && registry !== null && pyTruthy(pyGet(cfg, "enable_schema_validation", true))) {
    const tools = assessToolCalls(assistantText, registry);
    if (tools.attempted && tools.malformed) {
      add(classifySchemaFailure(tools.reason ?? ""), tools.reason ? tools.reason : null);
      invalidDetected = true;
    }
  }
  if (!invalidDetected) {
    const patterns = cfg.invalid_tool_call_patterns ?? [];
    if (patterns.length && detectInvalidToolCall(assistantText, patterns)) add(VIOLATION_UNEXECUTED_PATTERN);
  }
  if (!envMalformed) {
    const tags = cfg.thinking_tags && cfg.thinking_tags.length ? cfg.thinking_tags : DEFAULT_THINKING_TAGS;
    if (detectMalformedThinking(assistantText, tags, thinkingStyle)) add(VIOLATION_MALFORMED_THINKING);
  }
  return {
    invalid_action: violations.some((v) => isInvalidActionType(v.type)),
    malformed_thinking: violations.some((v) => isThinkingType(v.type)),
    violations,
  };
}

/** The rollouts' `invalid_action_cfg is not None and invalid_action_cfg.get("enabled", False)`, as a Python truth test. */
export function invalidActionEnabled(cfg: InvalidActionPenaltyConfig | null | undefined): boolean {
  return cfg !== null && cfg !== undefined && pyTruthy(pyGet(cfg, "enabled", false));
}

/**
 * `pop_env_flags`: the metadata without the two verdict keys. Returns a new object (decision 1: inputs are never
 * mutated); null stays null.
 */
export function popEnvFlags(metadata: Metadata): Metadata {
  if (metadata === null || metadata === undefined) return metadata ?? null;
  if (!Object.hasOwn(metadata, ENV_INVALID_ACTION_KEY) && !Object.hasOwn(metadata, ENV_MALFORMED_THINKING_KEY)) return metadata;
  const { [ENV_INVALID_ACTION_KEY]: _a, [ENV_MALFORMED_THINKING_KEY]: _m, ...rest } = metadata;
  return rest;
}
