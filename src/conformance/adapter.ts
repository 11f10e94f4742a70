/**
 * The one generic conformance adapter (spec: conformance-adapter.md).
 *
 * It reads everything from the case: `area` (and `input.fn` where an area holds several functions) selects the
 * core function, `input` gives its arguments by name, and every key of `expected` is compared with the actual
 * value built as the adapter's table says. There is no per-case special-casing and no skip list: a case is
 * only left out when it carries `reference_only` or its area is not in the table, and those are reported apart.
 */

import { LabError } from "../core/index.js";
import {
  applyInvalidActionPenalty,
  describeJsonValueProblem,
  findJsonValueProblem,
  assessAssistantTurn,
  assessToolCalls,
  ByteLevelTokenizer,
  classifySchemaFailure,
  CODE_TOOLS,
  detectInvalidToolCall,
  detectMalformedThinking,
  makeTool,
  observationMessage,
  parseHermesToolCalls,
  penaltyScaleAtStep,
  popEnvFlags,
  pyJsonDumps,
  resolveLocus,
  resolveSeverity,
  resolveStructuredToolUse,
  sampleLocusPenalty,
  SESSION_TOOLS,
  structuredDecodeSkipSpecial,
  structuredThinkingStyle,
  TOOL_RESPONSE_ENVELOPE_PREFIX,
  TOOL_RESPONSE_ENVELOPE_SUFFIX,
  ToolRegistry,
  validateAgainstSchema,
  validateArguments,
  violationRateMetrics,
  violationsAtLocus,
  wrapToolResponseEnvelope,
  type InvalidActionPenaltyConfig,
  type Metadata,
  type PenaltyBatch,
  type StructuredToolUseConfig,
  type TokenizerInterface,
  type ToolSpec,
  type Violation,
} from "../core/index.js";

// ---------------------------------------------------------------------------------------------------------------
// Case and result shapes

export interface ConformanceCase {
  area: string;
  name: string;
  input?: Record<string, unknown>;
  expected?: Record<string, unknown>;
  source_test?: string;
  deviation?: string;
  reference_only?: string;
  [key: string]: unknown;
}

export type CaseStatus = "passed" | "failed" | "reference_only";

export interface CaseResult {
  status: CaseStatus;
  reason?: string;
}

export interface RunSummary {
  passed: number;
  failed: number;
  referenceOnly: number;
  failures: { id: string; reason: string }[];
  /** Ids of the cases not run (reference only, or an area outside the table), with why. */
  referenceOnlyCases: { id: string; reason: string }[];
}

