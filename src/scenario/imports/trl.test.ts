// TRL's completions_{step}.parquet (GRPOTrainer.log with log_completions): the fixture (fixtures/make_trl_fixture.ts
// says which upstream columns it follows) read through hyparquet into the lab's checker, every column mapped or kept,
// the total reward, bad rows named by their row, and the format found from the first row.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { asyncBufferFromFile } from "hyparquet";
import { describe, expect, it } from "vitest";
import { JsonlAccumulator, formatProblem } from "../jsonl-reader.js";
import { detectFormat } from "./index.js";
import { blobAsyncBuffer, isParquet, readParquetInto, toJsonValue } from "./parquet.js";
import { FIXTURES, imported } from "./read-dump.fixture.js";

const FILE = join(FIXTURES, "completions_00010.parquet");

async function readFixture(options: { format?: string } = {}) {
  const acc = new JsonlAccumulator({ ...options, fileName: "completions_00010.parquet" });
  const groups: number[] = [];
  await readParquetInto(await asyncBufferFromFile(FILE), acc, (p) => void groups.push(p.rowsRead));
  return { read: acc.end(), groups };
}

/** Rows as hyparquet would give them, through the same checker. */
function readRows(rows: Record<string, unknown>[], format?: string) {
  const acc = new JsonlAccumulator(format ? { format } : {});
  rows.forEach((r, i) => acc.pushRecord(toJsonValue(r) as Record<string, unknown>, i + 1));
  return acc.end();
}

const row = (extra: Record<string, unknown> = {}) => ({ step: 3n, prompt: "p", completion: "c", accuracy_reward: 1, advantage: 0.5, ...extra });

