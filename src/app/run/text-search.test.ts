import { describe, expect, it } from "vitest";
import { hitSnippet, matchRanges, parseSearch, searchRun } from "./text-search.js";
import type { SampleView } from "./run-model.js";

const msg = (role: string, content: string) => ({ role, content, token_ids: [] });
function sample(n: number, messages: ReturnType<typeof msg>[], turns: Array<{ assistantIndex: number; observationIndex: number | null }> = []): SampleView {
  return { sample: n, idx: n, task: "t", state: "done", messages, promptMessages: 1, initialMetadata: null, turns, totalReward: 0, termination: "terminated", error: null } as unknown as SampleView;
}

const samples = [
  sample(0, [msg("user", "Move the Tile left"), msg("assistant", "I move the tile."), msg("environment", "tile moved")], [{ assistantIndex: 1, observationIndex: 2 }]),
  sample(1, [msg("user", "2+2?"), msg("assistant", "4")], [{ assistantIndex: 1, observationIndex: null }]),
  sample(2, [msg("user", "no match here"), msg("assistant", "Traceback: KeyError 'tile'")], [{ assistantIndex: 1, observationIndex: null }]),
];

describe("searchRun", () => {
  it("finds words case-insensitively, one hit per message, with its turn and role", () => {
    const r = searchRun(samples, "TILE");
    expect(r.total).toBe(4);
    expect(r.samples).toBe(2);
    expect(r.hits.map((h) => [h.sample, h.message, h.turn, h.role])).toEqual([
      [0, 0, null, "user"],
      [0, 1, 0, "assistant"],
      [0, 2, 0, "environment"],
      [2, 1, 0, "assistant"],
    ]);
    expect(r.hits[0]).toMatchObject({ start: 9, end: 13 });
  });

  it("reads /regex/ with flags and reports a bad one", () => {
    expect(searchRun(samples, "/^\\d$/").hits.map((h) => h.sample)).toEqual([1]);
    expect(searchRun(samples, "/tile/").total).toBe(3); // case-sensitive without i
    expect(searchRun(samples, "/tile/i").total).toBe(4);
    expect(searchRun(samples, "/(/").error).toMatch(/not a regular expression/);
  });

  it("counts past the limit and keeps only the first hits", () => {
    const r = searchRun(samples, "tile", 2);
    expect(r.hits).toHaveLength(2);
    expect(r.total).toBe(4);
  });

  it("searches nothing for an empty box", () => {
    expect(searchRun(samples, "  ")).toEqual({ hits: [], total: 0, samples: 0, error: null });
  });
});

describe("matchRanges and hitSnippet", () => {
  it("marks every match, skipping empty regex matches", () => {
    expect(matchRanges("a tile, a TILE", parseSearch("tile") as { needle: string })).toEqual([
      [2, 6],
      [10, 14],
    ]);
    expect(matchRanges("xx y x", parseSearch("/x*/") as { regex: RegExp })).toEqual([
      [0, 2],
      [5, 6],
    ]);
  });

  it("cuts a snippet around the match", () => {
    const text = "a".repeat(100) + "NEEDLE" + "b".repeat(100);
    const s = hitSnippet(text, { start: 100, end: 106 }, 5);
    expect(s).toEqual({ before: "…aaaaa", match: "NEEDLE", after: "bbbbb…" });
  });
});
