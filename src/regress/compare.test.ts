import { describe, expect, it } from "vitest";
import { charDiff, compareMetrics, compareScenario, compareTranscripts, firstDifference, toJsonl } from "./compare.js";

const msg = (role: string, content: string) => ({ role, content, token_ids: [...content].map((c) => c.charCodeAt(0)) });

function sample(idx: number, assistant: string[]) {
  const log = [msg("user", `prompt ${idx}`)];
  assistant.forEach((a, k) => log.push(msg("assistant", a), msg("environment", `obs ${k}`)));
  return { idx, task_name: "t", message_log: log, total_reward: 1, truncated: false, termination: "terminated" };
}

describe("compareTranscripts", () => {
  const golden = toJsonl([sample(0, ["a0", "a1", "a2"]), sample(5, ["move up", "move left", "move down"]), sample(9, ["x"])]);

  it("is null for byte-identical transcripts", () => {
    expect(compareTranscripts(golden, golden)).toBeNull();
  });

  it("finds the sample, the first diverging turn and the character", () => {
    const run = toJsonl([sample(0, ["a0", "a1", "a2"]), sample(5, ["move up", "move left", "move right"]), sample(9, ["y"])]);
    const d = compareTranscripts(run, golden)!;
    expect(d).toMatchObject({ line: 1, idx: 5, turn: 2, messageIndex: 5, role: "assistant", field: "content" });
    expect(d.runText).toBe("move right");
    expect(d.goldenText).toBe("move down");
    expect(d.diff.position).toBe(5);
    expect(d.diff.run).toMatchObject({ before: "move ", at: "r", after: "ight" });
    expect(d.diff.golden).toMatchObject({ before: "move ", at: "d", after: "own" });
  });

  it("attributes an environment observation to the turn it answers", () => {
    const s = sample(3, ["a0", "a1"]);
    const changed = structuredClone(s);
    changed.message_log[2]!.content = "obs changed";
    const d = compareTranscripts(toJsonl([changed]), toJsonl([s]))!;
    expect(d).toMatchObject({ idx: 3, turn: 0, messageIndex: 2, role: "environment", field: "content" });
  });

  it("reports a changed prompt as turn 0 and a token-only change by field", () => {
    const s = sample(1, ["a0"]);
    const prompt = structuredClone(s);
    prompt.message_log[0]!.content = "prompt 2";
    expect(compareTranscripts(toJsonl([prompt]), toJsonl([s]))).toMatchObject({ turn: 0, messageIndex: 0, role: "user" });
    const tokens = structuredClone(s);
    tokens.message_log[1]!.token_ids = [1];
    expect(compareTranscripts(toJsonl([tokens]), toJsonl([s]))).toMatchObject({ turn: 0, messageIndex: 1, field: "token_ids" });
  });

  it("reports a run that stops early, a missing sample and a sample-level key", () => {
    const s = sample(2, ["a0", "a1"]);
    const shorter = sample(2, ["a0"]);
    expect(compareTranscripts(toJsonl([shorter]), toJsonl([s]))).toMatchObject({ turn: 1, messageIndex: 3, field: "message missing from the run" });
    expect(compareTranscripts(toJsonl([s]), toJsonl([s, sample(4, [])]))).toMatchObject({ line: 1, idx: 4, field: "sample missing from the run" });
    const reward = { ...s, total_reward: 0 };
    expect(compareTranscripts(toJsonl([reward]), toJsonl([s]))).toMatchObject({ idx: 2, turn: null, field: "total_reward", runText: "0", goldenText: "1" });
  });

  it("flags a pure serialization difference", () => {
    const d = compareTranscripts('{"b":1,"a":2}\n', '{"a":2,"b":1}\n')!;
    expect(d.field).toBe("serialization");
    expect(d.diff.position).toBe(2);
  });
});

describe("character diff", () => {
  it("finds the first differing character, including a prefix", () => {
    expect(firstDifference("abc", "abc")).toBe(-1);
    expect(firstDifference("abc", "abd")).toBe(2);
    expect(firstDifference("ab", "abc")).toBe(2);
  });

  it("windows around the difference and says where it cut", () => {
    const a = `${"x".repeat(100)}A${"y".repeat(100)}`;
    const b = `${"x".repeat(100)}B${"y".repeat(100)}`;
    const d = charDiff(a, b, 10);
    expect(d.position).toBe(100);
    expect(d.run).toEqual({ cutBefore: true, before: "x".repeat(10), at: "A", after: "y".repeat(10), cutAfter: true });
    expect(charDiff("ab", "abc").run).toMatchObject({ at: "", cutAfter: false });
  });
});

describe("compareMetrics", () => {
  it("is exact by default and ignores timing/ keys", () => {
    expect(compareMetrics({ a: 1, "timing/x": 5 }, { a: 1, "timing/x": 9 })).toEqual([]);
    expect(compareMetrics({ a: 1 + 1e-12 }, { a: 1 })).toMatchObject([{ key: "a", tolerance: 0 }]);
  });

  it("applies the per-key absolute tolerance, inclusive", () => {
    expect(compareMetrics({ a: 1.05, b: 2 }, { a: 1, b: 2 }, { a: 0.1 })).toEqual([]);
    expect(compareMetrics({ a: 1.25 }, { a: 1 }, { a: 0.25 })).toEqual([]);
    const [delta] = compareMetrics({ a: 1.5, b: 2 }, { a: 1, b: 2 }, { a: 0.1 });
    expect(delta).toEqual({ key: "a", run: 1.5, golden: 1, delta: 0.5, tolerance: 0.1 });
  });

  it("reports keys present on one side only and non-numeric changes", () => {
    expect(compareMetrics({ a: 1, extra: 2 }, { a: 1, gone: 3 }).map((m) => m.key)).toEqual(["extra", "gone"]);
    expect(compareMetrics({ a: null }, { a: null })).toEqual([]);
    expect(compareMetrics({ a: "x" }, { a: "y" })).toMatchObject([{ key: "a", delta: null }]);
  });
});

describe("compareScenario", () => {
  const run = { samplesJsonl: toJsonl([sample(0, ["a"])]), metrics: { m: 1 } };
  it("is ok, regressed, or missing a golden (named)", () => {
    expect(compareScenario("s", run, { samplesJsonl: run.samplesJsonl, metrics: { m: 1 } }).status).toBe("ok");
    expect(compareScenario("s", run, { samplesJsonl: run.samplesJsonl, metrics: { m: 2 } }).status).toBe("regressed");
    expect(compareScenario("s", run, { samplesJsonl: run.samplesJsonl, metrics: { m: 1.5 } }, { m: 0.5 }).status).toBe("ok");
    const missing = compareScenario("s", run, { samplesJsonl: null, metrics: { m: 1 } });
    expect(missing).toMatchObject({ status: "missing-golden", missing: ["samples.jsonl"] });
  });
});
