import { describe, expect, it } from "vitest";
import { compileFilter, sortableFields, type FilterContext } from "./sample-filter.js";
import type { SampleView } from "./run-model.js";

/** Samples as the run model holds them (only what the filter reads). */
function sample(n: number, extra: Partial<SampleView>): SampleView {
  return {
    sample: n,
    idx: n,
    task: "calc",
    state: "done",
    messages: [],
    promptMessages: 1,
    initialMetadata: null,
    turns: [],
    totalReward: 0,
    termination: "terminated",
    error: null,
    ...extra,
  } as SampleView;
}
const msg = (role: string, content: string, n = 2) => ({ role, content, token_ids: Array.from({ length: n }, (_, i) => i) });
const turn = {} as SampleView["turns"][number];

const samples = [
  sample(0, { totalReward: 1, turns: [turn, turn], messages: [msg("user", "2+2?"), msg("assistant", "4")] }),
  sample(1, { totalReward: 0, turns: [turn, turn, turn, turn], messages: [msg("user", "x"), msg("assistant", "Traceback (most recent call last)")] }),
  sample(2, { totalReward: 0.25, termination: "error", error: "KeyError: 'board'", task: "puzzle", turns: [turn] }),
];
const context: FilterContext = {
  batch: { advantage: [0.5, -0.5, 0], imported: [{ format: "verl", fields: { uid: "a", acc: true } }, { format: "verl", fields: { uid: "b", acc: false } }, null] },
  drift: (s) => (s.sample === 1 ? true : s.sample === 0 ? false : null),
};

function kept(text: string): number[] {
  const compiled = compileFilter(text, context);
  if ("error" in compiled) throw new Error(compiled.error.message);
  return samples.filter((s) => compiled.test?.(s) ?? true).map((s) => s.sample);
}
function error(text: string) {
  const compiled = compileFilter(text, context);
  if (!("error" in compiled)) throw new Error("expected an error");
  return [compiled.error.message, text.slice(compiled.error.start, compiled.error.end)];
}

describe("the filter expression", () => {
  it("compares the sample's fields, with and / or / not and parentheses", () => {
    expect(kept("reward < 0.5 and turns > 3")).toEqual([1]);
    expect(kept('termination == "error"')).toEqual([2]);
    expect(kept("reward >= 0.25 or not solved")).toEqual([0, 1, 2]);
    expect(kept("not (reward == 1 or task == 'puzzle')")).toEqual([1]);
    expect(kept("tokens == 4 and messages == 2")).toEqual([0, 1]);
    expect(kept("outcome == 'error'")).toEqual([2]);
    expect(kept("")).toEqual([0, 1, 2]);
  });

  it("matches text: words case-insensitively, or a /regex/", () => {
    expect(kept('text ~ "traceback"')).toEqual([1]);
    expect(kept("error ~ /KeyError: '\\w+'/")).toEqual([2]);
    expect(kept("text ~ /^2\\+2/m")).toEqual([0]);
  });

  it("reads the drift verdicts, the final batch's columns and imported fields (missing: not kept)", () => {
    expect(kept("drift")).toEqual([1]);
    expect(kept("not drift")).toEqual([0, 2]);
    expect(kept("advantage > 0")).toEqual([0]);
    expect(kept('imported.uid == "b"')).toEqual([1]);
    expect(kept("acc == true")).toEqual([0]);
    expect(kept('uid != "a"')).toEqual([1, 2]);
  });

  it("knows an imported field that only late samples have (a run's second file), for filters and for sorting", () => {
    const n = 1_500;
    const imported = Array.from({ length: n }, (_, i) => ({ format: "nemo-gym", fields: i >= 1_200 ? { judge: i % 2 ? "pass" : "fail", score: i } : { uid: `u${i}` } }));
    const many = Array.from({ length: n }, (_, i) => sample(i, { totalReward: 0 }));
    const late = compileFilter('imported.judge == "pass"', { batch: { imported } });
    if (!("test" in late) || !late.test) throw new Error("judge was not known");
    expect(many.filter(late.test)).toHaveLength(150);
    expect(sortableFields({ batch: { imported } })).toContain("imported.score");
  });

  it("an error names the offending part", () => {
    expect(error("rewrd < 1")).toEqual([expect.stringMatching(/^unknown field 'rewrd' \(fields: reward, turns, .*advantage, imported\.uid, imported\.acc\)$/), "rewrd"]);
    expect(error("reward < ")).toEqual(["the expression ends too soon: expected a field or a value", ""]);
    expect(error("reward < 'high'")).toEqual(["'<' compares numbers, not a text", "'high'"]);
    expect(error("text ~ 3")).toEqual(["'~' matches a text: give \"words\" or /regex/", "3"]);
    expect(error("(reward > 1")).toEqual(["expected ')'", ""]);
    expect(error("reward > 1 turns")).toEqual(["expected 'and', 'or' or the end, got 'turns'", "turns"]);
    expect(error('task == "calc')).toEqual(["a text that is not closed (no \")", '"calc']);
    expect(error("text ~ /(/")).toEqual([expect.stringMatching(/^not a regular expression/), "/(/"]);
    expect(error("reward # 1")).toEqual(["unexpected '#'", "#"]);
  });

  it("keeps exactly the rows the same condition written in code keeps, over 100,000 samples", () => {
    const many = Array.from({ length: 100_000 }, (_, i) => sample(i, { totalReward: (i % 10) / 10, turns: Array(i % 7).fill(turn) }));
    const compiled = compileFilter("reward < 0.5 and turns > 3", {});
    if ("error" in compiled) throw new Error(compiled.error.message);
    const shown = many.filter((s) => compiled.test!(s));
    expect(shown.length).toBe(many.filter((s) => s.totalReward < 0.5 && s.turns.length > 3).length);
  });
});
