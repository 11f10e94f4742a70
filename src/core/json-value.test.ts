import { describe, expect, it } from "vitest";
import { describeJsonValueProblem, describeType, findJsonValueProblem, formatJsonPath, MAX_JSON_DEPTH, MAX_METADATA_DEPTH, PROTO_KEY_MESSAGE } from "./json-value.js";

/** `{"a": {"a": … 1 …}}` with `levels` objects, built without recursion. */
function nested(levels: number, key: string | number = "a"): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = typeof key === "number" ? [value] : { [key]: value };
  return value;
}

describe("findJsonValueProblem", () => {
  it("the documented limits", () => {
    expect(MAX_JSON_DEPTH).toBe(100);
    expect(MAX_METADATA_DEPTH).toBe(97);
  });

  it("accepts exactly MAX_JSON_DEPTH levels and names the container one level deeper", () => {
    expect(findJsonValueProblem(nested(MAX_JSON_DEPTH))).toBeNull();
    const problem = findJsonValueProblem(nested(MAX_JSON_DEPTH + 1));
    expect(problem?.message).toBe("nested deeper than 100 levels");
    expect(problem?.path).toEqual(new Array(MAX_JSON_DEPTH).fill("a"));
    expect(findJsonValueProblem(nested(MAX_JSON_DEPTH + 1, 0))?.path).toEqual(new Array(MAX_JSON_DEPTH).fill(0));
  });

  it("far deeper than the stack allows (100,000 levels): the check itself does not overflow", () => {
    // JSON.parse reads any depth (V8's parser is iterative); the check must too.
    const deep = JSON.parse(`${"[".repeat(100_000)}${"]".repeat(100_000)}`);
    expect(findJsonValueProblem(deep)?.message).toBe("nested deeper than 100 levels");
    const deepObject = JSON.parse(`${'{"a":'.repeat(200_000)}1${"}".repeat(200_000)}`);
    expect(formatJsonPath(findJsonValueProblem(deepObject)!.path)).toBe("a.a.a.a.a.a.a.a.a.a…");
  });

  it("the maxDepth option, and primitives", () => {
    expect(findJsonValueProblem(nested(4), { maxDepth: 3 })?.path).toEqual(["a", "a", "a"]);
    for (const v of [null, 1, "x", true, undefined]) expect(findJsonValueProblem(v)).toBeNull();
  });

  it("a __proto__ key that JSON.parse kept is named with its path, wherever it is", () => {
    const value = JSON.parse('{"samples": [{"extra_env_info": {"ok": 1, "__proto__": {"x": 1}}}]}');
    expect(Object.keys(value.samples[0].extra_env_info)).toContain("__proto__");
    const problem = findJsonValueProblem(value)!;
    expect(problem).toEqual({ path: ["samples", 0, "extra_env_info", "__proto__"], message: PROTO_KEY_MESSAGE });
    expect(describeJsonValueProblem(problem)).toBe(`samples[0].extra_env_info.__proto__: ${PROTO_KEY_MESSAGE}`);
    // An ordinary object literal's __proto__ sets the prototype: no own key, nothing to report.
    expect(findJsonValueProblem({ __proto__: { x: 1 } })).toBeNull();
  });

  it("reports the first problem in document order", () => {
    const value = JSON.parse(`{"a": ${JSON.stringify(nested(MAX_JSON_DEPTH))}, "__proto__": 1}`);
    expect(findJsonValueProblem(value)!.path[0]).toBe("a");
    const other = JSON.parse(`{"__proto__": 1, "a": ${JSON.stringify(nested(MAX_JSON_DEPTH))}}`);
    expect(findJsonValueProblem(other)!.path).toEqual(["__proto__"]);
  });

  it("shared objects and cycles (a JS environment's metadata) stay bounded", () => {
    // 40 levels of a value that holds its child twice: 2^40 paths, 40 objects.
    let dag: unknown = {};
    for (let i = 0; i < 40; i++) dag = { left: dag, right: dag };
    expect(findJsonValueProblem(dag, { shared: true })).toBeNull();
    let deepDag: unknown = {};
    for (let i = 0; i < 200; i++) deepDag = { left: deepDag, right: deepDag };
    expect(findJsonValueProblem(deepDag, { shared: true })?.message).toBe("nested deeper than 100 levels");
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(findJsonValueProblem(cycle, { shared: true })?.message).toBe("nested deeper than 100 levels");
  });
});

describe("formatJsonPath and describeType", () => {
  it("paths as the lab writes them, long ones cut", () => {
    expect(formatJsonPath(["samples", 0, "extra_env_info", "a"])).toBe("samples[0].extra_env_info.a");
    expect(formatJsonPath([])).toBe("(top)");
    expect(formatJsonPath([], "(scenario)")).toBe("(scenario)");
    expect(formatJsonPath(["samples", 0, ...new Array(98).fill("a")])).toBe("samples[0].a.a.a.a.a.a.a.a…");
    // Up to 12 parts are shown whole.
    expect(formatJsonPath(new Array(12).fill("b"))).toBe(new Array(12).fill("b").join("."));
  });

  it("types named for errors", () => {
    expect([[], {}, null, undefined, "false", 1, true].map(describeType)).toEqual([
      "an array",
      "an object",
      "null",
      "undefined",
      "a string",
      "a number",
      "a boolean",
    ]);
  });
});

describe("rootDepth", () => {
  it("a value inside a larger input counts the levels above it", () => {
    expect(findJsonValueProblem(nested(99), { rootDepth: 2 })).toBeNull();
    expect(findJsonValueProblem(nested(100), { rootDepth: 2 })).toEqual({ path: new Array(99).fill("a"), message: "nested deeper than 100 levels" });
  });
});
