import { describe, expect, it } from "vitest";
import type { ScenarioComparison } from "./compare.js";
import { mergeReports, type ShardReport } from "./merge.js";
import { parseReportText, REPORT_FORMAT, reportExitCode, reportJson, type RegressReport } from "./report-json.js";
import { parseShard, selectShard, type Shard } from "./suite.js";

const NAMES = ["a", "b", "c", "d", "e"];
const ok = (name: string): ScenarioComparison => ({ name, status: "ok", missing: [], samples: null, metrics: [], drift: { maxDelta: 0, key: null } });

/** The report `--shard` would write for a suite of NAMES where every scenario matches. */
function report(shard: string | null, over: Partial<RegressReport> = {}): RegressReport {
  const s: Shard | null = shard ? parseShard(shard) : null;
  return {
    format: REPORT_FORMAT,
    suite: { file: "suite.json", scenarios: NAMES, tolerances: { "env/reward": 0.001 } },
    backend: "node",
    defaultTolerance: 0.001,
    repeat: 1,
    shard: s,
    comparisons: selectShard(NAMES, s).map(ok),
    failed: [],
    seconds: 1.5,
    ...over,
  };
}

const shards = (...specs: [string, RegressReport][]): ShardReport[] => specs.map(([source, r]) => ({ source, report: r }));
const mergeError = (input: ShardReport[]): string => {
  try {
    mergeReports(input);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error("expected the merge to fail");
};

describe("mergeReports", () => {
  it("puts complementary shards, in any order, back into the whole suite's report (seconds summed)", () => {
    const regressed: ScenarioComparison = { ...ok("d"), status: "regressed", metrics: [{ key: "m", kind: "value", run: 2, golden: 1, delta: 1, tolerance: 0 }] };
    const s2 = report("2/3", { comparisons: [ok("b")], failed: [{ name: "e", kind: "run", detail: "boom" }] });
    const s1 = report("1/3", { comparisons: [ok("a"), regressed] });
    const merged = mergeReports(shards(["out-3", report("3/3")], ["out-2", s2], ["out-1", s1]));
    expect(merged).toEqual(
      report(null, { comparisons: [ok("a"), ok("b"), ok("c"), regressed], failed: [{ name: "e", kind: "run", detail: "boom" }], seconds: 4.5 }),
    );
    expect(reportExitCode(merged)).toBe(1);
    expect(reportExitCode(mergeReports(shards(["1", report("1/2")], ["2", report("2/2")])))).toBe(0);
    const badInput = report("2/3", { comparisons: [ok("b")], failed: [{ name: "e", kind: "input", detail: "damaged golden" }] });
    expect(reportExitCode(mergeReports(shards(["out-3", report("3/3")], ["out-2", badInput], ["out-1", s1])))).toBe(2);
  });

  it("takes an unsharded report alone as the whole suite", () => {
    expect(mergeReports(shards(["whole", report(null)]))).toEqual(report(null));
  });

  it("names missing shards", () => {
    expect(mergeError(shards(["out-1", report("1/3")], ["out-3", report("3/3")]))).toBe("shard 2/3 is missing (merging out-1, out-3)");
    expect(mergeError(shards(["out-2", report("2/3")]))).toBe("shard 1/3, shard 3/3 are missing (merging out-2)");
    expect(mergeError([])).toBe("no shard reports to merge");
  });

  it("names a shard given twice", () => {
    expect(mergeError(shards(["x", report("1/2")], ["y", report("2/2")], ["z", report("2/2")]))).toBe("shard 2/2 appears twice: y and z");
  });

  it("names shards of different shard counts, or a shard with an unsharded run", () => {
    expect(mergeError(shards(["x", report("1/3")], ["y", report("2/2")]))).toBe("y is shard 2/2 but x is shard 1/3");
    expect(mergeError(shards(["x", report("1/2")], ["y", report(null)]))).toBe("y is the whole suite (run without --shard) but x is shard 1/2");
  });

  it("names a shard of another suite or backend", () => {
    const other = report("2/2", { suite: { file: "other.json", scenarios: ["a", "b"], tolerances: { "env/reward": 0.001 } } });
    expect(mergeError(shards(["x", report("1/2")], ["y", other]))).toBe(
      "y (suite other.json) is from a different suite than x (suite suite.json): its scenarios are a, b; the other's a, b, c, d, e",
    );
    const loose = report("2/2", { suite: { file: "suite.json", scenarios: NAMES, tolerances: {} } });
    expect(mergeError(shards(["x", report("1/2")], ["y", loose]))).toMatch(/^y \(suite suite\.json\) is from a different suite than x .*: its tolerances are \{\}/);
    const wasm = report("2/2", { backend: "wasm" });
    expect(mergeError(shards(["x", report("1/2")], ["y", wasm]))).toBe(
      "y ran on backend wasm (default tolerance 0.001, 1 run each) but x on backend node (default tolerance 0.001, 1 run each)",
    );
    const repeated = report("2/2", { repeat: 3 });
    expect(mergeError(shards(["x", report("1/2")], ["y", repeated]))).toMatch(/^y ran on backend node \(default tolerance 0\.001, 3 runs each\)/);
  });

  it("names a shard that does not cover exactly its scenarios", () => {
    const partial = report("1/2", { comparisons: [ok("a"), ok("c")] });
    expect(mergeError(shards(["x", partial], ["y", report("2/2")]))).toBe("x: shard 1/2 should cover a, c, e but reports a, c");
  });
});

describe("report.json", () => {
  it("round-trips", () => {
    const r = report("2/3", { comparisons: [{ ...ok("b"), status: "skipped", reason: "replay policy" }] });
    expect(parseReportText(reportJson(r), "r.json")).toEqual(r);
  });

  it("names what is wrong with a file that is not a report", () => {
    expect(() => parseReportText("{", "out/report.json")).toThrow(/^out\/report\.json: not valid JSON/);
    const { seconds: _, ...noSeconds } = report(null);
    expect(() => parseReportText(JSON.stringify({ ...noSeconds, format: "x" }), "r.json")).toThrow(
      `r.json: not a regress report: format: expected "${REPORT_FORMAT}"; seconds: `,
    );
    expect(() => parseReportText(JSON.stringify(report(null, { shard: { index: 3, count: 2 } })), "r.json")).toThrow(
      "r.json: not a regress report: shard: expected index ≤ count",
    );
  });
});
