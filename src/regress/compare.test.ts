import { describe, expect, it } from "vitest";
import { charDiff, compareMetrics, compareScenario, compareTranscripts, describeDivergence, firstDifference, skippedScenario, toJsonl } from "./compare.js";
import { renderTextReport } from "./report-text.js";

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

describe("tolerant comparison (browser backends: logprobs within a tolerance)", () => {
  /** A model sample: each assistant message with its logprobs. */
  function modelSample(idx: number, logprobs: number[][]) {
    const s = sample(idx, logprobs.map((_, k) => `a${k}`));
    let k = 0;
    for (const m of s.message_log) if (m.role === "assistant") Object.assign(m, { generation_logprobs: logprobs[k++] });
    return s;
  }
  const golden = toJsonl([modelSample(0, [[-0.5, -1.25]]), modelSample(3, [[-0.1, -0.2], [-1.5, -2.000001]])]);
  const tolerant = { logprobTolerance: 1e-4 };

  it("passes logprobs within the tolerance, which exact mode reports", () => {
    const run = toJsonl([modelSample(0, [[-0.50005, -1.25]]), modelSample(3, [[-0.1, -0.2], [-1.50009, -2.0000012]])]);
    expect(compareTranscripts(run, golden, tolerant)).toBeNull();
    expect(compareScenario("s", { samplesJsonl: run, metrics: {} }, { samplesJsonl: golden, metrics: {} }, {}, tolerant).status).toBe("ok");
    expect(compareTranscripts(run, golden)).toMatchObject({ idx: 0, turn: 0, field: "generation_logprobs" });
  });

  it("fails a logprob beyond the tolerance, naming the sample, the turn, the index and |Δ|", () => {
    const run = toJsonl([modelSample(0, [[-0.5, -1.25]]), modelSample(3, [[-0.1, -0.2], [-1.5, -2.001]])]);
    const d = compareTranscripts(run, golden, tolerant)!;
    expect(d).toMatchObject({ line: 1, idx: 3, turn: 1, messageIndex: 3, role: "assistant", field: "generation_logprobs[1]" });
    expect(d.delta!.tolerance).toBe(1e-4);
    expect(d.delta!.value).toBeCloseTo(0.000999, 9);
    expect(describeDivergence(d)).toMatch(/^sample idx 3, turn 1, message 3 \(assistant\), generation_logprobs\[1\] \|Δ\| 0\.0009\d+ > tolerance 0\.0001$/);
    const report = compareScenario("s", { samplesJsonl: run, metrics: {} }, { samplesJsonl: golden, metrics: {} }, {}, tolerant);
    expect(report.status).toBe("regressed");
    expect(renderTextReport([report])).toMatch(/^REGRESSED +s: sample idx 3, turn 1, .*generation_logprobs\[1\]/m);
  });

  it("fails a different number of logprobs", () => {
    const run = toJsonl([modelSample(0, [[-0.5]]), modelSample(3, [[-0.1, -0.2], [-1.5, -2.000001]])]);
    expect(compareTranscripts(run, golden, tolerant)).toMatchObject({ idx: 0, turn: 0, field: "generation_logprobs" });
  });

  it("always fails a token, text, reward or termination difference", () => {
    const base = modelSample(0, [[-0.5, -1.25]]);
    const tokens = structuredClone(base);
    tokens.message_log[1]!.token_ids = [97, 49];
    expect(compareTranscripts(toJsonl([tokens]), toJsonl([base]), { logprobTolerance: 1 })).toMatchObject({ idx: 0, turn: 0, field: "token_ids" });
    const text = structuredClone(base);
    text.message_log[1]!.content = "a1";
    expect(compareTranscripts(toJsonl([text]), toJsonl([base]), { logprobTolerance: 1 })).toMatchObject({ field: "content" });
    expect(compareTranscripts(toJsonl([{ ...base, total_reward: 0.99999 }]), toJsonl([base]), tolerant)).toMatchObject({ field: "total_reward" });
    expect(compareTranscripts(toJsonl([{ ...base, termination: "truncated" }]), toJsonl([base]), tolerant)).toMatchObject({ field: "termination" });
  });

  it("keeps metrics to the suite's tolerances", () => {
    const samplesJsonl = toJsonl([modelSample(0, [[-0.5]])]);
    const run = { samplesJsonl, metrics: { m: 1.00001 } };
    expect(compareScenario("s", run, { samplesJsonl, metrics: { m: 1 } }, {}, tolerant).status).toBe("regressed");
    expect(compareScenario("s", run, { samplesJsonl, metrics: { m: 1 } }, { m: 1e-4 }, tolerant).status).toBe("ok");
  });

  it("reports a skipped scenario with its reason, neither passing nor failing the suite", () => {
    const text = renderTextReport([skippedScenario("r", "replay policy: it reads a file")]);
    expect(text).toMatch(/^skipped +r: replay policy: it reads a file$/m);
    expect(text).toContain("all 0 scenarios match their goldens (1 skipped)");
  });
});
