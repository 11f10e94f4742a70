import { describe, expect, it } from "vitest";
import { parseShard, parseSuite, parseSuiteText, scenarioName, selectShard, SuiteError } from "./suite.js";

const problems = (value: unknown): string[] => {
  try {
    parseSuite(value);
  } catch (e) {
    if (e instanceof SuiteError) return e.problems;
    throw e;
  }
  throw new Error("expected a SuiteError");
};

describe("suite parsing", () => {
  it("accepts scenarios with optional tolerances", () => {
    expect(parseSuite({ scenarios: ["a.json"] })).toEqual({ scenarios: ["a.json"], tolerances: {} });
    expect(parseSuite({ scenarios: ["x/a.json", "b.json"], tolerances: { "env/reward": 1e-6 } }).tolerances).toEqual({ "env/reward": 1e-6 });
  });

  it("names unknown keys and bad types by field", () => {
    expect(problems({ scenarios: ["a.json"], tolerance: {} })).toEqual(["tolerance: unknown key (expected one of: scenarios, tolerances)"]);
    expect(problems({ scenarios: "a.json" })).toEqual(["scenarios: expected a list of scenario file paths"]);
    expect(problems({ scenarios: ["a.json", 3] })).toEqual(["scenarios[1]: expected a scenario file path"]);
    expect(problems({ scenarios: ["a.json"], tolerances: { "env/reward": "0.1" } })[0]).toMatch(/^tolerances\.env\/reward: expected an absolute tolerance/);
    expect(problems({ scenarios: ["a.json"], tolerances: { m: -1 } })[0]).toMatch(/^tolerances\.m: /);
    expect(problems({ scenarios: [] })).toEqual(["scenarios: expected at least one scenario"]);
    expect(problems({})[0]).toMatch(/^scenarios: /);
    expect(problems([])[0]).toMatch(/^\(suite\): /);
  });

  it("rejects two scenarios with the same name (they would share a golden)", () => {
    expect(problems({ scenarios: ["a/x.json", "b/x.json"] })).toEqual(["scenarios[1]: scenario name 'x' is also scenarios[0]'s"]);
  });

  it("reports invalid JSON with the source", () => {
    expect(() => parseSuiteText("{", "s.json")).toThrow(/s\.json: not valid JSON at line 1, column 2 \(the text ends early\): /);
    expect(() => parseSuiteText('{\n  "scenarios": ["a.json",]\n}', "s.json")).toThrow(/s\.json: not valid JSON at line 2, column 26: /);
  });

  it("names scenarios by file name without .json", () => {
    expect(scenarioName("scenarios/puzzle-sync.json")).toBe("puzzle-sync");
  });
});

describe("sharding", () => {
  it("takes index % n == i − 1", () => {
    const items = ["a", "b", "c", "d", "e"];
    expect(selectShard(items, parseShard("1/2"))).toEqual(["a", "c", "e"]);
    expect(selectShard(items, parseShard("2/2"))).toEqual(["b", "d"]);
    expect(selectShard(items, parseShard("3/3"))).toEqual(["c"]);
    expect(selectShard(items, null)).toEqual(items);
  });

  it("rejects bad shards", () => {
    for (const bad of ["0/2", "3/2", "1/0", "1", "a/b", "1/2/3"]) expect(() => parseShard(bad)).toThrow(/--shard/);
  });
});
