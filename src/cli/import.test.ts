// `rollout-lab import` (issue 19): dumps of other libraries to the lab's JSONL export, in-process.

import { mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { importJsonl } from "../app/run/jsonl.js";
import { main } from "./import.js";

const fixtures = join(import.meta.dirname, "../scenario/imports/fixtures");

async function run(argv: string[]) {
  let stderr = "";
  vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => ((stderr += String(chunk)), true));
  const code = await main(argv);
  return { code, stderr };
}
afterEach(() => vi.restoreAllMocks());

describe("rollout-lab import", () => {
  it("a run's steps (train and val data) become one lab export: samples numbered in order, each keeping its file and idx", async () => {
    const dir = await mkdtemp(join(tmpdir(), "import-cli-"));
    const out = join(dir, "run.jsonl");
    const { code, stderr } = await run([join(fixtures, "train_data_step3.jsonl"), join(fixtures, "val_data_step3.jsonl"), "--out", out]);
    expect(stderr).toBe(`wrote 4 samples to ${out}\n`);
    expect(code).toBe(0);
    const { model } = importJsonl(await readFile(out, "utf8"));
    expect(model.samples.map((s) => [s.idx, s.task, s.totalReward])).toEqual([
      [0, "math_agent", 1],
      [1, "math_agent", 0],
      [2, "nemo_rl", 1],
      [3, "nemo_rl", 0],
    ]);
    expect(model.samples[0]!.messages.map((m) => m.role)).toEqual(["user", "assistant", "environment", "assistant"]);
    const imported = model.finalBatch!.imported as { format: string; fields: Record<string, unknown> }[];
    expect(imported[2]!.fields.source).toEqual({ file: "val_data_step3.jsonl", idx: 0 });
    expect(imported[0]!.fields.prev_logprobs).toHaveLength(12);
  });

  it("a verl dump with a broken line: the others written, the line named, exit 1; no sample at all: exit 1", async () => {
    const dir = await mkdtemp(join(tmpdir(), "import-cli-"));
    const dump = join(dir, "7.jsonl");
    const lines = (await readFile(join(fixtures, "5.jsonl"), "utf8")).trim().split("\n");
    await writeFile(dump, `${lines[0]}\n{"input": 3, "output": "x", "score": 1}\n${lines[1]}\n`);
    const out = join(dir, "run.jsonl");
    const partly = await run([dump, "--out", out]);
    expect(partly.code).toBe(1);
    expect(partly.stderr).toContain(`${dump}: line 2: input: expected the decoded prompt (a string), as verl's _dump_generations writes it (verl)`);
    expect(importJsonl(await readFile(out, "utf8")).model.samples).toHaveLength(2);

    const unknown = join(dir, "other.jsonl");
    await writeFile(unknown, '{"question": "q", "answer": "a"}\n');
    const none = await run([unknown, "--out", join(dir, "none.jsonl")]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("not a run the lab reads (its keys: question, answer)");
    expect(none.stderr).toContain("error: no sample could be read");
  });

  it("a TRL completions_{step}.parquet (found by its PAR1 magic): its rows as samples; a broken Parquet file: exit 1", async () => {
    const dir = await mkdtemp(join(tmpdir(), "import-cli-"));
    const out = join(dir, "run.jsonl");
    const { code, stderr } = await run([join(fixtures, "completions_00010.parquet"), "--out", out]);
    expect([code, stderr]).toEqual([0, `wrote 4 samples to ${out}\n`]);
    const { model } = importJsonl(await readFile(out, "utf8"));
    expect(model.samples.map((s) => [s.idx, s.task, s.totalReward])).toEqual([
      [0, "trl", 2],
      [1, "trl", 0],
      [2, "trl", 2],
      [3, "trl", 1],
    ]);
    expect(model.samples[0]!.messages.map((m) => [m.role, m.content])).toEqual([
      ["user", "Solve: what is 2+2? Put the answer in \\boxed{}."],
      ["assistant", "<think>2 plus 2.</think> The answer is \\boxed{4}."],
    ]);
    const imported = model.finalBatch!.imported as { format: string; fields: Record<string, unknown> }[];
    expect(imported[3]).toEqual({ format: "trl", fields: { step: 10, accuracy_reward: 1, format_reward: null, parsed_answer: "15", advantage: 0 } });

    const broken = join(dir, "completions_00011.parquet");
    const bytes = await readFile(join(fixtures, "completions_00010.parquet"));
    await writeFile(broken, bytes.subarray(0, 40));
    const bad = await run([broken, "--out", join(dir, "bad.jsonl")]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(`error: cannot read ${broken}: not a readable Parquet file`);
  });

  it("an --out that cannot be written: exit 2 naming it, and a file that was there is left as it was", async () => {
    const dir = await mkdtemp(join(tmpdir(), "import-cli-"));
    const folder = await run([join(fixtures, "train_data_step3.jsonl"), "--out", dir]);
    expect(folder.code).toBe(2);
    expect(folder.stderr).toMatch(new RegExp(`^error: cannot write ${dir}: EISDIR`));
    const missing = await run([join(fixtures, "train_data_step3.jsonl"), "--out", join(dir, "no-such-folder", "x.jsonl")]);
    expect([missing.code, missing.stderr.startsWith(`error: cannot write ${join(dir, "no-such-folder", "x.jsonl")}: ENOENT`)]).toEqual([2, true]);
    expect(await readdir(dir)).toEqual([]);
  });

  it("bad usage: exit 2 with the usage", async () => {
    expect((await run([join(fixtures, "5.jsonl")])).stderr).toContain("--out is needed");
    const bad = await run([join(fixtures, "5.jsonl"), "--format", "csv", "--out", "x"]);
    expect([bad.code, bad.stderr.includes("--format needs one of auto, lab, nemo-rl, verl")]).toEqual([2, true]);
  });
});