/** A case is identified by `area/name`. */
export function caseId(c: unknown, index?: number): string {
  const rec = isRecord(c) ? c : {};
  const area = typeof rec.area === "string" ? rec.area : "<no area>";
  const name = typeof rec.name === "string" ? rec.name : index === undefined ? "<no name>" : `#${index}`;
  return `${area}/${name}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Comparison (rules 1–3)

export const PARSE_FAILURE_PREFIXES = [
  "tool-call JSON decode error: ",
  "tool-call missing/invalid name or arguments: ",
] as const;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Rule 2: `|actual − expected| ≤ 1e-9 + 1e-6·|expected|`. */
export function numbersMatch(actual: number, expected: number): boolean {
  if (Number.isNaN(expected)) return Number.isNaN(actual);
  if (!Number.isFinite(expected)) return actual === expected;
  return Math.abs(actual - expected) <= 1e-9 + 1e-6 * Math.abs(expected);
}

const show = (v: unknown): string => {
  if (v === undefined) return "undefined";
  try {
    const s = JSON.stringify(v);
    return s === undefined ? String(v) : s.length > 300 ? `${s.slice(0, 300)}…` : s;
  } catch {
    return String(v);
  }
};

/**
 * Deep comparison by the rules of conformance-adapter.md: same key sets, same array lengths and order, numbers
 * within tolerance, `null` matching `undefined`, and the parse-failure prefix rule for expected strings.
 * Returns null on a match, else where and how the values differ.
 */
export function compareValues(actual: unknown, expected: unknown, path = ""): string | null {
  const at = path === "" ? "" : ` at ${path}`;
  if (expected === null || expected === undefined) {
    return actual === null || actual === undefined ? null : `expected null${at}, got ${show(actual)}`;
  }
  if (typeof expected === "number") {
    if (typeof actual !== "number") return `expected number ${expected}${at}, got ${show(actual)}`;
    return numbersMatch(actual, expected) ? null : `expected ${expected}${at}, got ${actual}`;
  }
  if (typeof expected === "string") {
    if (typeof actual !== "string") return `expected string ${show(expected)}${at}, got ${show(actual)}`;
    const prefix = PARSE_FAILURE_PREFIXES.find((p) => expected.startsWith(p));
    if (prefix !== undefined) {
      return actual.startsWith(prefix) ? null : `expected a string starting with ${show(prefix)}${at}, got ${show(actual)}`;
    }
    return actual === expected ? null : `expected ${show(expected)}${at}, got ${show(actual)}`;
  }
  if (typeof expected === "boolean") {
    return actual === expected ? null : `expected ${expected}${at}, got ${show(actual)}`;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return `expected an array${at}, got ${show(actual)}`;
    if (actual.length !== expected.length) {
      return `expected an array of length ${expected.length}${at}, got length ${actual.length}: ${show(actual)}`;
    }
    for (let i = 0; i < expected.length; i++) {
      const diff = compareValues(actual[i], expected[i], `${path}[${i}]`);
      if (diff) return diff;
    }
    return null;
  }
  if (isRecord(expected)) {
    if (!isRecord(actual)) return `expected an object${at}, got ${show(actual)}`;
    for (const key of Object.keys(expected)) {
      const diff = compareValues(actual[key], expected[key], path === "" ? key : `${path}.${key}`);
      if (diff) return diff;
    }
    const extra = Object.keys(actual).filter((k) => !(k in expected) && actual[k] !== undefined);
    if (extra.length) return `unexpected key(s) ${show(extra)}${at} (got ${show(actual)})`;
    return null;
  }
  return `cannot compare an expected value of type ${typeof expected}${at}`;
}

// ---------------------------------------------------------------------------------------------------------------
// Named registries and tokenizers

/** The `_REGISTRY` of the fork's tests/unit/test_invalid_action_penalty.py. */
export const TEST_REGISTRY = new ToolRegistry([
  makeTool("run_shell", "Run a shell command", {
    type: "object",
    properties: { cmd: { type: "string" } },
    required: ["cmd"],
  }),
]);

const NAMED_REGISTRIES: Record<string, ToolRegistry> = { TEST_REGISTRY, SESSION_TOOLS, CODE_TOOLS };

class AdapterError extends LabError {
  override name = "AdapterError";
  override readonly code = "conformance_adapter";
}

function namedRegistry(name: unknown): ToolRegistry {
  if (typeof name === "string" && Object.prototype.hasOwnProperty.call(NAMED_REGISTRIES, name)) {
    return NAMED_REGISTRIES[name]!;
  }
  throw new AdapterError(`unknown registry name ${show(name)} (known: ${Object.keys(NAMED_REGISTRIES).join(", ")})`);
}

function optionalRegistry(name: unknown): ToolRegistry | null {
  return name === null || name === undefined ? null : namedRegistry(name);
}

/** A fresh stub tokenizer per case: the core memoizes the tag probe per tokenizer object, as the fork does. */
function stubTokenizer(behaviour: unknown): TokenizerInterface {
  switch (behaviour) {
    case "roundtrip":
      return new ByteLevelTokenizer();
    case "strips_tags":
      return new ByteLevelTokenizer({
        specialMarkers: ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"],
      });
    case "raises": {
      const inner = new ByteLevelTokenizer();
      return {
        padTokenId: inner.padTokenId,
        eosTokenId: inner.eosTokenId,
        encode: () => {
          throw new Error("stub tokenizer: encode raises");
        },
        decode: (ids, options) => inner.decode(ids, options),
      };
    }
    default:
      throw new AdapterError(`unknown tokenizer_behaviour ${show(behaviour)} (roundtrip, strips_tags, raises)`);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The table

type Input = Record<string, unknown>;

/** How one expected key's actual value is built from the call's result. */
// The table reads fields of a dozen result shapes, each checked by its case's expected value: `any` keeps it terse.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type KeySpec = (result: any, input: Input, expected: unknown) => unknown;

interface FnSpec {
  /** Calls the core function with the case's input. Throwing here is what `raises` checks. */
  call: (input: Input) => unknown;
  /** The expected keys this function supports (besides raises/message/message_contains). */
  keys: Record<string, KeySpec>;
  /** Every expected key is a key of the result, which must have exactly the expected key set. */
  resultIsExpected?: boolean;
}

type AreaSpec = FnSpec | { byFn: Record<string, FnSpec> };

const RAISE_KEYS = new Set(["raises", "message", "message_contains"]);

const has = (input: Input, key: string) => Object.prototype.hasOwnProperty.call(input, key);
/** Rule 6: an absent key takes the function's default; `null` is Python `None`. */
const arg = <T>(input: Input, key: string, fallback: T): T | unknown => (has(input, key) ? input[key] : fallback);
const str = (v: unknown, what: string): string => {
  if (typeof v !== "string") throw new AdapterError(`input.${what} must be a string, got ${show(v)}`);
  return v;
};
const listed = (expected: unknown, what: string): string[] => {
  if (!isRecord(expected)) throw new AdapterError(`expected.${what} must be an object keyed by name`);
  return Object.keys(expected);
};
const asMetadata = (v: unknown): Metadata => (v === undefined ? null : (v as Metadata));

/** The type the fork's `_resolve_severity` / `_resolve_locus` know nothing about. */
const UNKNOWN_VIOLATION_TYPE = "some_other_type";

const AREAS: Record<string, AreaSpec> = {
  hermes_parse: {
    call: (input) => parseHermesToolCalls(str(input.text, "text")),
    keys: {
      tools_called: (r) => r.tools_called,
      attempted: (r) => r.attempted,
      tool_calls: (r) =>
        (r.tool_calls as { name: unknown; arguments: unknown; arguments_json: string }[]).map((c) => ({
          name: c.name,
          arguments: c.arguments,
          arguments_json: c.arguments_json,
        })),
      content: (r) => r.content,
      error: (r) => r.error,
      // The error starts with the expected prefix: the actual value is that prefix when it does.
      error_prefix: (r, _input, expected) =>
        typeof r.error === "string" && typeof expected === "string" && r.error.startsWith(expected) ? expected : r.error,
      error_python_exact: (r) => r.error,
    },
  },

  envelope: {
    byFn: {
      wrap: {
        call: (input) => wrapToolResponseEnvelope(str(input.content, "content")),
        keys: { wrapped: (r) => r },
      },
      constants: {
        call: () => ({
          _TOOL_RESPONSE_ENVELOPE_PREFIX: TOOL_RESPONSE_ENVELOPE_PREFIX,
          _TOOL_RESPONSE_ENVELOPE_SUFFIX: TOOL_RESPONSE_ENVELOPE_SUFFIX,
        }),
        keys: {
          _TOOL_RESPONSE_ENVELOPE_PREFIX: (r) => r._TOOL_RESPONSE_ENVELOPE_PREFIX,
          _TOOL_RESPONSE_ENVELOPE_SUFFIX: (r) => r._TOOL_RESPONSE_ENVELOPE_SUFFIX,
        },
      },
      observation_message: {
        call: (input) => {
          const tokenizer = new ByteLevelTokenizer();
          // The port's rollouts take a resolved block (decision 8: `enabled: false` means off), in "fork" mode.
          const resolved = resolveStructuredToolUse(arg(input, "structured_cfg", null));
          const structuredCfg: StructuredToolUseConfig | null = resolved
            ? { ...resolved, envelope: resolved.envelope ?? "fork" }
            : null;
          const obs = input.env_observation;
          if (!isRecord(obs)) throw new AdapterError(`input.env_observation must be an object, got ${show(obs)}`);
          const { message } = observationMessage({
            observation: { role: str(obs.role, "env_observation.role"), content: str(obs.content, "env_observation.content") },
            assistantIds: [],
            inputLength: 0,
            maxSeqLen: Number.MAX_SAFE_INTEGER,
            tokenizer,
            structuredCfg,
          });
          return {
            role: message.role,
            content: message.content,
            token_text: tokenizer.decode(message.token_ids),
            n_tokens: message.token_ids.length,
          };
        },
        keys: {
          appended_message: (r) => r,
          content_contains_tool_response_tag: (r) => (r.content as string).includes("<tool_response>"),
        },
      },
    },
  },

  structured_config: {
    byFn: {
      thinking_style: {
        call: (input) =>
          structuredThinkingStyle(arg(input, "structured_cfg", null) as StructuredToolUseConfig | null),
        keys: { thinking_style: (r) => r },
      },
      decode_skip_special: {
        call: (input) =>
          structuredDecodeSkipSpecial(
            arg(input, "structured_cfg", null) as StructuredToolUseConfig | null,
            stubTokenizer(input.tokenizer_behaviour),
          ),
        keys: { skip_special_tokens: (r) => r },
      },
      resolve: {
        call: (input) => resolveStructuredToolUse(arg(input, "config_block", null)),
        keys: {
          returns: (r) => r,
          returns_input: (r, input) => compareValues(r, input.config_block) === null,
        },
      },
    },
  },

  registry: {
    byFn: {
      names: {
        call: (input) => namedRegistry(input.registry),
        keys: {
          names: (r: ToolRegistry) => r.names(),
          required: (r: ToolRegistry, _input, expected) =>
            Object.fromEntries(listed(expected, "required").map((tool) => [tool, r.parameters(tool)?.required])),
        },
      },
      contains: {
        call: (input) => namedRegistry(input.registry),
        keys: {
          contains: (r: ToolRegistry, input) => {
            if (!Array.isArray(input.names)) throw new AdapterError("input.names must be an array");
            return Object.fromEntries((input.names as unknown[]).map((n) => [String(n), r.has(n)]));
          },
        },
      },
      construct: {
        call: (input) => {
          if (!Array.isArray(input.tools)) throw new AdapterError("input.tools must be an array");
          return new ToolRegistry(input.tools as ToolSpec[]);
        },
        keys: {},
      },
      chat_template_tools: {
        call: (input) => namedRegistry(input.registry).chatTemplateTools(),
        keys: { tools: (r) => r },
      },
      tojson_lines: {
        call: (input) => namedRegistry(input.registry).chatTemplateTools().map((t) => pyJsonDumps(t)),
        keys: { lines: (r) => r },
      },
    },
  },

  schema_validate_arguments: {
    call: (input) => validateArguments(input.arguments, input.parameters_schema),
    keys: { errors: (r) => r },
  },

  schema_validate_against_schema: {
    call: (input) => validateAgainstSchema(input.value, input.schema),
    keys: { errors: (r) => r },
  },

  classify_schema_failure: {
    call: (input) => classifySchemaFailure(str(input.reason, "reason")),
    keys: { violation_type: (r) => r },
  },

  detect_malformed_thinking: {
    call: (input) =>
      detectMalformedThinking(
        str(input.text, "text"),
        (has(input, "thinking_tags") ? input.thinking_tags : undefined) as string[] | undefined,
        (has(input, "style") ? input.style : undefined) as string | undefined,
      ),
    keys: { malformed: (r) => r },
  },

  detect_invalid_tool_call: {
    call: (input) => detectInvalidToolCall(str(input.text, "text"), input.patterns as string[]),
    keys: { flagged: (r) => r },
  },

  assess_tool_calls: {
    call: (input) => assessToolCalls(str(input.text, "text"), namedRegistry(input.registry)),
    keys: {
      attempted: (r) => r.attempted,
      malformed: (r) => r.malformed,
      has_valid_call: (r) => r.has_valid_call,
      valid_call_names: (r) => (r.valid_calls as { name: unknown }[]).map((c) => c.name),
      reason: (r) => r.reason,
    },
  },

  assess_assistant_turn: {
    call: (input) =>
      assessAssistantTurn(
        str(input.assistant_text, "assistant_text"),
        (input.cfg ?? {}) as InvalidActionPenaltyConfig,
        asMetadata(arg(input, "env_metadata", null)),
        (has(input, "thinking_style") ? input.thinking_style : undefined) as string | undefined,
        optionalRegistry(arg(input, "registry", null)),
      ),
    keys: {
      invalid_action: (r) => r.invalid_action,
      malformed_thinking: (r) => r.malformed_thinking,
      violations: (r) =>
        (r.violations as Violation[]).map((v) => ({ type: v.type, severity: v.severity, locus: v.locus, detail: v.detail })),
    },
  },

  pop_env_flags: {
    call: (input) => {
      const metadata = asMetadata(arg(input, "metadata", null));
      // Changed in place or returned as a new object (decision 1): the returned value is the metadata after.
      const returned = popEnvFlags(metadata);
      return returned === undefined ? metadata : returned;
    },
    keys: { metadata_after: (r) => r },
  },

  severity_locus_defaults: {
    call: () => null,
    keys: {
      severity: (_r, _input, expected) =>
        Object.fromEntries(listed(expected, "severity").map((t) => [t, resolveSeverity({}, t)])),
      locus: (_r, _input, expected) =>
        Object.fromEntries(listed(expected, "locus").map((t) => [t, resolveLocus({}, t)])),
      unknown_type: () => ({
        severity: resolveSeverity({}, UNKNOWN_VIOLATION_TYPE),
        locus: resolveLocus({}, UNKNOWN_VIOLATION_TYPE),
      }),
    },
  },

  penalty_step_scale: {
    call: (input) => {
      const schedule = arg(input, "penalty_step_scale", null);
      const cfg = (schedule === null ? {} : { penalty_step_scale: schedule }) as InvalidActionPenaltyConfig;
      return penaltyScaleAtStep(cfg, arg(input, "step", null) as number | null);
    },
    keys: { scale: (r) => r },
  },

  violations_at_locus: {
    call: (input) =>
      violationsAtLocus(
        input.violations as Violation[],
        arg(input, "penalty_mode", null) as string | null,
        str(input.locus, "locus"),
      ),
    keys: { selected_types: (r) => (r as Violation[]).map((v) => v.type) },
  },

  sample_locus_penalty: {
    call: (input) => {
      const log = input.message_log as Parameters<typeof sampleLocusPenalty>[0];
      const cfg = (input.cfg ?? {}) as InvalidActionPenaltyConfig;
      const step = arg(input, "step", null) as number | null;
      const at = (locus: string | undefined) => sampleLocusPenalty(log, cfg, locus, step);
      return {
        penalty: at(has(input, "locus") ? (input.locus as string) : undefined),
        reward: at("reward"),
        advantage: at("advantage"),
      };
    },
    keys: {
      penalty: (r) => r.penalty,
      reward_locus: (r) => r.reward,
      advantage_locus: (r) => r.advantage,
    },
  },

  apply_invalid_action_penalty: {
    call: (input) =>
      applyInvalidActionPenalty(
        input.batch as PenaltyBatch,
        arg(input, "cfg", null) as InvalidActionPenaltyConfig | null,
        arg(input, "step", null) as number | null,
      ),
    keys: {
      total_reward: (r: PenaltyBatch) => r.total_reward,
      unshaped_total_reward: (r: PenaltyBatch) => r.unshaped_total_reward,
      unshaped_total_reward_present: (r: PenaltyBatch) =>
        Object.prototype.hasOwnProperty.call(r, "unshaped_total_reward") && r.unshaped_total_reward !== undefined,
    },
  },

  violation_rate_metrics: {
    call: (input) =>
      violationRateMetrics(input.violation_counts as Record<string, number>, input.num_assistant_messages as number),
    keys: {},
    resultIsExpected: true,
  },
};

/** The areas this adapter runs; every other area is reference only. */
export const ADAPTER_AREAS: readonly string[] = Object.keys(AREAS);

// ---------------------------------------------------------------------------------------------------------------
// Running

const errorMessage = (e: unknown): string => (e instanceof Error ? e.message : String(e));
const errorLabel = (e: unknown): string => (e instanceof Error ? `${e.name}: ${e.message}` : String(e));

export function runCase(c: ConformanceCase): CaseResult {
  if (!isRecord(c)) return { status: "failed", reason: "adapter error: a case must be an object" };
  if (Object.prototype.hasOwnProperty.call(c, "reference_only")) {
    return { status: "reference_only", reason: String(c.reference_only) };
  }
  if (typeof c.area !== "string") return { status: "failed", reason: "adapter error: the case has no string `area`" };
  const area = AREAS[c.area];
  if (!Object.prototype.hasOwnProperty.call(AREAS, c.area) || area === undefined) {
    return { status: "reference_only", reason: `area ${c.area} is not in the adapter's table` };
  }
  try {
    return runSpec(c, area);
  } catch (e) {
    return { status: "failed", reason: `adapter error: ${errorLabel(e)}` };
  }
}

