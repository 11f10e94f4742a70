import { describe, expect, it } from "vitest";
import { jsonTypeName, pyEquals, SchemaError, validateAgainstSchema, validateArguments } from "./schema.js";

const SHELL = {
  type: "object",
  properties: { command: { type: "string" }, timeout: { type: "integer" } },
  required: ["command"],
};

describe("validateArguments / validateAgainstSchema (fork-additions.md §3.1)", () => {
  it("accepts valid arguments and reports the spec's messages", () => {
    expect(validateArguments({ command: "ls", timeout: 30 }, SHELL)).toEqual([]);
    expect(validateArguments({ timeout: 30 }, SHELL)).toEqual(["$: missing required property 'command'"]);
    expect(validateArguments({ command: 123 }, SHELL)).toEqual(["$.command: expected string, got integer"]);
    expect(validateArguments({ command: "ls", timeout: true }, SHELL)).toEqual(["$.timeout: expected integer, got boolean"]);
    expect(validateArguments({ command: "ls", timeout: 1.5 }, SHELL)).toEqual(["$.timeout: expected integer, got number"]);
  });

  it("rejects non-object arguments by their JSON type name", () => {
    expect(validateArguments(["command"], SHELL)).toEqual(["$: expected object arguments, got array"]);
    expect(validateArguments("str", { type: "object" })).toEqual(["$: expected object arguments, got string"]);
    expect(validateArguments(null, SHELL)).toEqual(["$: expected object arguments, got null"]);
  });

  it("checks nested objects and array items with their paths, in order", () => {
    const schema = {
      type: "object",
      properties: {
        opts: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] },
        paths: { type: "array", items: { type: "string" } },
      },
    };
    expect(validateArguments({ opts: {}, paths: ["a", 2, null] }, schema)).toEqual([
      "$.opts: missing required property 'n'",
      "$.paths[1]: expected string, got integer",
      "$.paths[2]: expected string, got null",
    ]);
  });

  it("reports missing required keys in `required` order, then properties in schema order", () => {
    const schema = {
      type: "object",
      properties: { b: { type: "string" }, a: { type: "string" } },
      required: ["z", "y"],
    };
    expect(validateAgainstSchema({ a: 1, b: 2 }, schema)).toEqual([
      "$: missing required property 'z'",
      "$: missing required property 'y'",
      "$.b: expected string, got integer",
      "$.a: expected string, got integer",
    ]);
  });

  it("stops at a type mismatch (no enum or child checks)", () => {
    expect(validateAgainstSchema([1], { type: "string", enum: ["a"] }, "$.x")).toEqual(["$.x: expected string, got array"]);
  });

  it("uses Python equality and Python repr in enum", () => {
    expect(validateAgainstSchema("x", { enum: ["r", "w"] }, "$.mode")).toEqual(["$.mode: 'x' is not one of ['r', 'w']"]);
    expect(validateAgainstSchema(true, { enum: [1, 2] })).toEqual([]);
    expect(validateAgainstSchema(false, { enum: [0] })).toEqual([]);
    expect(validateAgainstSchema([true, { a: 1 }], { enum: [[1, { a: true }]] })).toEqual([]);
    expect(validateAgainstSchema(true, { enum: [2, null, "it's"] })).toEqual([
      `$: True is not one of [2, None, "it's"]`,
    ]);
    expect(validateAgainstSchema("1", { enum: [1] })).toEqual(["$: '1' is not one of [1]"]);
  });

  it("a present but null required or properties is not a list or an object; a null type is no type (Python's .get)", () => {
    expect(() => validateAgainstSchema({}, { type: "object", required: null })).toThrow("$: 'required' must be a list");
    expect(() => validateAgainstSchema({}, { type: "object", properties: null })).toThrow("$: 'properties' must be an object");
    expect(validateAgainstSchema({ a: 1 }, { type: null, required: ["b"] })).toEqual(["$: missing required property 'b'"]);
    // A decoded object's keys are strings: a required 1 is never present, though JavaScript would find "1".
    expect(validateAgainstSchema({ "1": true }, { type: "object", required: [1] })).toEqual(["$: missing required property 1"]);
  });

  it("without a type, checks objects and arrays by the value's shape", () => {
    expect(validateAgainstSchema({}, { required: ["a"] })).toEqual(["$: missing required property 'a'"]);
    expect(validateAgainstSchema([1], { items: { type: "string" } })).toEqual(["$[0]: expected string, got integer"]);
    expect(validateAgainstSchema("s", { required: ["a"], items: { type: "string" } })).toEqual([]);
  });

  it("ignores keywords outside its subset", () => {
    expect(
      validateAgainstSchema({ extra: 1, n: -5 }, {
        type: "object",
        properties: { n: { type: "integer", minimum: 0 } },
        additionalProperties: false,
      }),
    ).toEqual([]);
  });

  it("throws SchemaError with the spec's messages for malformed schemas", () => {
    const cases: [unknown, unknown, string][] = [
      ["x", { type: "bogus" }, "unsupported JSON-schema type: 'bogus'"],
      ["x", { type: 5 }, "$: 'type' must be a string, got 5"],
      ["x", { type: ["string", "null"] }, "$: 'type' must be a string, got ['string', 'null']"],
      [{}, { type: "object", required: "a" }, "$: 'required' must be a list"],
      [{}, { type: "object", properties: [] }, "$: 'properties' must be an object"],
      ["x", { enum: "a" }, "$: 'enum' must be a list"],
      [[1], { type: "array", items: [{ type: "string" }] }, "$: 'items' must be a schema object"],
      [{ a: "x" }, { properties: { a: { type: "nope" } } }, "unsupported JSON-schema type: 'nope'"],
    ];
    for (const [value, schema, message] of cases) {
      let thrown: unknown;
      try {
        validateAgainstSchema(value, schema);
      } catch (e) {
        thrown = e;
      }
      expect(thrown, message).toBeInstanceOf(SchemaError);
      expect((thrown as Error).message).toBe(message);
    }
    expect(() => validateAgainstSchema({}, { type: "object", required: "a" })).toThrow("$: 'required' must be a list");
  });

  it("names JSON types as Python's _pytype_name does", () => {
    expect([true, {}, [], null, "s", 3, 3.5].map(jsonTypeName)).toEqual([
      "boolean",
      "object",
      "array",
      "null",
      "string",
      "integer",
      "number",
    ]);
  });

  it("pyEquals follows Python ==", () => {
    expect(pyEquals(true, 1)).toBe(true);
    expect(pyEquals(1, 1.0)).toBe(true);
    expect(pyEquals("1", 1)).toBe(false);
    expect(pyEquals(null, 0)).toBe(false);
    expect(pyEquals({ a: [1] }, { a: [true] })).toBe(true);
    expect(pyEquals({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(pyEquals([1, 2], [2, 1])).toBe(false);
  });
});

describe("user-given names are own keys only", () => {
  it("a schema type named after an Object.prototype member is unsupported, not Object's method", () => {
    for (const type of ["constructor", "toString", "hasOwnProperty"]) {
      expect(() => validateAgainstSchema(1, { type })).toThrow(SchemaError);
      expect(() => validateAgainstSchema(1, { type })).toThrow(`unsupported JSON-schema type: '${type}'`);
    }
  });
});
