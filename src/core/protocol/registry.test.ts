import { describe, expect, it } from "vitest";
import { pyJsonDumps } from "../python/repr.js";
import { assessToolCalls, CODE_TOOLS, makeTool, SESSION_TOOLS, ToolRegistry } from "./registry.js";

const call = (name: unknown, args: unknown) => `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;

describe("makeTool and ToolRegistry (fork-additions.md §3.2)", () => {
  it("builds specs with the key order type, function{name, description, parameters}", () => {
    const tool = makeTool("t", "does t", { type: "object", properties: {} });
    expect(pyJsonDumps(tool)).toBe(
      '{"type": "function", "function": {"name": "t", "description": "does t", "parameters": {"type": "object", "properties": {}}}}',
    );
  });

  it("rejects duplicate names with the Python list repr", () => {
    const t = makeTool("x", "d", { type: "object", properties: {} });
    expect(() => new ToolRegistry([t, t])).toThrow("duplicate tool names in registry: ['x', 'x']");
    expect(() => new ToolRegistry([])).not.toThrow();
  });

  it("answers names, membership, get and parameters", () => {
    expect(SESSION_TOOLS.names()).toEqual(["run_shell", "read_file", "write_file", "task_complete"]);
    expect(CODE_TOOLS.names()).toEqual(["submit_patch"]);
    expect(SESSION_TOOLS.has("run_shell")).toBe(true);
    expect(SESSION_TOOLS.has("submit_patch")).toBe(false);
    expect(SESSION_TOOLS.has(123)).toBe(false);
    expect(SESSION_TOOLS.parameters("write_file")?.required).toEqual(["path", "content"]);
    expect(SESSION_TOOLS.parameters("nope")).toBeUndefined();
    expect(SESSION_TOOLS.get("task_complete")?.function.parameters).toEqual({ type: "object", properties: {} });
  });

  it("gives shallow copies in declaration order from chatTemplateTools", () => {
    const a = SESSION_TOOLS.chatTemplateTools();
    const b = SESSION_TOOLS.chatTemplateTools();
    expect(a).toEqual(b);
    expect(a[0]).not.toBe(b[0]);
    expect(a[0]!.function).toBe(b[0]!.function);
    a.pop();
    expect(SESSION_TOOLS.names()).toHaveLength(4);
  });

  it("renders the frozen tool sets exactly as §3.3 (json.dumps, ensure_ascii=False)", () => {
    expect(CODE_TOOLS.chatTemplateTools().map((t) => pyJsonDumps(t))).toEqual([
      '{"type": "function", "function": {"name": "submit_patch", "description": "Submit the unified-diff patch that solves the task.", "parameters": {"type": "object", "properties": {"patch": {"type": "string", "description": "A unified diff (git format)."}}, "required": ["patch"]}}}',
    ]);
    expect(pyJsonDumps(SESSION_TOOLS.chatTemplateTools()[2])).toBe(
      '{"type": "function", "function": {"name": "write_file", "description": "Write content to a file in the session container, creating parent dirs.", "parameters": {"type": "object", "properties": {"path": {"type": "string", "description": "Destination path."}, "content": {"type": "string", "description": "Full file content to write."}}, "required": ["path", "content"]}}}',
    );
  });
});

describe("assessToolCalls (fork-additions.md §3.2)", () => {
  it("treats no call as not attempted and not malformed", () => {
    expect(assessToolCalls("just thinking", SESSION_TOOLS)).toMatchObject({
      attempted: false,
      malformed: false,
      has_valid_call: false,
      valid_calls: [],
      reason: null,
    });
  });

  it("accepts valid calls, several of them too", () => {
    const r = assessToolCalls(call("run_shell", { command: "a" }) + call("task_complete", {}), SESSION_TOOLS);
    expect(r).toMatchObject({ attempted: true, malformed: false, has_valid_call: true, reason: null });
    expect(r.valid_calls.map((c) => c.name)).toEqual(["run_shell", "task_complete"]);
    expect(r.call_errors).toEqual([null, null]);
  });

  it("passes the extractor's parse error through as the reason", () => {
    const r = assessToolCalls("<tool_call>\n{bad}\n</tool_call>", SESSION_TOOLS);
    expect(r).toMatchObject({ attempted: true, malformed: true, has_valid_call: false });
    expect(r.reason).toMatch(/^tool-call JSON decode error: /);
  });

  it("reports unknown tools with the name's Python repr and schema errors prefixed by the tool", () => {
    expect(assessToolCalls(call("delete_everything", {}), SESSION_TOOLS).reason).toBe("unknown tool 'delete_everything'");
    expect(assessToolCalls(call(123, {}), SESSION_TOOLS).reason).toBe("unknown tool 123");
    expect(assessToolCalls(call("run_shell", { command: 123 }), SESSION_TOOLS).reason).toBe(
      "run_shell: $.command: expected string, got integer",
    );
    expect(assessToolCalls(call("write_file", {}), SESSION_TOOLS).reason).toBe(
      "write_file: $: missing required property 'path'; $: missing required property 'content'",
    );
    expect(assessToolCalls(call("run_shell", "ls"), SESSION_TOOLS).reason).toBe(
      "run_shell: $: expected object arguments, got string",
    );
  });

  it("keeps valid calls beside failing ones and joins the reasons with '; '", () => {
    const r = assessToolCalls(
      call("run_shell", {}) + call("read_file", { path: "a" }) + call("nope", {}),
      SESSION_TOOLS,
    );
    expect(r.malformed).toBe(true);
    expect(r.has_valid_call).toBe(true);
    expect(r.valid_calls.map((c) => c.name)).toEqual(["read_file"]);
    expect(r.reason).toBe("run_shell: $: missing required property 'command'; unknown tool 'nope'");
    expect(r.call_errors).toEqual(["run_shell: $: missing required property 'command'", null, "unknown tool 'nope'"]);
  });
});
