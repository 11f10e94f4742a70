import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { byteLevelTokenizer as tok, type Message, type RolloutEvent } from "../../core/index.js";
import { runScenario } from "../../scenario/run.js";
import { parseScenario } from "../../scenario/schema.js";
import { exportJsonl, importJsonl } from "../run/jsonl.js";
import { RunModel } from "../run/run-model.js";
import { compareSamples, firstChar, sideSample, type SideSample, type SideTurn } from "./align.js";
import { ComparisonBody } from "./CompareView.js";

const msg = (role: string, content: string, logprobs?: number[]): Message => ({
  role,
  content,
  token_ids: tok.encode(content),
  ...(logprobs ? { generation_logprobs: logprobs } : {}),
});

const turn = (assistant: string, observation: string, reward = 0, extra: Partial<SideTurn> = {}): SideTurn => ({
  assistant: msg("assistant", assistant),
  observation: msg("environment", observation),
  reward,
  rewardComponents: null,
  terminated: false,
  truncatedContext: false,
  responseTruncated: false,
  violations: [],
  ...extra,
});

const side = (turns: SideTurn[], extra: Partial<SideSample> = {}): SideSample => ({
  prompt: [msg("user", "Solve the puzzle")],
  turns,
  totalReward: turns.reduce((a, t) => a + (t.reward ?? 0), 0),
  termination: "terminated",
  error: null,
  done: true,
  ...extra,
});

describe("compareSamples", () => {
  it("identical samples: no divergence, every row the same", () => {
    const a = side([turn("move up", "ok"), turn("move left", "solved", 1, { terminated: true })]);
    const c = compareSamples(a, structuredClone(a));
    expect(c.first).toBeNull();
    expect(c.summary).toMatch(/^identical: 2 turns/);
    expect(c.rows.map((r) => r.turn)).toEqual([null, 0, 1]);
    expect(c.rows.every((r) => r.differences.length === 0)).toBe(true);
    expect(c.ending).toEqual([]);
  });

  it("marks the first turn whose assistant text differs, with its character and highlighted spans", () => {
    const a = side([turn("move up", "ok"), turn("move up", "ok"), turn("move left", "solved", 1, { terminated: true })]);
    const b = side([turn("move up", "ok"), turn("move up", "ok"), turn("move right", "wrong", 0)], { termination: "max_turns" });
    const c = compareSamples(a, b);
    expect(c.first).toMatchObject({ row: 3, turn: 2, where: "turn", field: "assistant text", detail: "char 5" });
    expect(c.summary).toMatch(/^first divergence at turn 2: assistant text \(char 5\)/);
    expect(c.summary).toContain("A terminated by the environment, total reward +1; B max turns reached, total reward 0");
    expect(c.rows.map((r) => r.differences.length > 0)).toEqual([false, false, false, true]);
    const fields = c.rows[3]!.differences.map((d) => d.field);
    expect(fields).toEqual(["assistant text", "observation text", "reward", "termination"]);
    expect(c.rows[3]!.differences.find((d) => d.field === "reward")!.detail).toBe("+1 vs 0");
    // The highlighted spans: "left" against "right" (the diff narrows to the differing characters).
    const assistant = c.rows[3]!.pairs.find((p) => p.kind === "assistant")!;
    const spans = assistant.diff!.hunks.map((h) => ["move left".slice(h.aStart, h.aEnd), "move right".slice(h.bStart, h.bEnd)]);
    expect(spans.map(([x]) => x).join("")).not.toBe("");
    expect(spans.every(([x, y]) => x !== y)).toBe(true);
    expect(c.first!.text).toMatchObject({ position: 5, a: { before: "move ", at: "l" }, b: { before: "move ", at: "r" } });
    expect(c.ending.map((d) => d.field)).toEqual(["ending", "total reward"]);
  });

  it("a difference in the prompt comes first", () => {
    const a = side([turn("x", "y")]);
    const b = side([turn("z", "y")], { prompt: [msg("user", "Solve the other puzzle")] });
    const c = compareSamples(a, b);
    expect(c.first).toMatchObject({ row: 0, turn: null, where: "prompt", field: "prompt text" });
    expect(c.summary).toMatch(/^first divergence at the prompt: prompt text/);
    expect(c.rows[0]!.pairs[0]!.firstChar!.position).toBe(10);
  });

  it("same text, other tokens; same tokens, other logprobs", () => {
    const a = side([turn("ab", "ok")]);
    const b = structuredClone(a);
    (b.turns[0] as SideTurn).assistant!.token_ids = [97, 98, 0];
    expect(compareSamples(a, b).first).toMatchObject({ turn: 0, field: "assistant tokens", detail: "token 2: end vs 0" });
    const la = side([{ ...turn("ab", "ok"), assistant: msg("assistant", "ab", [-0.5, -1]) }]);
    const lb = side([{ ...turn("ab", "ok"), assistant: msg("assistant", "ab", [-0.5, -1.25]) }]);
    expect(compareSamples(la, lb).first).toMatchObject({ field: "assistant logprobs", detail: "max |Δ| 0.250 at token 1" });
    expect(compareSamples(la, lb, { logprobTolerance: 0.3 }).first).toBeNull();
    // By default the regression runner's tolerance (1e-3): a re-run's last-digit differences are no divergence.
    const rerun = side([{ ...turn("ab", "ok"), assistant: msg("assistant", "ab", [-0.5 + 2e-6, -1 - 2e-6]) }]);
    expect(compareSamples(la, rerun).first).toBeNull();
    expect(compareSamples(la, rerun, { logprobTolerance: 0 }).first).toMatchObject({ field: "assistant logprobs" });
  });

  it("rewards, flags and violations of a turn; a turn only one side has; endings alone", () => {
    const a = side([turn("a", "o", 0.5)]);
    const b = side([turn("a", "o", 0.25, { truncatedContext: true, violations: [{ type: "malformed_tool_call", severity: 1, locus: "tool_call", detail: null }] })]);
    const c = compareSamples(a, b);
    expect(c.rows[1]!.differences.map((d) => d.field)).toEqual(["violations", "reward", "context truncated"]);
    expect(c.first!.field).toBe("violations");

    const longer = side([turn("a", "o"), turn("b", "p")]);
    const shorter = side([turn("a", "o")]);
    const d = compareSamples(longer, shorter);
    expect(d.first).toMatchObject({ turn: 1, field: "turn only in A" });
    expect(d.rows[2]!.b).toBeNull();

    const e = compareSamples(side([turn("a", "o")]), side([turn("a", "o")], { termination: "cancelled" }));
    expect(e.first).toMatchObject({ row: null, where: "ending", field: "ending" });
    expect(e.summary).toMatch(/^first divergence at the ending: ending/);
  });

  it("a live side: the turn under way has no messages yet", () => {
    const a = side([turn("a", "o"), turn("b", "p")]);
    const b = side([turn("a", "o"), { ...turn("", ""), assistant: null, observation: null, reward: null }], { done: false, termination: null });
    const c = compareSamples(a, b);
    expect(c.first).toMatchObject({ turn: 1, field: "assistant text", detail: "only in A" });
    expect(c.summary).toContain("(B still running)");
  });

  it("firstChar uses the regression runner's character diff, named by side", () => {
    expect(firstChar("same", "same")).toBeNull();
    expect(firstChar("abc", "abd")).toMatchObject({ position: 2, a: { at: "c" }, b: { at: "d" } });
    expect(firstChar("ab", "abc")).toMatchObject({ position: 2, a: { at: "" }, b: { at: "c" } });
  });
});