function runSpec(c: ConformanceCase, area: AreaSpec): CaseResult {
  const input = c.input ?? {};
  const expected = c.expected;
  if (!isRecord(input)) return fail("`input` must be an object");
  if (!isRecord(expected)) return fail("`expected` must be an object");

  let spec: FnSpec;
  if ("byFn" in area) {
    const fn = input.fn;
    if (typeof fn !== "string" || !Object.prototype.hasOwnProperty.call(area.byFn, fn)) {
      return fail(`input.fn ${show(fn)} is not one of ${Object.keys(area.byFn).join(", ")} for area ${c.area}`);
    }
    spec = area.byFn[fn]!;
  } else {
    spec = area;
  }

  const valueKeys = Object.keys(expected).filter((k) => !RAISE_KEYS.has(k));
  if (!spec.resultIsExpected) {
    const unknown = valueKeys.filter((k) => !Object.prototype.hasOwnProperty.call(spec.keys, k));
    if (unknown.length) {
      return fail(`expected key(s) ${unknown.join(", ")} not listed for this area${"byFn" in area ? ` / fn ${String(input.fn)}` : ""}`);
    }
  }

  // Rule 4: `raises` (non-null), `message` or `message_contains` mean the call must throw.
  const raises = expected.raises;
  const mustThrow =
    (raises !== undefined && raises !== null) ||
    Object.prototype.hasOwnProperty.call(expected, "message") ||
    Object.prototype.hasOwnProperty.call(expected, "message_contains");

  let result: unknown;
  try {
    result = spec.call(input);
  } catch (e) {
    if (e instanceof AdapterError) throw e;
    if (!mustThrow) return fail(`unexpected throw: ${errorLabel(e)}`);
    const message = errorMessage(e);
    if ("message" in expected && message !== expected.message) {
      return fail(`message: expected ${show(expected.message)}, got ${show(message)}`);
    }
    if ("message_contains" in expected && !message.includes(String(expected.message_contains))) {
      return fail(`message: expected it to contain ${show(expected.message_contains)}, got ${show(message)}`);
    }
    if (valueKeys.length) return fail(`the call threw, so ${valueKeys.join(", ")} cannot be checked`);
    return { status: "passed" };
  }
  if (mustThrow) {
    return fail(`expected the call to throw${typeof raises === "string" ? ` (${raises})` : ""}, got ${show(result)}`);
  }

  if (spec.resultIsExpected) {
    const expectedValues = Object.fromEntries(valueKeys.map((k) => [k, expected[k]]));
    const diff = compareValues(result, expectedValues);
    return diff ? fail(diff) : { status: "passed" };
  }
  for (const key of valueKeys) {
    let actual: unknown;
    try {
      actual = spec.keys[key]!(result, input, expected[key]);
    } catch (e) {
      if (e instanceof AdapterError) throw e;
      return fail(`${key}: unexpected throw: ${errorLabel(e)}`);
    }
    const diff = compareValues(actual, expected[key]);
    if (diff) return fail(`${key}: ${diff}`);
  }
  return { status: "passed" };
}

