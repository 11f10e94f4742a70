import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cutShortRun, cutShortScenario } from "./cut-short-run.fixture.js";
import { exportJsonlInSlices, writeJsonInSlices } from "./export-slices.js";
import { markInterrupted, runProgress } from "./interrupted.js";

const write = async (value: unknown) => {
  const out: string[] = [];
  let ticks = 0;
  await writeJsonInSlices(value, out, async () => void (ticks += 1));
  return { text: out.join(""), ticks };
};

describe("writeJsonInSlices", () => {
  it("writes what JSON.stringify writes, for any JSON value (property)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (value) => {
        expect((await write(value)).text).toBe(JSON.stringify(value));
      }),
    );
  });

  it("leaves out and nulls what JSON.stringify does, and defers to toJSON", async () => {
    const value = { a: undefined, b: () => 1, c: [undefined, () => 1, Symbol("s"), NaN], d: new Date(0), e: { toJSON: () => "x" }, "k\"ey": 1 };
    expect((await write(value)).text).toBe(JSON.stringify(value));
  });

  it("can yield after every element of a big value (a long script's scenario)", async () => {
    const scenario = { policy: { kind: "scripted", responses: Array.from({ length: 50 }, (_, i) => Array.from({ length: 20 }, (_, t) => `r${i}.${t}`)) } };
    const { text, ticks } = await write(scenario);
    expect(text).toBe(JSON.stringify(scenario));
    expect(ticks).toBeGreaterThan(1000);
  });
});

describe("exportJsonlInSlices", () => {
  it("says how many samples had finished as their lines were written, not how many have by the end: a checkpoint's summary says what its text says", async () => {
    // Sample 0 finished, 1 and 2 under way; sample 1 ends between two slices, after its line was written.
    const model = await cutShortRun(cutShortScenario(3));
    let yields = 0;
    const endSampleOne = async () => {
      yields += 1;
      if (yields !== 2) return;
      const s = model.samples[1]!;
      model.apply({ type: "sample_end", t: model.summary.lastT, sample: s.sample, idx: s.idx, termination: "terminated", error: null, totalReward: s.totalReward, turns: 1 });
    };
    const { blob, progress } = await exportJsonlInSlices(model, null, { sliceMs: 0, yieldToPage: endSampleOne });
    expect(runProgress(model)).toEqual({ finished: 2, total: 3 });
    expect(progress).toEqual({ finished: 1, total: 3 });
    expect(markInterrupted(await blob.text()).progress).toEqual(progress);
  });
});
