// The training–inference mismatch of imported NeMo RL samples (generation_logprobs against prev_logprobs on the
// trained tokens), on the fixture train_data_step3.jsonl (src/scenario/imports/fixtures/make_fixtures.py).

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { importJsonl } from "./jsonl.js";
import { runMismatch, sampleMismatch } from "./mismatch.js";
import { compileFilter } from "./sample-filter.js";

const dump = readFileSync(join(import.meta.dirname, "../../scenario/imports/fixtures/train_data_step3.jsonl"), "utf8");
const { model } = importJsonl(dump);
const imported = model.finalBatch!.imported!;

describe("training–inference mismatch", () => {
  it("per sample, over the trained tokens: mean and max |Δ|, the share over the threshold, the sequence ratio", () => {
    const a = sampleMismatch(model.samples[0]!, imported[0])!;
    expect(a.tokens).toBe(5);
    expect(a.meanAbs).toBeCloseTo(0.15, 12);
    expect([a.maxAbs, a.maxAt, a.overThreshold]).toEqual([0.5, 10, 0]);
    expect(a.sequenceRatio).toBeCloseTo(Math.exp(-0.75), 12);
    expect(a.deltas.map((d) => (d === null ? null : Math.round(d * 100) / 100))).toEqual([null, null, null, null, null, 0, -0.25, 0, null, null, -0.5, 0]);
    // The sample whose roles were inferred: its rows are kept whole, and compared the same way.
    const b = sampleMismatch(model.samples[1]!, imported[1])!;
    expect(b.tokens).toBe(3);
    expect(b.maxAbs).toBeCloseTo(0.05, 12);
  });

  it("per run, and as the filter's `mismatch` (a sample's mean |Δ|)", () => {
    const run = runMismatch(model.samples, imported)!;
    expect([run.samples, run.tokens, run.ratioOutliers]).toEqual([2, 8, 1]);
    expect(run.meanAbs).toBeCloseTo((0.75 + 0.05) / 8, 12);
    const compiled = compileFilter("mismatch > 0.1", { batch: model.finalBatch });
    if ("error" in compiled) throw new Error(compiled.error.message);
    expect(model.samples.filter((s) => compiled.test!(s)).map((s) => s.sample)).toEqual([0]);
  });

  it("nothing to compare without the trainer's log-probabilities", () => {
    expect(sampleMismatch(model.samples[0]!, { format: "verl", fields: { score: 1 } })).toBeNull();
    expect(runMismatch(model.samples, undefined)).toBeNull();
  });
});
