/**
 * A run read from several files (its steps) in the page (`readFilesOffThread`, here on the reader's own thread: Node
 * has no Worker) and on the command line alike (./steps.ts): samples numbered in file order, each keeping its file
 * and own idx, the step from NeMo RL's file name, problems named with their file; and the step selector's steps.
 */

import { describe, expect, it } from "vitest";
import { readFilesOffThread } from "../../app/run/jsonl-offthread.js";
import { runSteps } from "../../app/run/run-steps.js";
import { formatProblem, type SampleLine } from "../jsonl-reader.js";
import { fixture, imported } from "./read-dump.fixture.js";

const step3 = fixture("train_data_step3.jsonl");
const file = (name: string, text: string) => new File([text], name, { type: "application/x-ndjson" });

describe("several files of one run", () => {
  it("are numbered in order, each sample keeping its file, its own idx and its step; the samples handed on are numbered already", async () => {
    const handed: SampleLine[] = [];
    const read = await readFilesOffThread([file("train_data_step3.jsonl", step3), file("train_data_step4.jsonl", step3)], { onSamples: (s) => handed.push(...s.map((x) => ({ ...x }))) });
    expect(read.samples.map((s) => s.idx)).toEqual([0, 1, 2, 3]);
    expect(handed.map((s) => s.idx)).toEqual([0, 1, 2, 3]);
    expect(read.samples.map((s) => imported(s).fields.source)).toEqual([
      { file: "train_data_step3.jsonl", idx: 0 },
      { file: "train_data_step3.jsonl", idx: 1 },
      { file: "train_data_step4.jsonl", idx: 0 },
      { file: "train_data_step4.jsonl", idx: 1 },
    ]);
    expect(read.samples.map((s) => imported(s).fields.step)).toEqual([3, 3, 4, 4]);
    expect(read.validLines).toBe(4);
    expect(read.footer).toBeNull();
  });

  it("name their problems with their file", async () => {
    const read = await readFilesOffThread([file("train_data_step3.jsonl", step3), file("train_data_step4.jsonl", `${step3.split("\n")[0]}\n{"content": 3, "rewards": [1]}\n`)]);
    expect(read.samples).toHaveLength(3);
    expect(read.badLines).toBe(1);
    expect(read.problems.map(formatProblem)).toEqual([expect.stringMatching(/^train_data_step4\.jsonl line 2: content: expected/)]);
  });

  it("one file is read as before: its own numbering, no source", async () => {
    const read = await readFilesOffThread([file("train_data_step3.jsonl", step3)]);
    expect(read.samples.map((s) => s.idx)).toEqual([0, 1]);
    expect(imported(read.samples[0]!).fields.source).toBeUndefined();
  });
});

describe("the step selector's steps", () => {
  const entry = (fields: Record<string, unknown>) => ({ format: "x", fields });
  it("are the samples' steps where there are two or more, in order, with their counts and filter expressions", () => {
    expect(runSteps([entry({ step: 10 }), entry({ step: 2 }), entry({ step: 10 })])).toEqual({
      by: "step",
      steps: [
        { label: "2", samples: 1, expression: "step == 2" },
        { label: "10", samples: 2, expression: "step == 10" },
      ],
    });
  });
  it("else the files of a run of several files; none for one step of one file", () => {
    const a = entry({ source: { file: 'a "b".jsonl', idx: 0 } });
    const b = entry({ source: { file: "c.jsonl", idx: 0 } });
    expect(runSteps([a, b])?.steps.map((s) => s.expression)).toEqual(['file == "a \\"b\\".jsonl"', 'file == "c.jsonl"']);
    expect(runSteps([entry({ step: 3 }), entry({ step: 3 })])).toBeNull();
    expect(runSteps(null)).toBeNull();
  });
});
