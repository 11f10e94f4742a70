import { describe, expect, it } from "vitest";
import { makeTool, SESSION_TOOLS, ToolRegistry } from "../protocol/registry.js";
import {
  assessAssistantTurn,
  classifySchemaFailure,
  detectInvalidToolCall,
  detectMalformedThinking,
  popEnvFlags,
  type InvalidActionPenaltyConfig,
} from "./invalid-action.js";
import { resolveLocus, resolveSeverity } from "./violations.js";

const CFG: InvalidActionPenaltyConfig = {
  enabled: true,
  invalid_action_penalty: 0.5,
  malformed_thinking_penalty: 0.25,
  use_environment_flags: true,
  invalid_tool_call_patterns: ["<tool_call>"],
  thinking_tags: ["<think>", "</think>"],
};
const TEST_REGISTRY = new ToolRegistry([
  makeTool("run_shell", "Run a shell command", { type: "object", properties: { cmd: { type: "string" } }, required: ["cmd"] }),
]);
const call = (name: string, args: unknown) => `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;
const types = (v: { violations: { type: string }[] }) => v.violations.map((x) => x.type);

describe("detectMalformedThinking (fork-additions.md §4.4)", () => {
  it("paired: zero tags or one balanced pair is well formed", () => {
    for (const text of ["just an answer", "<think>reasoning</think>answer", "<think></think>", ""]) {
      expect(detectMalformedThinking(text, ["<think>", "</think>"], "paired"), text).toBe(false);
    }
  });

  it("paired: unbalanced, nested, repeated or dangling tags are malformed", () => {
    for (const text of [
      "<think>x",
      "leaked</think>answer",
      "<think>a</think>mid<think>b</think>end",
      "<think><think></think></think>",
      "<think>a</think></think>",
    ]) {
      expect(detectMalformedThinking(text), text).toBe(true);
    }
  });

  it("paired: only the counts matter, not the order (a close before the open passes)", () => {
    expect(detectMalformedThinking("</think>x<think>")).toBe(false);
  });

  it("closing_only: a lone close (or none) is fine, an open tag or a second close is not", () => {
    for (const text of ["reasoning</think>answer", "answer", "reasoning\n<tool_call>{}</tool_call>", ""]) {
      expect(detectMalformedThinking(text, undefined, "closing_only"), text).toBe(false);
    }
    for (const text of ["<think>x</think>answer", "a</think>b</think>c", "<think>"]) {
      expect(detectMalformedThinking(text, undefined, "closing_only"), text).toBe(true);
    }
  });

  it("counts close tags first, so custom tags that contain one another work", () => {
    expect(detectMalformedThinking("[REASON]x[/REASON]", ["[REASON]", "[/REASON]"])).toBe(false);
    // "<t>" is inside "<t>>"; removing the close tags first leaves one open tag.
    expect(detectMalformedThinking("<t>a<t>>", ["<t>", "<t>>"])).toBe(false);
  });

  it("raises on a bad tag pair, and on a bad style only outside closing_only", () => {
    expect(() => detectMalformedThinking("text", ["<think>"], "paired")).toThrow(
      "thinking_tags must be an (open, close) pair, got ['<think>']",
    );
    expect(() => detectMalformedThinking("text", ["<think>", "</think>"], "bogus")).toThrow(
      "style must be 'paired' or 'closing_only', got 'bogus'",
    );
  });
});

describe("detectInvalidToolCall", () => {
  it("flags any non-empty pattern found in the text", () => {
    expect(detectInvalidToolCall("try <tool_call>x", ["<tool_call>"])).toBe(true);
    expect(detectInvalidToolCall("plain answer", ["<tool_call>"])).toBe(false);
    expect(detectInvalidToolCall("<tool_call>run</tool_call>", [])).toBe(false);
    expect(detectInvalidToolCall("anything", [""])).toBe(false);
    expect(detectInvalidToolCall("```bash", ["", "```"])).toBe(true);
  });
});

describe("classifySchemaFailure (§4.3 with decision 9)", () => {
  it("classifies parse failures as malformed_tool_call before any other rule", () => {
    expect(classifySchemaFailure("tool-call JSON decode error: Expecting value: line 1 column 1 (char 0)")).toBe(
      "malformed_tool_call",
    );
    expect(classifySchemaFailure("tool-call missing/invalid name or arguments: 'name'")).toBe("malformed_tool_call");
    // A JSON error message that quotes "unknown tool" stays a parse failure.
    expect(classifySchemaFailure("tool-call JSON decode error: Extra data near 'unknown tool'")).toBe("malformed_tool_call");
  });

  it("keeps the reference's rules for the other reasons", () => {
    expect(classifySchemaFailure("unknown tool 'x'")).toBe("schema_unknown_tool");
    expect(classifySchemaFailure("run_shell: $: missing required property 'command'; unknown tool 'nope'")).toBe(
      "schema_unknown_tool",
    );
    expect(classifySchemaFailure("run_shell: $: missing required property 'command'")).toBe("schema_args");
    expect(classifySchemaFailure("Invalid: thing")).toBe("malformed_tool_call");
    expect(classifySchemaFailure("could not parse: x")).toBe("malformed_tool_call");
    expect(classifySchemaFailure("No call: x")).toBe("malformed_tool_call");
    expect(classifySchemaFailure("no call")).toBe("malformed_tool_call");
    expect(classifySchemaFailure("")).toBe("malformed_tool_call");
    // Only the head before the first ';' is looked at.
    expect(classifySchemaFailure("nothing here; a: b")).toBe("malformed_tool_call");
  });
});

describe("assessAssistantTurn (§4.3)", () => {
  it("lets a truthy env flag pre-empt the schema and pattern tiers", () => {
    const v = assessAssistantTurn("try <tool_call>x</tool_call>", CFG, { invalid_action: "yes" }, "paired", SESSION_TOOLS);
    expect(v.violations).toEqual([{ type: "env_invalid_action", severity: 1, locus: "reward", detail: null }]);
    expect(v.invalid_action).toBe(true);
    expect(v.malformed_thinking).toBe(false);
  });

  it("runs the pattern tier when the env flag is false, and ignores flags when told to", () => {
    expect(types(assessAssistantTurn("<tool_call>x</tool_call>", CFG, { invalid_action: false }))).toEqual([
      "unexecuted_pattern",
    ]);
    const noFlags = { ...CFG, use_environment_flags: false };
    expect(assessAssistantTurn("clean", noFlags, { invalid_action: true, malformed_thinking: true }).violations).toEqual([]);
  });

  it("orders violations env_invalid, env_malformed, then schema/pattern, then thinking; at most two", () => {
    expect(types(assessAssistantTurn("<think>a", CFG, { invalid_action: true, malformed_thinking: true }))).toEqual([
      "env_invalid_action",
      "env_malformed_thinking",
    ]);
    expect(types(assessAssistantTurn("<think>a <tool_call>x", CFG, { invalid_action: true }))).toEqual([
      "env_invalid_action",
      "malformed_thinking",
    ]);
    expect(types(assessAssistantTurn("<think>a <tool_call>x", CFG, null))).toEqual(["unexecuted_pattern", "malformed_thinking"]);
  });

  it("runs the schema tier only with a registry and enable_schema_validation, with decision 9", () => {
    const cfg = { ...CFG, invalid_tool_call_patterns: [] };
    expect(assessAssistantTurn(call("run_shell", {}), cfg, {}).violations).toEqual([]);
    expect(assessAssistantTurn(call("run_shell", { cmd: "ls" }), cfg, {}, "paired", TEST_REGISTRY).violations).toEqual([]);
    expect(assessAssistantTurn(call("run_shell", {}), cfg, {}, "paired", TEST_REGISTRY).violations).toEqual([
      { type: "schema_args", severity: 0.5, locus: "advantage", detail: "run_shell: $: missing required property 'cmd'" },
    ]);
    expect(assessAssistantTurn(call("nope", {}), cfg, {}, "paired", TEST_REGISTRY).violations).toEqual([
      { type: "schema_unknown_tool", severity: 1, locus: "advantage", detail: "unknown tool 'nope'" },
    ]);
    const parse = assessAssistantTurn("<tool_call>\n{bad}\n</tool_call>", cfg, {}, "paired", SESSION_TOOLS);
    expect(parse.violations).toHaveLength(1);
    expect(parse.violations[0]).toMatchObject({ type: "malformed_tool_call", severity: 1, locus: "advantage" });
    expect(parse.violations[0]!.detail).toMatch(/^tool-call JSON decode error: /);
    const off = { ...cfg, enable_schema_validation: false };
    expect(assessAssistantTurn(call("nope", {}), off, {}, "paired", SESSION_TOOLS).violations).toEqual([]);
  });

  it("falls back to the pattern tier when the schema tier finds nothing wrong", () => {
    const v = assessAssistantTurn(call("run_shell", { cmd: "ls" }), CFG, {}, "paired", TEST_REGISTRY);
    expect(types(v)).toEqual(["unexecuted_pattern"]);
  });

  it("applies severity weights and locus overrides, and the thinking style", () => {
    const weighted = { ...CFG, severity_weights: { unexecuted_pattern: 2.5 }, locus_overrides: { unexecuted_pattern: "reward" } };
    expect(assessAssistantTurn("try <tool_call>x</tool_call>", weighted, {}).violations).toEqual([
      { type: "unexecuted_pattern", severity: 2.5, locus: "reward", detail: null },
    ]);
    const noPatterns = { ...CFG, invalid_tool_call_patterns: [] };
    expect(types(assessAssistantTurn("<think>plan</think>\nanswer", noPatterns, {}, "closing_only"))).toEqual([
      "malformed_thinking",
    ]);
    expect(assessAssistantTurn("plan</think>\nanswer", noPatterns, {}, "closing_only").violations).toEqual([]);
  });

  it("uses the default tags when thinking_tags is empty", () => {
    expect(types(assessAssistantTurn("<think>x", { enabled: true, thinking_tags: [] }, null))).toEqual(["malformed_thinking"]);
  });
});

describe("popEnvFlags (§4.5, decision 1)", () => {
  it("removes both verdict keys without touching the input", () => {
    const md = { invalid_action: true, malformed_thinking: false, x: 1 };
    expect(popEnvFlags(md)).toEqual({ x: 1 });
    expect(md).toEqual({ invalid_action: true, malformed_thinking: false, x: 1 });
  });

  it("leaves null as null and metadata without the keys as it was", () => {
    expect(popEnvFlags(null)).toBeNull();
    expect(popEnvFlags({ a: 1 })).toEqual({ a: 1 });
    expect(popEnvFlags({ invalid_action: 1 })).toEqual({});
  });
});

describe("severity and locus defaults (§4.1)", () => {
  it("has the table's defaults, 1.0/reward for other types, and lets the config override", () => {
    expect(resolveSeverity({}, "schema_args")).toBe(0.5);
    expect(resolveLocus({}, "env_invalid_action")).toBe("reward");
    expect(resolveLocus({}, "malformed_tool_call")).toBe("advantage");
    expect(resolveSeverity({}, "some_other_type")).toBe(1);
    expect(resolveLocus(undefined, "some_other_type")).toBe("reward");
    expect(resolveSeverity({}, "toString")).toBe(1);
    expect(resolveSeverity({ schema_args: "2" }, "schema_args")).toBe(2);
    expect(resolveLocus({ env_invalid_action: "advantage" }, "env_invalid_action")).toBe("advantage");
  });
});
