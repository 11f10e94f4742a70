import { describe, expect, it } from "vitest";
import type { EnvMessage } from "../../core/index.js";
import {
  CalculatorEnv,
  calculatorSuccessRate,
  parseCalculatorCall,
  parseFinalAnswer,
  processCalculatorTurn,
  type CalculatorMetadata,
} from "./env.js";
import { calculatorEnvironment } from "./index.js";

const meta = (expected = 16, currentStep = 0, maxSteps = 4): CalculatorMetadata => ({
  problem: "(3 + 5) * 2",
  expected_final_answer: expected,
  max_steps: maxSteps,
  current_step: currentStep,
});
const said = (text: string): EnvMessage[] => [
  { role: "user", content: "prompt" },
  { role: "assistant", content: text },
];
const observe = (text: string, m = meta()) => processCalculatorTurn(said(text), m).observation.content;
const STOP = ["<call: calculator>"];

describe("tool calls", () => {
  it("answers a call with the result to 5 decimals, counting the step", () => {
    const turn = processCalculatorTurn(said("[3, 5, sum]<call: calculator>"), meta());
    expect(turn.observation).toEqual({ role: "environment", content: "<result>8.00000</result>" });
    expect(turn).toMatchObject({ reward: 0, terminated: false, nextStopStrings: STOP });
    expect(turn.nextMetadata).toEqual({ ...meta(), current_step: 1 });
  });

  it.each([
    ["[8, 2, prod]<call: calculator>", "<result>16.00000</result>"],
    ["[3, 5, diff]<call: calculator>", "<result>-2.00000</result>"],
    ["[1, 3, div]<call: calculator>", "<result>0.33333</result>"],
    ["[2, 3, div]<call: calculator>", "<result>0.66667</result>"],
    // 1/64 = 0.015625 exactly: a tie, rounded to even (JavaScript's toFixed gives 0.01563).
    ["[1, 64, div]<call: calculator>", "<result>0.01562</result>"],
    ["[-0.0, 1, prod]<call: calculator>", "<result>-0.00000</result>"],
    ["[1e20, 1, prod]<call: calculator>", "<result>100000000000000000000.00000</result>"],
    ["[1e308, 10, prod]<call: calculator>", "<result>inf</result>"],
    ["  [ 3 ,5,  SUM ]  <call: calculator>  ", "<result>8.00000</result>"],
    ["[1_000, .5, Sum]<call: calculator>", "<result>1000.50000</result>"],
    ["[1., 1e-5, div]<call: calculator>", "<result>100000.00000</result>"],
  ])("%j → %j", (text, content) => {
    expect(observe(text)).toBe(content);
  });

  it("fails the calculation (terminal) on a division by |b| < 1e-6 or an unknown operation", () => {
    for (const text of ["[6, 0, div]<call: calculator>", "[6, 1e-7, div]<call: calculator>", "[6, 3, pow]<call: calculator>"]) {
      const turn = processCalculatorTurn(said(text), meta());
      expect(turn.observation.content).toBe("<error>Calculation failed.");
      expect(turn).toMatchObject({ reward: 0, terminated: true, nextStopStrings: STOP, nextMetadata: null });
    }
  });

  it("is not a call unless the whole stripped text is [a, b, op]<call: calculator>", () => {
    for (const text of [
      "<tool_call>[5, 4, prod]<call: calculator>",
      "Let me compute. [5, 4, prod]<call: calculator>",
      "[5, 4, prod]<call: calculator> done",
      "[5, 4]<call: calculator>",
      "[5, 4, prod, 1]<call: calculator>",
      "[5, x, sum]<call: calculator>",
      "[0x10, 1, sum]<call: calculator>",
      "[1,5, 2, sum]<call: calculator>",
      "[, 2, sum]<call: calculator>",
      "[5, 4, prod]",
      "(5, 4, prod)<call: calculator>",
    ]) {
      expect(parseCalculatorCall(text)).toBeNull();
      const turn = processCalculatorTurn(said(text), meta());
      expect(turn.observation.content).toBe("<error>Invalid response. Expected tool call or final answer.");
      expect(turn).toMatchObject({ reward: 0, terminated: true, nextStopStrings: STOP, nextMetadata: null });
    }
  });
});

