import { beforeEach, describe, expect, it } from "vitest";
import { createStore } from "zustand/vanilla";
import { exportJsonl, readJsonl } from "../run/jsonl.js";
import { RunModel } from "../run/run-model.js";
import { sliceSetter } from "../state/slice.js";
import { comparedSides, createCompareSlice, resolveSource, type CompareSlice } from "./compare-slice.js";

function model(samples: number): RunModel {
  const m = new RunModel();
  m.apply({
    type: "rollout_start",
    t: 0,
    mode: "sync",
    maxRolloutTurns: 2,
    maxSeqLen: 100,
    samples: Array.from({ length: samples }, (_, i) => ({ sample: i, idx: i, task_name: "t", message_log: [{ role: "user", content: `p${i}`, token_ids: [] }], extra_env_info: null })),
  });
  return m;
}

/** The slice in a store of its own, following a selection the test moves. */
let followed = { selected: 0, samples: 0 };
let store = createStore<{ compare: CompareSlice }>()(() => ({}) as { compare: CompareSlice });
const compare = () => store.getState().compare;
const sides = () => comparedSides(compare(), followed);
beforeEach(() => {
  followed = { selected: 0, samples: 0 };
  store = createStore<{ compare: CompareSlice }>()((set, get) => ({ compare: createCompareSlice(sliceSetter(set, "compare"), () => get().compare, () => followed) }));
});

describe("the comparison's sides", () => {
  it("follow the selection (A the selected sample, B the next) until the user picks one", () => {
    followed = { selected: 2, samples: 4 };
    expect(sides()).toMatchObject({ a: { source: "current", sample: 2 }, b: { source: "current", sample: 3 } });
    followed = { selected: 3, samples: 4 };
    expect(sides().b.sample).toBe(0);
    followed = { selected: 0, samples: 1 };
    expect(sides()).toMatchObject({ a: { sample: 0 }, b: { sample: 0 } });
    compare().setSide("b", { source: "current", sample: 5 });
    followed = { selected: 1, samples: 8 };
    expect(compare().auto).toBe(false);
    expect(sides()).toMatchObject({ a: { sample: 0 }, b: { sample: 5 } });
    // Swapping swaps what was shown.
    compare().swap();
    expect(sides()).toMatchObject({ a: { sample: 5 }, b: { sample: 0 } });
  });

  it("a JSONL file becomes a source on side B; a bad file is reported, not added", () => {
    const { addFile } = compare();
    addFile("bad.jsonl", "not json\n");
    expect(compare().files).toHaveLength(0);
    expect(compare().message).toMatch(/^could not read bad\.jsonl: line 1: not valid JSON/);
    addFile("run.jsonl", exportJsonl(model(2), null));
    const state = compare();
    expect(state.files).toHaveLength(1);
    expect(state.b.source).toBe(`file:${state.files[0]!.id}`);
    expect(state.message).toBe("added run.jsonl: 2 samples");
    const loaded = resolveSource(state.b.source, null, state);
    expect("model" in loaded && loaded.model.samples.map((s) => s.messages[0]!.content)).toEqual(["p0", "p1"]);
  });

  it("a streamed file's valid lines (the user chose to import them) become a source; one with no sample is reported", async () => {
    const { addRead } = compare();
    const text = exportJsonl(model(3), null).replace(/^(?:[^\n]*\n){1}/, "oops\n");
    const read = await readJsonl(new Blob([text]));
    expect(read.problemCount).toBe(1);
    addRead("part.jsonl", read, read.badLines);
    const state = compare();
    expect(state.message).toBe("added part.jsonl: 2 samples (1 line with problems left out)");
    const loaded = resolveSource(state.b.source, null, state);
    expect("model" in loaded && loaded.model.samples.map((s) => s.messages[0]!.content)).toEqual(["p1", "p2"]);
    addRead("none.jsonl", await readJsonl(new Blob(["nope\n"])), 1);
    expect(compare().message).toBe("could not read none.jsonl: no sample lines (objects with a message_log)");
    expect(compare().files).toHaveLength(1);
  });

  it("resolves the current run, saved runs being loaded and unknown sources", () => {
    const current = model(1);
    const state = compare();
    expect(resolveSource("current", current, state)).toEqual({ model: current });
    expect(resolveSource("current", null, state)).toEqual({ error: "no current run" });
    expect(resolveSource("saved:x", null, state)).toEqual({ loading: true });
    expect(resolveSource("saved:x", null, { ...state, savedModels: { x: { error: "gone" } } })).toEqual({ error: "gone" });
    expect(resolveSource("file:9", null, state)).toEqual({ error: "this file is no longer loaded" });
  });
});