const fail = (reason: string): CaseResult => ({ status: "failed", reason });

export function runCases(cases: readonly ConformanceCase[]): RunSummary {
  const summary: RunSummary = { passed: 0, failed: 0, referenceOnly: 0, failures: [], referenceOnlyCases: [] };
  cases.forEach((c, i) => {
    const id = caseId(c, i);
    const result = runCase(c);
    if (result.status === "passed") summary.passed++;
    else if (result.status === "reference_only") {
      summary.referenceOnly++;
      summary.referenceOnlyCases.push({ id, reason: result.reason ?? "" });
    } else {
      summary.failed++;
      summary.failures.push({ id, reason: result.reason ?? "failed" });
    }
  });
  return summary;
}

/** Parses a case file's text: a JSON array of case objects. Throws with a clear message otherwise. */
export function parseCaseFile(text: string): ConformanceCase[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new Error(`not valid JSON: ${errorMessage(e)}`);
  }
  if (!Array.isArray(data)) throw new Error(`expected a JSON array of cases, got ${data === null ? "null" : typeof data}`);
  // Too deep a value (the comparisons recurse) or a __proto__ key: named by its path (src/core/json-value.ts).
  const shape = findJsonValueProblem(data);
  if (shape) throw new Error(describeJsonValueProblem(shape));
  return data as ConformanceCase[];
}