describe("final answers", () => {
  it("rewards a correct answer with 1.0 and ends the episode", () => {
    const turn = processCalculatorTurn(said("16"), meta());
    expect(turn.observation).toEqual({ role: "environment", content: "Correct! The final answer is 16.00." });
    expect(turn).toMatchObject({ reward: 1.0, terminated: true, nextStopStrings: STOP, nextMetadata: null });
  });

  it.each([
    ["16", 16, "Correct! The final answer is 16.00."],
    [" 16.0 \n", 16, "Correct! The final answer is 16.00."],
    ["<final_answer>16</final_answer>", 16, "Correct! The final answer is 16.00."],
    ["<final_answer> 1_6 </final_answer>", 16, "Correct! The final answer is 16.00."],
    ["16.0000001", 16, "Correct! The final answer is 16.00."],
    ["0.125", 0.125, "Correct! The final answer is 0.12."],
    ["2.675", 2.675, "Correct! The final answer is 2.67."],
    ["1e-7", 0, "Correct! The final answer is 0.00."],
    ["-1e-7", 0, "Correct! The final answer is -0.00."],
    ["15", 16, "Incorrect final answer. Expected 16.00, got 15.00."],
    ["16.00001", 16, "Incorrect final answer. Expected 16.00, got 16.00."],
    ["0.375", 0.125, "Incorrect final answer. Expected 0.12, got 0.38."],
    ["nan", 16, "Incorrect final answer. Expected 16.00, got nan."],
    ["-Infinity", 16, "Incorrect final answer. Expected 16.00, got -inf."],
  ])("%j (expected %d) → %j", (text, expected, content) => {
    const turn = processCalculatorTurn(said(text), meta(expected));
    expect(turn.observation.content).toBe(content);
    expect(turn.reward).toBe(content.startsWith("Correct") ? 1.0 : 0);
    expect(turn.terminated).toBe(true);
  });

  it("accepts Python floats only", () => {
    expect(parseFinalAnswer("1.")).toBe(1);
    expect(parseFinalAnswer(".5")).toBe(0.5);
    expect(parseFinalAnswer("+3")).toBe(3);
    for (const bad of ["", "1,5", "0x10", "3abc", "1__0", "<final_answer>3", "\ufeff3", "<final_answer></final_answer>"]) {
      expect(parseFinalAnswer(bad)).toBeNull();
    }
  });

  it("checks the final answer before the tool call, and the step budget before both", () => {
    expect(observe("16", meta(16, 4, 4))).toBe("<error>Maximum steps reached.");
    const turn = processCalculatorTurn(said("[3, 5, sum]<call: calculator>"), meta(16, 5, 4));
    expect(turn).toMatchObject({ reward: 0, terminated: true, nextStopStrings: null, nextMetadata: null });
    expect(observe("16", meta(16, 3, 4))).toBe("Correct! The final answer is 16.00.");
  });

  it("reads the last message only when it is the assistant's", () => {
    const log: EnvMessage[] = [
      { role: "assistant", content: "16" },
      { role: "user", content: "16" },
    ];
    expect(processCalculatorTurn(log, meta()).observation.content).toBe(
      "<error>Invalid response. Expected tool call or final answer.",
    );
  });
});

describe("CalculatorEnv", () => {
  it("steps a batch aligned with its input and never mutates it", () => {
    const metas = [meta(), meta(), meta(16, 4, 4)];
    const before = structuredClone(metas);
    const out = new CalculatorEnv().step([said("[3, 5, sum]<call: calculator>"), said("16"), said("16")], metas);
    expect(metas).toEqual(before);
    expect(out.observations.map((o) => o.content)).toEqual([
      "<result>8.00000</result>",
      "Correct! The final answer is 16.00.",
      "<error>Maximum steps reached.",
    ]);
    expect(out.rewards).toEqual([0, 1, 0]);
    expect(out.terminateds).toEqual([false, true, true]);
    expect(out.next_stop_strings).toEqual([STOP, STOP, null]);
    expect(out.metadata).toEqual([{ ...meta(), current_step: 1 }, null, null]);
    expect(out.answers).toBeNull();
  });

  it("reports the reference's success_rate (the mean total reward)", () => {
    expect(calculatorSuccessRate([1, 0, 1, 0])).toBe(0.5);
    expect(calculatorSuccessRate([])).toBe(0);
    expect(new CalculatorEnv().globalPostProcessAndMetrics({ total_reward: [1, 0.5] })[1]).toEqual({ success_rate: 0.75 });
  });
});

describe("definition", () => {
  it("is named as scenarios use it, takes an empty config and rejects unknown keys", () => {
    expect(calculatorEnvironment.name).toBe("calculator");
    expect(calculatorEnvironment.defaultTaskName).toBe("multi_step_calculator_game");
    expect(calculatorEnvironment.create({})).toBeInstanceOf(CalculatorEnv);
    expect(() => calculatorEnvironment.create({ steps: 2 })).toThrow(/unknown key 'steps'/);
  });

  it("views the problem's operations in order, and an ended episode as text", () => {
    const view = calculatorEnvironment.view({ ...meta(), problem: "((3 + 5) * 2) - 4", expected_final_answer: 12, current_step: 1 });
    expect(view).toEqual({
      kind: "steps",
      title: "Multi-step calculator",
      problem: "((3 + 5) * 2) - 4",
      steps: [
        { label: "3 + 5", value: "8" },
        { label: "8 * 2", value: "16" },
        { label: "16 - 4", value: "12" },
      ],
      caption: "Tool calls made: 1 of 4; expected answer 12.00",
    });
    expect(calculatorEnvironment.view(null).kind).toBe("text");
  });
});