describe("TRL completions_{step}.parquet (GRPOTrainer.log, log_completions)", () => {
  it("is Parquet (PAR1) and is found from its first row; read a row group at a time, without problems", async () => {
    expect(isParquet(new Uint8Array(readFileSync(FILE)).subarray(0, 4))).toBe(true);
    expect(isParquet(new TextEncoder().encode('{"a":1}'))).toBe(false);
    const { read, groups } = await readFixture();
    expect(groups).toEqual([2, 4]);
    expect(read.problems).toEqual([]);
    expect([read.validLines, read.linesRead, read.bytesRead]).toEqual([4, 4, readFileSync(FILE).length]);
    // The reward: the reward functions' columns summed (nansum: the null format_reward of row 4 adds nothing).
    expect(read.samples.map((s) => [s.idx, s.task_name, s.total_reward, s.termination])).toEqual([
      [0, "trl", 2, null],
      [1, "trl", 0, null],
      [2, "trl", 2, null],
      [3, "trl", 1, null],
    ]);
  });

  it("prompt → user, completion → assistant, no token ids; every other column kept (step as a number, not a BigInt)", async () => {
    const { read } = await readFixture();
    const [s] = read.samples;
    expect(s!.message_log).toEqual([
      { role: "user", content: "Solve: what is 2+2? Put the answer in \\boxed{}.", token_ids: [] },
      { role: "assistant", content: "<think>2 plus 2.</think> The answer is \\boxed{4}.", token_ids: [] },
    ]);
    expect(imported(s!)).toEqual({ format: "trl", fields: { step: 10, accuracy_reward: 1, format_reward: 1, parsed_answer: "4", advantage: 0.7071 } });
    expect(imported(read.samples[3]!).fields.format_reward).toBeNull();
    expect(JSON.parse(JSON.stringify(read.samples))).toEqual(read.samples);
  });

  it("the same rows named as trl read the same; named as another format, their problems name the row", async () => {
    expect((await readFixture({ format: "trl" })).read.samples).toEqual((await readFixture()).read.samples);
    const { read } = await readFixture({ format: "verl" });
    expect(read.samples).toEqual([]);
    expect(formatProblem(read.problems[0]!)).toBe("line 1: input: expected the decoded prompt (a string), as verl's _dump_generations writes it (verl)");
  });

  it("a conversational prompt and completion (older TRL): the messages with their roles", () => {
    const prompt = [
      { role: "system", content: "Be brief." },
      { role: "user", content: "2+2?" },
    ];
    const read = readRows([row({ prompt, completion: [{ role: "assistant", content: "4" }] })]);
    expect(read.problems).toEqual([]);
    expect(read.samples[0]!.message_log.map((m) => [m.role, m.content])).toEqual([
      ["system", "Be brief."],
      ["user", "2+2?"],
      ["assistant", "4"],
    ]);
  });

  it("a `reward` column is the total where there is one; NaN rewards skipped; no reward column: no reward", () => {
    const read = readRows([row({ reward: 0.25, format_reward: 1 }), row({ accuracy_reward: Number.NaN, format_reward: 0.5 }), { step: 1, prompt: "p", completion: "c", note: "x" }]);
    expect(read.samples.map((s) => s.total_reward)).toEqual([0.25, 0.5, null]);
    expect(imported(read.samples[1]!).fields.accuracy_reward).toBeNull();
    expect(imported(read.samples[2]!).fields).toEqual({ step: 1, note: "x" });
  });

  it("a row of the wrong type: a problem naming its row and column; the other rows read", () => {
    const read = readRows([row(), row({ completion: 7 }), row({ advantage: "high" }), row({ prompt: [{ content: "no role" }] }), row({ step: 1.5 })]);
    expect(read.samples).toHaveLength(1);
    expect(read.problems.map(formatProblem)).toEqual([
      "line 2: completion: expected the decoded completion (a string) or a list of chat messages, as GRPOTrainer logs it (trl)",
      "line 3: advantage: expected the completion's advantage (a number) (trl)",
      "line 4: prompt[0]: expected a chat message ({role, content}) (trl)",
      "line 5: step: expected the trainer's global step (an integer) (trl)",
    ]);
  });

  it("auto-detect: prompt + completion + step, not verifiers' RolloutOutput nor a lab line; others' shapes untouched", () => {
    expect(detectFormat({ step: 1, prompt: "p", completion: "c" })?.name).toBe("trl");
    expect(detectFormat({ step: 1, prompt: [{ role: "user", content: "p" }], completion: [] })?.name).toBe("trl");
    expect(detectFormat({ example_id: 0, prompt: [], completion: [], is_completed: true, step: 1 })?.name).toBe("verifiers");
    expect(detectFormat({ prompt: "p", completion: "c" })).toBeNull();
    expect(detectFormat({ input: "p", output: "o", step: 1 })?.name).toBe("verl");
    const other = readRows([{ question: "q", answer: "a" }]);
    expect(other.problems[0]!.message).toMatch(/^not a run the lab reads \(its keys: question, answer\)/);
  });

  it("hyparquet's values as JSON: INT64 BigInts as numbers (or strings past 2^53), dates as ISO text, typed arrays as lists", () => {
    expect(toJsonValue({ a: 5n, b: 2n ** 60n, c: [1n, { d: new Date(0) }], e: new Float32Array([0.5]), f: Number.POSITIVE_INFINITY })).toEqual({
      a: 5,
      b: "1152921504606846976",
      c: [1, { d: "1970-01-01T00:00:00.000Z" }],
      e: [0.5],
      f: null,
    });
  });

  it("a Blob (the page's File) reads the same as the file, and a broken Parquet file says so", async () => {
    const bytes = readFileSync(FILE);
    const acc = new JsonlAccumulator();
    await readParquetInto(blobAsyncBuffer(new Blob([bytes])), acc);
    expect(acc.end().samples).toEqual((await readFixture()).read.samples);
    await expect(readParquetInto(blobAsyncBuffer(new Blob([bytes.subarray(0, 40)])), new JsonlAccumulator())).rejects.toThrow(/^not a readable Parquet file/);
  });
});
