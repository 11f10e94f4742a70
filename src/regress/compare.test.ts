import { describe, expect, it } from "vitest";
import {
  charDiff,
  compareMetrics,
  compareRepeats,
  compareScenario,
  compareTranscripts,
  DEFAULT_FLOAT_TOLERANCE,
  describeDivergence,
  firstDifference,
  skippedScenario,
  toJsonl,
} from "./compare.js";
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
    expect(compareTranscripts(toJsonl([tokens]), toJsonl([s]))).toMatchObject({ turn: 0, messageIndex: 1, field: "token_ids.length" });
  });

  it("reports a run that stops early, a missing sample and a sample-level key", () => {
    const s = sample(2, ["a0", "a1"]);
    const shorter = sample(2, ["a0"]);
    expect(compareTranscripts(toJsonl([shorter]), toJsonl([s]))).toMatchObject({ turn: 1, messageIndex: 3, field: "message missing from the run" });
    expect(compareTranscripts(toJsonl([s]), toJsonl([s, sample(4, [])]))).toMatchObject({ line: 1, idx: 4, field: "sample missing from the run" });
    const reward = { ...s, total_reward: 0 };
    expect(compareTranscripts(toJsonl([reward]), toJsonl([s]))).toMatchObject({ idx: 2, turn: null, field: "total_reward", runText: "0", goldenText: "1" });
  });

  it("matches the same values written in another key order or number spelling", () => {
    expect(compareTranscripts('{"b":1,"a":2.5}\n', '{"a":2.50,"b":1.0}\n')).toBeNull();
  });

  it("classes each divergence: text, tokens (with the token index), value, shape", () => {
    const s = sample(1, ["a0"]);
    const text = structuredClone(s);
    text.message_log[1]!.content = "b0";
    expect(compareTranscripts(toJsonl([text]), toJsonl([s]))).toMatchObject({ kind: "text", field: "content", tokenIndex: null });
    const tokens = structuredClone(s);
    tokens.message_log[1]!.token_ids = [97, 49];
    const t = compareTranscripts(toJsonl([tokens]), toJsonl([s]))!;
    expect(t).toMatchObject({ kind: "tokens", field: "token_ids[1]", tokenIndex: 1, runText: "49", goldenText: "48" });
    expect(describeDivergence(t)).toBe("tokens differ: sample idx 1, turn 0, message 1 (assistant), token 1, token_ids[1]: golden 48, run 49");
    const fewer = structuredClone(s);
    fewer.message_log[1]!.token_ids = [97];
    expect(compareTranscripts(toJsonl([fewer]), toJsonl([s]))).toMatchObject({ kind: "tokens", field: "token_ids.length", runText: "1", goldenText: "2" });
    expect(compareTranscripts(toJsonl([{ ...s, termination: "max_turns" }]), toJsonl([s]))).toMatchObject({ kind: "value", field: "termination" });
    expect(compareTranscripts(toJsonl([{ ...s, truncated: 0 }]), toJsonl([s]))).toMatchObject({ kind: "shape", field: "truncated" });
    const { termination: _, ...without } = s;
    expect(compareTranscripts(toJsonl([without]), toJsonl([s]))).toMatchObject({ kind: "shape", field: "termination", runText: "(absent)" });
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
  it("compares integer metrics exactly, float metrics within the default tolerance, and ignores timing/ keys", () => {
    expect(compareMetrics({ a: 1, "timing/x": 5 }, { a: 1, "timing/x": 9 })).toEqual([]);
    expect(compareMetrics({ count: 4 }, { count: 5 })).toMatchObject([{ key: "count", kind: "value", delta: 1 }]);
    expect(compareMetrics({ mean: 0.5 + 5e-4 }, { mean: 0.5 })).toEqual([]);
    expect(compareMetrics({ mean: 0 + 5e-4 }, { mean: 0 })).toEqual([]);
    expect(compareMetrics({ mean: 0.5 + 2e-3 }, { mean: 0.5 })).toMatchObject([{ key: "mean", kind: "float", tolerance: DEFAULT_FLOAT_TOLERANCE }]);
  });

  it("applies the suite's per-key absolute tolerance, inclusive, over the default", () => {
    expect(compareMetrics({ a: 1.05, b: 2 }, { a: 1, b: 2 }, { a: 0.1 })).toEqual([]);
    expect(compareMetrics({ a: 1.25 }, { a: 1 }, { a: 0.25 })).toEqual([]);
    const [delta] = compareMetrics({ a: 1.5, b: 2 }, { a: 1, b: 2 }, { a: 0.1 });
    expect(delta).toEqual({ key: "a", kind: "float", run: 1.5, golden: 1, delta: 0.5, tolerance: 0.1 });
    expect(compareMetrics({ a: 1 + 1e-12 }, { a: 1 }, { a: 0 })).toMatchObject([{ key: "a", tolerance: 0 }]);
  });

  it("reports keys present on one side only and non-numeric changes", () => {
    expect(compareMetrics({ a: 1, extra: 2 }, { a: 1, gone: 3 }).map((m) => m.key)).toEqual(["extra", "gone"]);
    expect(compareMetrics({ a: null }, { a: null })).toEqual([]);
    expect(compareMetrics({ a: "x" }, { a: "y" })).toMatchObject([{ key: "a", kind: "value", delta: null }]);
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

describe("floats within a tolerance, on every backend", () => {
  /** A model sample: each assistant message with its logprobs. */
  function modelSample(idx: number, logprobs: number[][]) {
    const s = sample(idx, logprobs.map((_, k) => `a${k}`));
    let k = 0;
    for (const m of s.message_log) if (m.role === "assistant") Object.assign(m, { generation_logprobs: logprobs[k++] });
    return s;
  }
  const golden = toJsonl([modelSample(0, [[-0.5, -1.25]]), modelSample(3, [[-0.1, -0.2], [-1.5, -2.000001]])]);

  it("passes logprobs within the default tolerance and reports how close they came", () => {
    const run = toJsonl([modelSample(0, [[-0.5005, -1.25]]), modelSample(3, [[-0.1, -0.2], [-1.50009, -2.0000012]])]);
    expect(compareTranscripts(run, golden)).toBeNull();
    const c = compareScenario("s", { samplesJsonl: run, metrics: {} }, { samplesJsonl: golden, metrics: {} });
    expect(c.status).toBe("ok");
    expect(c.drift.key).toBe("generation_logprobs");
    expect(c.drift.maxDelta).toBeCloseTo(5e-4, 9);
  });

  it("takes 0 against a tiny negative logprob as a float (a logprob is always one)", () => {
    expect(compareTranscripts(toJsonl([modelSample(0, [[-1e-7, -1.25]])]), toJsonl([modelSample(0, [[0, -1.25]])]))).toBeNull();
  });

  it("fails a logprob beyond the tolerance as a float, naming sample, turn, token index and both values", () => {
    const run = toJsonl([modelSample(0, [[-0.5, -1.25]]), modelSample(3, [[-0.1, -0.2], [-1.5, -2.01]])]);
    const d = compareTranscripts(run, golden)!;
    expect(d).toMatchObject({ kind: "float", line: 1, idx: 3, turn: 1, messageIndex: 3, role: "assistant", tokenIndex: 1, field: "generation_logprobs[1]" });
    expect(d.runText).toBe("-2.01");
    expect(d.goldenText).toBe("-2.000001");
    expect(d.delta!.tolerance).toBe(DEFAULT_FLOAT_TOLERANCE);
    expect(d.delta!.value).toBeCloseTo(0.009999, 9);
    expect(describeDivergence(d)).toBe(
      "float beyond tolerance: sample idx 3, turn 1, message 3 (assistant), token 1, generation_logprobs[1]: golden -2.000001, run -2.01 (|Δ| 0.01 > tolerance 0.001)",
    );
    const report = compareScenario("s", { samplesJsonl: run, metrics: {} }, { samplesJsonl: golden, metrics: {} });
    expect(report.status).toBe("regressed");
    expect(renderTextReport([report])).toMatch(/^REGRESSED +s: float beyond tolerance: sample idx 3, turn 1, .*token 1, generation_logprobs\[1\]/m);
  });

  it("takes the suite's generation_logprobs tolerance over the default", () => {
    const run = toJsonl([modelSample(0, [[-0.5, -1.25]]), modelSample(3, [[-0.1, -0.2], [-1.5, -2.01]])]);
    expect(compareTranscripts(run, golden, { generation_logprobs: 0.05 })).toBeNull();
    const tight = toJsonl([modelSample(0, [[-0.5 - 2e-6, -1.25]]), modelSample(3, [[-0.1, -0.2], [-1.5, -2.000001]])]);
    expect(compareTranscripts(tight, golden, { generation_logprobs: 1e-6 })).toMatchObject({ kind: "float", idx: 0, tokenIndex: 0 });
  });

  it("fails a different number of logprobs as a token difference", () => {
    const run = toJsonl([modelSample(0, [[-0.5]]), modelSample(3, [[-0.1, -0.2], [-1.5, -2.000001]])]);
    expect(compareTranscripts(run, golden)).toMatchObject({ kind: "tokens", idx: 0, turn: 0, field: "generation_logprobs.length" });
  });

  it("always fails a token, text or termination difference, whatever the tolerance", () => {
    const base = modelSample(0, [[-0.5, -1.25]]);
    const loose = { generation_logprobs: 1, token_ids: 1, content: 1, termination: 1 };
    const tokens = structuredClone(base);
    tokens.message_log[1]!.token_ids = [97, 49];
    expect(compareTranscripts(toJsonl([tokens]), toJsonl([base]), loose)).toMatchObject({ kind: "tokens", idx: 0, turn: 0, field: "token_ids[1]" });
    const text = structuredClone(base);
    text.message_log[1]!.content = "a1";
    expect(compareTranscripts(toJsonl([text]), toJsonl([base]), loose)).toMatchObject({ kind: "text", field: "content" });
    expect(compareTranscripts(toJsonl([{ ...base, termination: "truncated" }]), toJsonl([base]), loose)).toMatchObject({ kind: "value", field: "termination" });
  });

  it("compares a float reward within the tolerance and an integer one exactly", () => {
    const base = { ...modelSample(0, [[-0.5]]), total_reward: 0.75 };
    expect(compareTranscripts(toJsonl([{ ...base, total_reward: 0.7504 }]), toJsonl([base]))).toBeNull();
    expect(compareTranscripts(toJsonl([{ ...base, total_reward: 0.76 }]), toJsonl([base]))).toMatchObject({ kind: "float", field: "total_reward" });
    const whole = { ...base, total_reward: 1 };
    expect(compareTranscripts(toJsonl([{ ...base, total_reward: 0 }]), toJsonl([whole]))).toMatchObject({ kind: "value", field: "total_reward" });
  });

  it("compares nested environment state by the same rules, naming the path", () => {
    const base = { ...modelSample(0, [[-0.5]]), extra_env_info: { board: [[1, 2], [3, 0]], score: 0.25 } };
    const moved = structuredClone(base);
    moved.extra_env_info.board[1]![0] = 0;
    expect(compareTranscripts(toJsonl([moved]), toJsonl([base]))).toMatchObject({ kind: "value", field: "extra_env_info.board[1][0]" });
    const score = structuredClone(base);
    score.extra_env_info.score = 0.2504;
    expect(compareTranscripts(toJsonl([score]), toJsonl([base]))).toBeNull();
  });

  it("keeps metrics to the suite's tolerances", () => {
    const samplesJsonl = toJsonl([modelSample(0, [[-0.5]])]);
    const run = { samplesJsonl, metrics: { m: 1.01 } };
    expect(compareScenario("s", run, { samplesJsonl, metrics: { m: 1 } }).status).toBe("regressed");
    expect(compareScenario("s", run, { samplesJsonl, metrics: { m: 1 } }, { m: 0.02 }).status).toBe("ok");
  });

  it("reports a skipped scenario with its reason, neither passing nor failing the suite", () => {
    const text = renderTextReport([skippedScenario("r", "replay policy: it reads a file")]);
    expect(text).toMatch(/^skipped +r: replay policy: it reads a file$/m);
    expect(text).toContain("all 0 scenarios match their goldens (1 skipped)");
  });
});

describe("compareRepeats (--repeat)", () => {
  const run = (content: string, lp = -0.5) => ({ samplesJsonl: toJsonl([{ ...sample(0, [content]), lp }]), metrics: { m: 1 } });
  it("is null when every run matches the first, floats within the tolerance", () => {
    expect(compareRepeats([run("a"), run("a", -0.5004), run("a")])).toBeNull();
  });
  it("names the first run that differs from run 1 and where", () => {
    const found = compareRepeats([run("a"), run("a"), run("b"), run("c")])!;
    expect(found.run).toBe(3);
    expect(found.comparison.samples).toMatchObject({ kind: "text", idx: 0, turn: 0, field: "content" });
  });
});
