/** The form reads back the scenarios it can write (a run shown fills the form), and only those. */

import { describe, expect, it } from "vitest";
import { parseScenario } from "../../scenario/schema.js";
import mixedEnvs from "../../scenario/examples/mixed-envs.json";
import puzzleSync from "../../scenario/examples/sliding-puzzle-oracle-sync.json";
import calculatorScripted from "../../scenario/examples/calculator-scripted.json";
import { PRESETS } from "../presets.js";
import { DEFAULT_SETUP, scenarioFromSetup, setupFromScenario, setupProblems, type Setup } from "./setup.js";

const written = (setup: Setup) => parseScenario(scenarioFromSetup(setup));

describe("setupFromScenario", () => {
  it("reads back every set-up preset's scenario as the set-up that writes it", () => {
    for (const preset of PRESETS) {
      if (!("setup" in preset)) continue;
      const scenario = written(preset.setup);
      const read = setupFromScenario(scenario);
      expect(read, preset.title).not.toBeNull();
      expect(written(read!)).toEqual(scenario);
    }
  });

  it("reads a form-written scenario whatever the base: the scenario decides what it says", () => {
    const oracle: Setup = { ...DEFAULT_SETUP, env: "calculator", policy: "oracle", oracleSeed: 4, errorRate: 0.3, mode: "async", datasetSize: 7, calculator: { steps: 3, max_operand: 9 } };
    const read = setupFromScenario(written(oracle), { ...DEFAULT_SETUP, policy: "scripted", datasetSize: 1 })!;
    expect(read).toMatchObject({ env: "calculator", policy: "oracle", oracleSeed: 4, errorRate: 0.3, mode: "async", datasetSize: 7, calculator: { steps: 3, max_operand: 9 } });
  });

  it("reads an example scenario file the form can write (the oracle puzzle); one with explicit samples it cannot", () => {
    const scenario = parseScenario(puzzleSync);
    const read = setupFromScenario(scenario);
    expect(read).toMatchObject({ env: "sliding_puzzle", policy: "oracle", datasetSize: 4, datasetSeed: 7, maxRolloutTurns: 31 });
    expect(written(read!)).toEqual(scenario);
    expect(setupFromScenario(parseScenario(calculatorScripted))).toBeNull();
  });

  it("gives null for what the form cannot write: two environments, explicit samples, a model's device, a key it has no field for", () => {
    expect(setupFromScenario(parseScenario(mixedEnvs))).toBeNull();
    const base = written(DEFAULT_SETUP);
    expect(setupFromScenario(parseScenario({ ...base, policy: { ...base.policy, device: "wasm" } }))).toBeNull();
    expect(setupFromScenario(parseScenario({ ...base, end_on_response_truncation: true }))).toBeNull();
    const { dataset: _dataset, ...withoutDataset } = base;
    const explicit = { ...withoutDataset, samples: [{ task_name: "sliding_puzzle_game", message_log: [{ role: "user", content: "go" }] }] };
    expect(setupFromScenario(parseScenario(explicit))).toBeNull();
  });
});

describe("the tokenizer field", () => {
  it("writes the scenario's tokenizer for a text policy, none for a model policy, and reads it back", () => {
    const oracle: Setup = { ...DEFAULT_SETUP, env: "workspace", policy: "oracle", tokenizer: "builtin:tiny-qwen3" };
    const scenario = written(oracle);
    expect(scenario.tokenizer).toBe("builtin:tiny-qwen3");
    expect(setupFromScenario(scenario)).toMatchObject({ policy: "oracle", tokenizer: "builtin:tiny-qwen3" });
    expect(written({ ...oracle, tokenizer: "" }).tokenizer).toBeUndefined();
    expect(written({ ...DEFAULT_SETUP, tokenizer: "builtin:tiny-qwen3" }).tokenizer).toBeUndefined();
    // A model policy's scenario that names its own model as tokenizer is valid, but not the form's to write.
    const model = written({ ...DEFAULT_SETUP, model: "builtin:tiny-qwen3" });
    expect(setupFromScenario(parseScenario({ ...model, tokenizer: "builtin:tiny-qwen3" }))).toBeNull();
  });
});

describe("setupProblems", () => {
  it("refuses the oracle with an environment it cannot play, and the puzzle's scripted example for another environment", () => {
    expect(setupProblems(DEFAULT_SETUP)).toEqual([]);
    expect(setupProblems({ ...DEFAULT_SETUP, policy: "oracle", env: "calculator" })).toEqual([]);
    expect(setupProblems({ ...DEFAULT_SETUP, policy: "oracle", env: "number_guess" })).toEqual([
      "The oracle plays the built-in environments only (sliding puzzle, calculator, workspace): it cannot play “number_guess”. Choose the scripted, replay, model or human policy for it.",
    ]);
    expect(setupProblems({ ...DEFAULT_SETUP, policy: "scripted", env: "calculator" })[0]).toMatch(/^The scripted responses are still the sliding puzzle's example .*“calculator” does not understand/);
    expect(setupProblems({ ...DEFAULT_SETUP, policy: "scripted", env: "calculator", scripted: '[["16"]]' })).toEqual([]);
    expect(setupProblems({ ...DEFAULT_SETUP, policy: "scripted" })).toEqual([]);
  });
});