const CALC_PROMPT = "<|im_start|>user\nSolve: (3 + 5) * 2<|im_end|>\n<|im_start|>assistant\n";
const calcSample = {
  task_name: "calc",
  message_log: [{ role: "user", content: CALC_PROMPT }],
  extra_env_info: { problem: "(3 + 5) * 2", expected_final_answer: 16.0, max_steps: 4, current_step: 0 },
  stop_strings: ["<call: calculator>"],
};
const calcScenario = (responses: string[][]) => ({
  mode: "sync",
  max_seq_len: 1024,
  max_rollout_turns: 6,
  envs: { calc: { env: "calculator", config: {} } },
  samples: responses.map(() => calcSample),
  policy: { kind: "scripted", responses },
});

async function liveModel(source: unknown) {
  const model = new RunModel();
  const scenario = parseScenario(source);
  await runScenario(scenario, { onEvent: (e: RolloutEvent) => model.apply(e) });
  return { model, scenario };
}

describe("comparing samples of real runs", () => {
  const common = ["[3, 5, sum]<call: calculator>", "[8, 2, prod]<call: calculator>"];

  it("two samples of one run that part at turn 2; the same sample after export and import is identical", async () => {
    const { model, scenario } = await liveModel(calcScenario([[...common, "16"], [...common, "15"]]));
    const c = compareSamples(sideSample(model.samples[0]!), sideSample(model.samples[1]!));
    expect(c.first).toMatchObject({ turn: 2, field: "assistant text" });
    expect(c.summary).toMatch(/^first divergence at turn 2: assistant text/);
    expect(c.rows[3]!.differences.map((d) => d.field)).toContain("reward");

    const imported = importJsonl(exportJsonl(model, scenario)).model;
    for (const i of [0, 1]) {
      const same = compareSamples(sideSample(model.samples[i]!), sideSample(imported.samples[i]!));
      expect(same.first).toBeNull();
      expect(same.summary).toMatch(/^identical: 3 turns/);
    }
  });

  it("renders model and file text as text, never as HTML", async () => {
    const hostile = '<img src=x onerror="alert(1)"><script>alert(2)</script>';
    const { model } = await liveModel(calcScenario([[...common, `16 ${hostile}`], [...common, `15 ${hostile}`]]));
    const [a, b] = [model.samples[0]!, model.samples[1]!];
    const html = renderToStaticMarkup(createElement(ComparisonBody, { comparison: compareSamples(sideSample(a), sideSample(b)), aLabel: `A ${hostile}`, bLabel: "B", a, b }));
    expect(html).not.toContain("<img");
    expect(html).not.toContain("<script");
    expect(html).toContain("&lt;img src=x");
    expect(html).toContain('data-testid="compare-summary"');
    expect(html.match(/data-testid="compare-turn"/g)).toHaveLength(4);
    expect(html).toMatch(/data-turn="2" data-diverged="true" data-first="true"/);
    expect(html).toMatch(/data-turn="1" data-diverged="false"/);
    expect(html).toContain('data-testid="compare-mark"');
  });
});
