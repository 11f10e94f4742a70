import { describe, expect, it } from "vitest";
import { byteLevelTokenizer as tok, type RolloutEvent } from "../../core/index.js";
import { runScenario } from "../../scenario/run.js";
import { parseScenario } from "../../scenario/schema.js";
import calculator from "../../scenario/examples/calculator-scripted.json";
import workspace from "../../scenario/examples/workspace-structured.json";
import { exportJsonl, ImportError, importJsonl } from "./jsonl.js";
import { RunModel } from "./run-model.js";

async function liveModel(source: unknown) {
  const model = new RunModel();
  const scenario = parseScenario(source);
  const result = await runScenario(scenario, { onEvent: (e: RolloutEvent) => model.apply(e) });
  return { model, scenario, result };
}

const view = (model: RunModel) =>
  model.samples.map((s) => ({
    messages: s.messages,
    turns: s.turns.map((t) => [t.reward, t.terminated, t.truncatedContext, t.violations, t.metadata, t.assistantIndex, t.observationIndex]),
    total: s.totalReward,
    termination: s.termination,
    error: s.error,
    prompt: s.promptMessages,
    initial: s.initialMetadata,
  }));

describe("JSONL export and import", () => {
  for (const [name, source] of [["calculator", calculator], ["workspace", workspace]] as const) {
    it(`${name}: import gives back the same transcript, turns and metrics`, async () => {
      const { model, scenario } = await liveModel(source);
      const text = exportJsonl(model, scenario);
      const lines = text.trim().split("\n");
      expect(lines).toHaveLength(model.samples.length + 1);
      const first = JSON.parse(lines[0]!);
      expect(first).toMatchObject({ idx: model.samples[0]!.idx, task_name: model.samples[0]!.task });
      expect(first.message_log[0]).toHaveProperty("token_ids");
      const imported = importJsonl(text);
      expect(view(imported.model)).toEqual(view(model));
      expect(imported.model.summary.metrics).toEqual(model.summary.metrics);
      expect(imported.scenario).toEqual(scenario);
    });
  }

  it("keeps the environments' metrics after the run in the last line, beside the rollout's, and reads them back", async () => {
    const { model, scenario } = await liveModel(calculator);
    const reports = [
      { task: "multi_step_calculator_game", metrics: { success_rate: 0.5 } },
      { task: "other", error: 'ValueError: bad\nTraceback (most recent call last):\n  File "env.py", line 3' },
    ];
    model.setEnvironmentMetrics(reports);
    const text = exportJsonl(model, scenario);
    const footer = JSON.parse(text.trim().split("\n").at(-1)!);
    expect(footer["lab/environment_metrics"]).toEqual(reports);
    expect(footer.metrics).toEqual(model.summary.metrics);
    expect(importJsonl(text).model.summary.environmentMetrics).toEqual(reports);
    // An odd entry (an edited file) is left out, the others kept.
    footer["lab/environment_metrics"] = [...reports, { task: 3 }, { task: "t", metrics: { a: "x" } }];
    const edited = [...text.trim().split("\n").slice(0, -1), JSON.stringify(footer)].join("\n");
    expect(importJsonl(edited).model.summary.environmentMetrics).toEqual(reports);
  });

  it("reads a runner result's samples too (no lab records)", async () => {
    const { result } = await liveModel(calculator);
    const text = result.samples.map((s) => JSON.stringify(s)).join("\n");
    const { model } = importJsonl(text);
    expect(model.samples[0]!.messages.map((m) => m.content)).toEqual(result.samples[0]!.message_log.map((m) => m.content));
    expect(model.samples[0]!.termination).toBe("terminated");
    expect(tok.decode(model.samples[0]!.messages[1]!.token_ids)).toContain("[3, 5, sum]");
  });

  it("names the line and field of bad input", () => {
    expect(() => importJsonl('{"idx": 0, "task_name": "t", "message_log": []}\n{oops')).toThrow(ImportError);
    expect(() => importJsonl('{"idx": 0, "task_name": "t", "message_log": []}\n{oops')).toThrow(/^line 2: not valid JSON/);
    expect(() => importJsonl('{"idx": "0", "task_name": "t", "message_log": []}')).toThrow("line 1: idx: expected a number");
    expect(() => importJsonl('{"idx": 0, "task_name": "t", "message_log": [{"role": "user", "content": 5}]}')).toThrow("line 1: message_log[0].content: expected a string");
    expect(() => importJsonl('{"metrics": {}}')).toThrow("no sample lines");
  });
});

describe("environment metrics on a live run", () => {
  it("setting them is a change the next publish announces (the views redraw)", () => {
    const model = new RunModel();
    const seen: number[] = [];
    model.subscribe(() => seen.push(model.snapshot.version));
    model.publish();
    model.setEnvironmentMetrics([{ task: "t", metrics: { a: 1 } }]);
    model.publish();
    expect(seen).toHaveLength(1);
    expect(model.snapshot.model.summary.environmentMetrics).toEqual([{ task: "t", metrics: { a: 1 } }]);
  });
});
