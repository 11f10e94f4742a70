import { describe, expect, it } from "vitest";
import {
  JSON_DECODE_ERROR_PREFIX,
  MISSING_NAME_OR_ARGUMENTS_PREFIX,
  parseHermesToolCalls,
} from "./hermes.js";
import { pyRepr } from "../python/repr.js";

const call = (name: string, args: unknown) => `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;

describe("parseHermesToolCalls (fork-additions.md §2)", () => {
  it("is not attempted without an opening tag, even with a lone closing tag or another case", () => {
    for (const text of ["plain answer", "text </tool_call> more", "<TOOL_CALL>{}</TOOL_CALL>", ""]) {
      const r = parseHermesToolCalls(text);
      expect(r).toMatchObject({ tools_called: false, attempted: false, error: null, content: text, tool_calls: [] });
    }
  });

  it("extracts one call with Python json.dumps re-serialisation of the arguments", () => {
    const r = parseHermesToolCalls(call("run_shell", { command: "ls -la", n: 2, ok: true, x: null }));
    expect(r.tools_called).toBe(true);
    expect(r.attempted).toBe(true);
    expect(r.content).toBeNull();
    expect(r.tool_calls).toEqual([
      {
        name: "run_shell",
        arguments: { command: "ls -la", n: 2, ok: true, x: null },
        arguments_json: '{"command": "ls -la", "n": 2, "ok": true, "x": null}',
      },
    ]);
  });

  it("keeps non-ASCII raw in arguments_json (ensure_ascii=False) and escapes like Python", () => {
    const r = parseHermesToolCalls('<tool_call>{"name": "w", "arguments": {"s": "é\\n<b>\\u0001", "l": [1.5, []]}}</tool_call>');
    expect(r.tool_calls[0]!.arguments_json).toBe('{"s": "é\\n<b>\\u0001", "l": [1.5, []]}');
  });

  it("returns all calls in order; leading text is the content, text between and after is dropped", () => {
    const r = parseHermesToolCalls(`pre ${call("a", {})} mid ${call("b", { k: 1 })} post`);
    expect(r.tool_calls.map((c) => c.name)).toEqual(["a", "b"]);
    expect(r.content).toBe("pre ");
    expect(r.regions).toHaveLength(2);
    expect(r.regions.every((g) => g.closed)).toBe(true);
  });

  it("decodes every call before reading any: a decode error after a call without its name is the error", () => {
    const r = parseHermesToolCalls('<tool_call>{"arguments": {}}</tool_call><tool_call>{bad}</tool_call>');
    expect(r.tools_called).toBe(false);
    expect(r.error).toMatch(/^tool-call JSON decode error: /);
  });

  it("keeps whitespace-only leading text and a leading think block", () => {
    expect(parseHermesToolCalls(`  \n${call("task_complete", {})}`).content).toBe("  \n");
    expect(parseHermesToolCalls(`<think>plan</think>\n${call("x", {})}`).content).toBe("<think>plan</think>\n");
  });

  it("parses an unclosed trailing region when its JSON is whole, after closed calls too", () => {
    const text = `${call("run_shell", { command: "a" })}\n<tool_call>\n{"name": "run_shell", "arguments": {"command": "b"}}`;
    const r = parseHermesToolCalls(text);
    expect(r.tool_calls.map((c) => c.arguments)).toEqual([{ command: "a" }, { command: "b" }]);
    expect(r.regions.map((g) => g.closed)).toEqual([true, false]);
  });

  it("is all or nothing: one bad call discards the valid ones, content becomes the whole text", () => {
    const text = `${call("ok", {})}<tool_call>{bad}</tool_call>`;
    const r = parseHermesToolCalls(text);
    expect(r).toMatchObject({ tools_called: false, attempted: true, tool_calls: [], content: text });
    expect(r.error!.startsWith(JSON_DECODE_ERROR_PREFIX)).toBe(true);
  });

  it("reports empty regions, nested open tags, truncated JSON and a trailing <|im_end|> as decode errors", () => {
    for (const text of [
      "<tool_call></tool_call>",
      '<tool_call>{"name":"a","arguments":{}}<tool_call>{"name":"b","arguments":{}}</tool_call>',
      '<tool_call>\n{"name": "run_shell", "argu',
      '<tool_call>\n{"name": "run_shell", "arguments": {"command": "x"}}<|im_end|>',
    ]) {
      const r = parseHermesToolCalls(text);
      expect(r.error, text).toMatch(/^tool-call JSON decode error: /);
      expect(r.attempted).toBe(true);
      expect(r.tools_called).toBe(false);
    }
    // After a closed call the trailing <|im_end|> is harmless.
    expect(parseHermesToolCalls(`${call("x", {})}<|im_end|>`).tools_called).toBe(true);
  });

  it("gives Python's KeyError / TypeError texts for a missing key or a non-object call", () => {
    const cases: [string, string][] = [
      ['{"arguments": {}}', "'name'"],
      ['{"name": "x"}', "'arguments'"],
      ['["run_shell", {}]', "list indices must be integers or slices, not str"],
      ['"run_shell"', "string indices must be integers, not 'str'"],
      ["42", "'int' object is not subscriptable"],
      ["4.5", "'float' object is not subscriptable"],
      ["true", "'bool' object is not subscriptable"],
      ["null", "'NoneType' object is not subscriptable"],
    ];
    for (const [body, tail] of cases) {
      expect(parseHermesToolCalls(`<tool_call>\n${body}\n</tool_call>`).error).toBe(MISSING_NAME_OR_ARGUMENTS_PREFIX + tail);
    }
  });

  it("accepts a non-string name and non-object arguments (the registry rejects them later)", () => {
    const r = parseHermesToolCalls('<tool_call>\n{"name": 123, "arguments": "{\\"command\\": \\"ls\\"}"}\n</tool_call>');
    expect(r.tools_called).toBe(true);
    expect(r.tool_calls[0]).toEqual({
      name: 123,
      arguments: '{"command": "ls"}',
      arguments_json: '"{\\"command\\": \\"ls\\"}"',
    });
  });

  it("ignores extra keys, takes the last of duplicate keys, and allows tab/CRLF around the JSON", () => {
    const r = parseHermesToolCalls('<tool_call>\t{"name": "a", "name": "b", "arguments": {}, "id": 1}\r\n</tool_call>');
    expect(r.tool_calls).toEqual([{ name: "b", arguments: {}, arguments_json: "{}" }]);
  });
});

describe("arguments in the order the model wrote them (Python's dicts keep it; JavaScript objects put integer-like keys first)", () => {
  const argumentsJson = (args: string) => parseHermesToolCalls(`<tool_call>{"name": "edit", "arguments": ${args}}</tool_call>`).tool_calls[0]!.arguments_json;
  it("re-serialises them as Python's json.dumps does, nested objects and duplicate keys included", () => {
    // Each expectation is Python's json.dumps(json.loads(args), ensure_ascii=False).
    expect(argumentsJson('{"path":"a.py","10":"x","2":"y"}')).toBe('{"path": "a.py", "10": "x", "2": "y"}');
    expect(argumentsJson('{"a":1,"b":2,"a":3}')).toBe('{"a": 3, "b": 2}');
    expect(argumentsJson('{"2":1,"1":{"z":1,"0":[{"b":1,"a":2}]},"2":{"9":0,"8":1}}')).toBe('{"2": {"9": 0, "8": 1}, "1": {"z": 1, "0": [{"b": 1, "a": 2}]}}');
    expect(argumentsJson('{"__proto__":{"1":2,"0":1}}')).toBe('{"__proto__": {"1": 2, "0": 1}}');
    expect(argumentsJson(' { "s" : "a\\\\\\"}{" , "0" : [ ] , "t" : { } } ')).toBe('{"s": "a\\\\\\"}{", "0": [], "t": {}}');
  });

  it("quotes them in that order in a schema error (Python's repr)", () => {
    const call = parseHermesToolCalls('<tool_call>{"name": "f", "arguments": {"m": {"z": 1, "0": 2}}}</tool_call>').tool_calls[0]!;
    expect(pyRepr(call.arguments)).toBe("{'m': {'z': 1, '0': 2}}");
  });
});
