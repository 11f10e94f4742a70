import { describe, expect, it } from "vitest";
import { pyJsonDumps, pyRepr, pyStrRepr, PyTuple } from "./repr.js";

// Expected strings are what CPython 3.12 prints for the same values.

describe("pyStrRepr: Python repr(str)", () => {
  it("chooses quotes as Python does", () => {
    expect(pyStrRepr("bogus")).toBe("'bogus'");
    expect(pyStrRepr("it's")).toBe(`"it's"`);
    expect(pyStrRepr(`a'b"c`)).toBe(`'a\\'b"c'`);
    expect(pyStrRepr(`say "hi"`)).toBe(`'say "hi"'`);
    expect(pyStrRepr("")).toBe("''");
  });

  it("escapes backslash, the usual controls and other control bytes", () => {
    expect(pyStrRepr("a\\b")).toBe("'a\\\\b'");
    expect(pyStrRepr("\n\r\t")).toBe("'\\n\\r\\t'");
    expect(pyStrRepr("\u0000\u0001\u001f\u007f")).toBe("'\\x00\\x01\\x1f\\x7f'");
  });

  it("keeps printable non-ASCII and escapes non-printable code points by width", () => {
    expect(pyStrRepr("é日本😀")).toBe("'é日本😀'");
    expect(pyStrRepr("\u00a0\u00ad")).toBe("'\\xa0\\xad'");
    expect(pyStrRepr("\u200b\u2028\u2029\u3000")).toBe("'\\u200b\\u2028\\u2029\\u3000'");
    expect(pyStrRepr("\u{e0001}")).toBe("'\\U000e0001'");
    expect(pyStrRepr("\ud800")).toBe("'\\ud800'");
    expect(pyStrRepr(" ")).toBe("' '");
  });
});

describe("pyRepr", () => {
  it("prints None, booleans, ints and floats as Python", () => {
    expect(pyRepr(null)).toBe("None");
    expect(pyRepr(undefined)).toBe("None");
    expect([pyRepr(true), pyRepr(false)]).toEqual(["True", "False"]);
    expect(pyRepr(123)).toBe("123");
    expect(pyRepr(-7)).toBe("-7");
    expect(pyRepr(1.5)).toBe("1.5");
    expect(pyRepr(1e-7)).toBe("1e-07");
    expect(pyRepr(1e21)).toBe("1000000000000000000000");
    expect(pyRepr(NaN)).toBe("nan");
    expect(pyRepr(-Infinity)).toBe("-inf");
  });

  it("prints lists, tuples and dicts with Python's separators", () => {
    expect(pyRepr(["x", "x"])).toBe("['x', 'x']");
    expect(pyRepr([])).toBe("[]");
    expect(pyRepr(new PyTuple(["paired", "closing_only"]))).toBe("('paired', 'closing_only')");
    expect(pyRepr(new PyTuple(["one"]))).toBe("('one',)");
    expect(pyRepr(new PyTuple([]))).toBe("()");
    expect(pyRepr({ a: 1, "b'": [true, null] })).toBe(`{'a': 1, "b'": [True, None]}`);
  });
});

describe("pyJsonDumps: json.dumps(value, ensure_ascii=False)", () => {
  it("uses ', ' and ': ' separators and keeps insertion order", () => {
    expect(pyJsonDumps({ command: "ls -la" })).toBe('{"command": "ls -la"}');
    expect(pyJsonDumps({ z: 1, a: [1, 2, { b: null }] })).toBe('{"z": 1, "a": [1, 2, {"b": null}]}');
    expect(pyJsonDumps({})).toBe("{}");
    expect(pyJsonDumps([])).toBe("[]");
  });

  it("keeps non-ASCII raw and escapes only what Python escapes", () => {
    expect(pyJsonDumps("é\n<b>\u0001\u007f/\"\\")).toBe('"é\\n<b>\\u0001\u007f/\\"\\\\"');
    expect(pyJsonDumps("\u2028😀")).toBe('"\u2028😀"');
    expect(pyJsonDumps("\b\f\t\r")).toBe('"\\b\\f\\t\\r"');
    // A lone surrogate stays raw (Python's ensure_ascii=False), in values and keys: JSON.stringify escapes it.
    expect(pyJsonDumps({ "k\ud83d": "\ud83d" })).toBe('{"k\ud83d": "\ud83d"}');
    expect(pyJsonDumps("\ude00x")).toHaveLength(4);
  });

  it("prints numbers as Python: ints bare, floats by repr, non-finite as NaN/Infinity", () => {
    expect(pyJsonDumps([true, false, null, 3, 1.5, 1e-7, 2.5e-5, 123.456])).toBe(
      "[true, false, null, 3, 1.5, 1e-07, 2.5e-05, 123.456]",
    );
    expect(pyJsonDumps(1e21)).toBe("1000000000000000000000");
    expect(pyJsonDumps([NaN, Infinity, -Infinity])).toBe("[NaN, Infinity, -Infinity]");
  });

  it("renders a tool spec as HF tojson does", () => {
    const tool = {
      type: "function",
      function: { name: "f", description: "d", parameters: { type: "object", properties: {}, required: [] } },
    };
    expect(pyJsonDumps(tool)).toBe(
      '{"type": "function", "function": {"name": "f", "description": "d", "parameters": {"type": "object", "properties": {}, "required": []}}}',
    );
  });
});
