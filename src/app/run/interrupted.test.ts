/**
 * A run cut short (the worker crashed, the page closed): what finished is kept as it was, the samples under way
 * get an explicit ending with the reason, and the run exports and imports again as such.
 */

import { describe, expect, it } from "vitest";
import { byteLevelTokenizer } from "../../core/index.js";
import { TextPolicy } from "../../policy/text-policy.js";
import { runScenario } from "../../scenario/run.js";
import { cutShortRun, cutShortScenario } from "./cut-short-run.fixture.js";
import { endUnfinished, INTERRUPTED_BY_PAGE, markInterrupted, runProgress } from "./interrupted.js";
import { exportJsonlInSlices } from "./export-slices.js";
import { EXPORTED_UNDER_WAY, exportJsonl, importJsonl } from "./jsonl.js";
import { RunModel } from "./run-model.js";

const scenario = cutShortScenario(3);
const cutShort = () => cutShortRun(scenario);

describe("runs cut short", () => {
  it("a crashed run: the unfinished samples end with error and the reason, the finished one and every turn stay", async () => {
    const model = await cutShort();
    expect(runProgress(model)).toEqual({ finished: 1, total: 3 });
    const before = model.samples.map((s) => s.messages.length);
    expect(endUnfinished(model, "the rollout worker crashed: boom")).toBe(true);
    expect(model.samples.map((s) => s.termination)).toEqual(["terminated", "error", "error"]);
    expect(model.samples[1]!.error).toBe("the run ended before this sample finished: the rollout worker crashed: boom");
    expect(model.samples.map((s) => s.messages.length)).toEqual(before);
    expect(model.summary.status).toBe("failed");
    expect(runProgress(model)).toEqual({ finished: 1, total: 3 });
    expect(endUnfinished(model, "again")).toBe(false);
    // Exported and imported again, the run is the same.
    const again = importJsonl(exportJsonl(model, null)).model;
    expect(again.samples.map((s) => [s.termination, s.error, s.messages.length])).toEqual(model.samples.map((s) => [s.termination, s.error, s.messages.length]));
    // So is the run's own ending: failed, and why (a saved run reopened said "finished", with no error).
    expect([again.summary.status, again.summary.error]).toEqual(["failed", "the rollout worker crashed: boom"]);
  });

  it("another tool's dump converted without an ending (termination null, no turn records) is no run caught under way", () => {
    const line = JSON.stringify({ idx: 0, task_name: "t", message_log: [{ role: "user", content: "q" }, { role: "assistant", content: "a" }], total_reward: 1, termination: null });
    const back = importJsonl(line).model;
    expect([back.samples[0]!.termination, back.samples[0]!.error, back.summary.partial]).toEqual(["not_recorded", null, false]);
  });

  it("an export taken while the run is under way (a paused run's Export) imports as ended there: cancelled, why, partial", async () => {
    const model = await cutShort();
    expect(model.summary.status).toBe("running");
    const footer = JSON.parse(exportJsonl(model, null).trim().split("\n").at(-1)!);
    expect(footer.partial).toBe(true);
    for (const text of [exportJsonl(model, null), await (await exportJsonlInSlices(model, null)).blob.text()]) {
      const back = importJsonl(text).model;
      // Before: the samples under way read back as max_turns, in a whole, finished run.
      expect(back.samples.map((s) => s.termination)).toEqual(["terminated", "cancelled", "cancelled"]);
      expect(back.samples[1]!.error).toBe(EXPORTED_UNDER_WAY);
      expect([back.summary.status, back.summary.partial]).toEqual(["finished", true]);
      expect(runProgress(back)).toEqual({ finished: 1, total: 3 });
      expect(back.samples.map((s) => s.messages)).toEqual(model.samples.map((s) => s.messages));
    }
  });

  it("a run that ended on its own is left alone", async () => {
    const model = new RunModel();
    await runScenario(scenario, {
      onEvent: (e) => model.apply(e),
      policyOverride: { generation: new TextPolicy(byteLevelTokenizer, () => "<action>view</action>"), tokenizer: byteLevelTokenizer },
    });
    expect(endUnfinished(model, "x")).toBe(false);
    expect(model.summary.status).toBe("finished");
  });

  it("a checkpoint of a run under way imports as an interrupted run: cancelled samples with the reason, partial", async () => {
    const model = await cutShort();
    const checkpoint = exportJsonl(model, { note: "the scenario" });
    const { jsonl, progress } = markInterrupted(checkpoint);
    expect(progress).toEqual({ finished: 1, total: 3 });
    const { model: recovered, scenario: kept } = importJsonl(jsonl);
    expect(kept).toEqual({ note: "the scenario" });
    expect(recovered.summary.partial).toBe(true);
    expect(recovered.samples.map((s) => s.termination)).toEqual(["terminated", "cancelled", "cancelled"]);
    expect(recovered.samples[2]!.error).toBe(`the run ended before this sample finished: ${INTERRUPTED_BY_PAGE}`);
    // Every finished turn is there: the samples under way had two, and their messages are the live run's.
    expect(recovered.samples.map((s) => s.turns.length)).toEqual([1, 2, 2]);
    expect(recovered.samples.map((s) => s.messages)).toEqual(model.samples.map((s) => s.messages));
    // Without markInterrupted they read as exported under way: the reason the checkpoint is rewritten is the why.
    expect(importJsonl(checkpoint).model.samples[1]!.error).toBe(EXPORTED_UNDER_WAY);
  });

  it("lines that do not parse are left for the importer to report", () => {
    const { jsonl, progress } = markInterrupted('{"idx": 0, "task_name": "t", "message_log": [], "termination": null}\nnot json\n');
    expect(progress).toEqual({ finished: 0, total: 1 });
    expect(jsonl.split("\n")[1]).toBe("not json");
  });

  it("a line nested too deep to write again is left as it is (no stack overflow): the importer reports it", () => {
    const deep = `{"idx": 0, "task_name": "t", "message_log": [], "extra_env_info": {"x": ${"[".repeat(20_000)}0${"]".repeat(20_000)}}}`;
    const shallow = '{"idx": 1, "task_name": "t", "message_log": []}';
    const { jsonl, progress } = markInterrupted(`${deep}\n${shallow}\n`);
    expect(progress).toEqual({ finished: 0, total: 2 });
    const [first, second] = jsonl.split("\n");
    expect(first).toBe(deep);
    expect(JSON.parse(second!)).toMatchObject({ idx: 1, termination: "cancelled" });
  });
});
