/**
 * Runs kept in this browser whose stored JSONL is damaged (a last line cut short, a corrupted line): a saved run
 * reopened, or an interrupted run's checkpoint recovered. Both are read as an imported file is (the same streaming
 * checker, `readJsonlOffThread`, which is `readJsonl` where there is no Worker): a clean one opens as before; a
 * damaged one gives its problems with line numbers and field paths, and its valid lines build the run only when the
 * user asks (the page's panel: src/app/ImportJsonl.tsx; in the browser: e2e/import-faults.spec.ts).
 */

import { describe, expect, it } from "vitest";
import type { Checkpoint } from "../app/run/checkpoints.js";
import { INTERRUPTED_BY_PAGE, markInterrupted } from "../app/run/interrupted.js";
import { buildRun, exportJsonl, formatProblem, importJsonl } from "../app/run/jsonl.js";
import { readJsonlOffThread } from "../app/run/jsonl-offthread.js";
import { prepareRecovered, recoveredRun } from "../app/run/recovery.js";
import { cutShortRun, cutShortScenario } from "../app/run/cut-short-run.fixture.js";

const cutShort = () => cutShortRun(cutShortScenario(4));

/** The export with line 2's first message content made a number, and its last line (the footer) cut short. */
function damage(jsonl: string): string {
  const lines = jsonl.trimEnd().split("\n");
  const second = JSON.parse(lines[1]!) as { message_log: { content: unknown }[] };
  second.message_log[0]!.content = 42;
  lines[1] = JSON.stringify(second);
  lines[lines.length - 1] = lines.at(-1)!.slice(0, 30);
  return lines.join("\n");
}

const checkpointOf = (jsonl: string): Checkpoint => ({ id: "c1", startedAt: 1, updatedAt: Date.UTC(2025, 0, 1, 12), mode: "sync", finished: 1, total: 4, jsonl });
const asFile = (text: string | Blob, name: string) => new File([text], name, { type: "application/x-ndjson" });

describe("a saved run whose stored JSONL is damaged", () => {
  it("clean (a string or a Blob as stored): no problem, the same run as before", async () => {
    const model = await cutShort();
    const jsonl = exportJsonl(model, { note: "s" });
    for (const stored of [jsonl, new Blob([jsonl])]) {
      const read = await readJsonlOffThread(asFile(stored, "sync · 4 samples"));
      expect(read.problemCount).toBe(0);
      const { model: opened, scenario: kept } = buildRun(read);
      expect(kept).toEqual({ note: "s" });
      expect(opened.samples.map((s) => s.messages)).toEqual(importJsonl(jsonl).model.samples.map((s) => s.messages));
    }
  });

  it("damaged: the problems name their lines and field paths; the valid lines build the run (when asked)", async () => {
    const model = await cutShort();
    const read = await readJsonlOffThread(asFile(new Blob([damage(exportJsonl(model, { note: "s" }))]), "a saved run"));
    expect(read.problems.map(formatProblem)).toEqual([
      "line 2: message_log[0].content: expected a string",
      expect.stringMatching(/^line 5: truncated: the file ends inside this line/),
    ]);
    expect([read.badLines, read.validLines, read.samples.length]).toEqual([2, 3, 3]);
    // The strict reader of a text in memory (what opening used to be) refuses it whole.
    expect(() => importJsonl(damage(exportJsonl(model, null)))).toThrow(/^line 2: message_log\[0\]\.content: expected a string/);
    const { model: opened, scenario: kept } = buildRun(read);
    expect(kept).toBeNull(); // the footer was the damaged last line
    expect(opened.samples.map((s) => s.idx)).toEqual([0, 2, 3]);
    expect(opened.samples.map((s) => s.messages)).toEqual([0, 2, 3].map((i) => model.samples[i]!.messages));
  });
});

describe("a recovered checkpoint whose stored JSONL is damaged", () => {
  it("clean: opens as before (cancelled samples with the reason, partial, the scenario), under its title", async () => {
    const model = await cutShort();
    const recovered = prepareRecovered(checkpointOf(exportJsonl(model, { note: "s" })));
    expect(recovered.progress).toEqual({ finished: 1, total: 4 });
    expect(recovered.title).toMatch(/^recovered · sync · 1 of 4 samples finished · /);
    const read = await readJsonlOffThread(asFile(recovered.jsonl, recovered.title));
    expect(read.problemCount).toBe(0);
    const opened = await recoveredRun(recovered, read);
    expect(opened.title).toBe(recovered.title);
    expect(opened.scenario).toEqual({ note: "s" });
    expect(opened.model.summary.partial).toBe(true);
    expect(opened.model.samples.map((s) => s.termination)).toEqual(["terminated", "cancelled", "cancelled", "cancelled"]);
    expect(opened.model.samples[1]!.error).toBe(`the run ended before this sample finished: ${INTERRUPTED_BY_PAGE}`);
    // What opening a checkpoint gave before: the same run.
    const before = importJsonl(markInterrupted(exportJsonl(model, { note: "s" })).jsonl).model;
    expect(opened.model.samples.map((s) => [s.termination, s.error, s.messages])).toEqual(before.samples.map((s) => [s.termination, s.error, s.messages]));
    expect(opened.meanReward).toBe(before.samples.reduce((a, s) => a + s.totalReward, 0) / 4);
  });

  it("damaged: the problems with lines and field paths; the valid lines open as a recovered run, the title says how many were left out", async () => {
    const model = await cutShort();
    const recovered = prepareRecovered(checkpointOf(damage(exportJsonl(model, { note: "s" }))));
    // The unfinished samples of the lines that parse are marked; the damaged lines are left for the checker.
    expect(recovered.progress).toEqual({ finished: 1, total: 4 });
    const read = await readJsonlOffThread(asFile(recovered.jsonl, recovered.title));
    expect(read.problems.map(formatProblem)).toEqual([
      "line 2: message_log[0].content: expected a string",
      expect.stringMatching(/^line 5: truncated: the file ends inside this line/),
    ]);
    const opened = await recoveredRun(recovered, read, read.badLines);
    expect(opened.title).toBe(`${recovered.title} · 2 damaged lines left out`);
    expect(opened.model.samples.map((s) => [s.idx, s.termination])).toEqual([
      [0, "terminated"],
      [2, "cancelled"],
      [3, "cancelled"],
    ]);
    expect(opened.model.samples.map((s) => s.turns.length)).toEqual([1, 2, 2]);
  });
});
