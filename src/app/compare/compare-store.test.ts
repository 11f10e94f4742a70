import { beforeEach, describe, expect, it } from "vitest";
import { exportJsonl, readJsonl } from "../run/jsonl.js";
import { RunModel } from "../run/run-model.js";
import { resolveSource, useCompare } from "./compare-store.js";

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

const initial = useCompare.getState();
beforeEach(() => useCompare.setState({ ...initial, files: [], savedModels: {} }, true));

describe("the comparison's sides", () => {
  it("follow the selection (A the selected sample, B the next) until the user picks one", () => {
    const { follow, setSide } = useCompare.getState();
    follow(2, 4);
    expect(useCompare.getState()).toMatchObject({ a: { source: "current", sample: 2 }, b: { source: "current", sample: 3 } });
    follow(3, 4);
    expect(useCompare.getState().b.sample).toBe(0);
    follow(0, 1);
    expect(useCompare.getState()).toMatchObject({ a: { sample: 0 }, b: { sample: 0 } });
    setSide("b", { source: "current", sample: 5 });
    follow(1, 8);
    expect(useCompare.getState()).toMatchObject({ auto: false, a: { sample: 0 }, b: { sample: 5 } });
  });

  it("a JSONL file becomes a source on side B; a bad file is reported, not added", () => {
    const { addFile } = useCompare.getState();
    addFile("bad.jsonl", "not json\n");
    expect(useCompare.getState().files).toHaveLength(0);
    expect(useCompare.getState().message).toMatch(/^could not read bad\.jsonl: line 1: not valid JSON/);
    addFile("run.jsonl", exportJsonl(model(2), null));
    const state = useCompare.getState();
    expect(state.files).toHaveLength(1);
    expect(state.b.source).toBe(`file:${state.files[0]!.id}`);
    expect(state.message).toBe("added run.jsonl: 2 samples");
    const loaded = resolveSource(state.b.source, null, state);
    expect("model" in loaded && loaded.model.samples.map((s) => s.messages[0]!.content)).toEqual(["p0", "p1"]);
  });

  it("a streamed file's valid lines (the user chose to import them) become a source; one with no sample is reported", async () => {
    const { addRead } = useCompare.getState();
    const text = exportJsonl(model(3), null).replace(/^(?:[^\n]*\n){1}/, "oops\n");
    const read = await readJsonl(new Blob([text]));
    expect(read.problemCount).toBe(1);
    addRead("part.jsonl", read, read.badLines);
    const state = useCompare.getState();
    expect(state.message).toBe("added part.jsonl: 2 samples (1 line with problems left out)");
    const loaded = resolveSource(state.b.source, null, state);
    expect("model" in loaded && loaded.model.samples.map((s) => s.messages[0]!.content)).toEqual(["p1", "p2"]);
    addRead("none.jsonl", await readJsonl(new Blob(["nope\n"])), 1);
    expect(useCompare.getState().message).toBe("could not read none.jsonl: no sample lines (objects with a message_log)");
    expect(useCompare.getState().files).toHaveLength(1);
  });

  it("resolves the current run, saved runs being loaded and unknown sources", () => {
    const current = model(1);
    const state = useCompare.getState();
    expect(resolveSource("current", current, state)).toEqual({ model: current });
    expect(resolveSource("current", null, state)).toEqual({ error: "no current run" });
    expect(resolveSource("saved:x", null, state)).toEqual({ loading: true });
    expect(resolveSource("saved:x", null, { ...state, savedModels: { x: { error: "gone" } } })).toEqual({ error: "gone" });
    expect(resolveSource("file:9", null, state)).toEqual({ error: "this file is no longer loaded" });
  });
});
