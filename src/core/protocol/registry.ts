/** Tool registry and the per-turn tool-call assessment (fork-additions.md §3.2–§3.3). */

import { parseHermesToolCalls, type ParsedToolCall } from "./hermes.js";
import { pyRepr } from "../python/repr.js";
import { validateArguments } from "./schema.js";

export interface ToolSpec {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export function makeTool(name: string, description: string, parameters: Record<string, unknown>): ToolSpec {
  return { type: "function", function: { name, description, parameters } };
}

export class ToolRegistry {
  private readonly tools: readonly ToolSpec[];

  constructor(tools: readonly ToolSpec[]) {
    const names = tools.map((t) => t.function.name);
    if (new Set(names).size !== names.length) {
      throw new Error(`duplicate tool names in registry: ${pyRepr(names)}`);
    }
    this.tools = tools;
  }

  names(): string[] {
    return this.tools.map((t) => t.function.name);
  }

  has(name: unknown): boolean {
    return this.tools.some((t) => t.function.name === name);
  }

  get(name: unknown): ToolSpec | undefined {
    return this.tools.find((t) => t.function.name === name);
  }

  parameters(name: unknown): Record<string, unknown> | undefined {
    return this.get(name)?.function.parameters;
  }

  /** The list the chat template's `tools` receives (shallow copies, declaration order). */
  chatTemplateTools(): ToolSpec[] {
    return this.tools.map((t) => ({ ...t }));
  }
}

export interface ToolUseAssessment {
  attempted: boolean;
  valid_calls: ParsedToolCall[];
  malformed: boolean;
  reason: string | null;
  has_valid_call: boolean;
  /** Per call: null when valid, else why not (unknown tool or the schema errors). */
  call_errors: (string | null)[];
}

export function assessToolCalls(text: string, registry: ToolRegistry): ToolUseAssessment {
  const extraction = parseHermesToolCalls(text);
  if (!extraction.attempted) return assessment(false, [], false, null, []);
  if (extraction.error !== null) return assessment(true, [], true, extraction.error, []);
  const valid: ParsedToolCall[] = [];
  const reasons: string[] = [];
  const callErrors: (string | null)[] = [];
  for (const call of extraction.tool_calls) {
    let reason: string | null = null;
    if (!registry.has(call.name)) {
      reason = `unknown tool ${pyRepr(call.name)}`;
    } else {
      const errors = validateArguments(call.arguments, registry.parameters(call.name) ?? {});
      if (errors.length) reason = `${String(call.name)}: ${errors.join("; ")}`;
    }
    callErrors.push(reason);
    if (reason === null) valid.push(call);
    else reasons.push(reason);
  }
  return assessment(true, valid, reasons.length > 0, reasons.length ? reasons.join("; ") : null, callErrors);
}

function assessment(
  attempted: boolean,
  validCalls: ParsedToolCall[],
  malformed: boolean,
  reason: string | null,
  callErrors: (string | null)[],
): ToolUseAssessment {
  return { attempted, valid_calls: validCalls, malformed, reason, has_valid_call: validCalls.length > 0, call_errors: callErrors };
}

const stringParam = (description: string) => ({ type: "string", description });

/** The session tools of the derived library's multi-turn environments, in their order (§3.3). */
export const SESSION_TOOLS = new ToolRegistry([
  makeTool("run_shell", "Run a single shell command in the session container and return its output.", {
    type: "object",
    properties: { command: stringParam("The shell command to execute.") },
    required: ["command"],
  }),
  makeTool("read_file", "Read a file from the session container and return its contents.", {
    type: "object",
    properties: { path: stringParam("Absolute or workspace-relative path.") },
    required: ["path"],
  }),
  makeTool("write_file", "Write content to a file in the session container, creating parent dirs.", {
    type: "object",
    properties: { path: stringParam("Destination path."), content: stringParam("Full file content to write.") },
    required: ["path", "content"],
  }),
  makeTool("task_complete", "Signal that the task is finished; the episode is then graded.", {
    type: "object",
    properties: {},
  }),
]);

export const CODE_TOOLS = new ToolRegistry([
  makeTool("submit_patch", "Submit the unified-diff patch that solves the task.", {
    type: "object",
    properties: { patch: stringParam("A unified diff (git format).") },
    required: ["patch"],
  }),
]);
