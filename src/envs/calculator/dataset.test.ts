import { describe, expect, it } from "vitest";
import { Rng } from "../../core/index.js";
import { calculatorDatasetConfig, calculatorDatum, calculatorUserText, generateCalculatorDataset } from "./dataset.js";
import type { CalculatorMetadata } from "./env.js";
import { evaluate, generateProblem, parseProblem, planSteps, renderExpr } from "./problem.js";

// literals.md "Multi-step calculator prompt", with `tags)------` on one line and no final newline.
const USER_TEXT =
  "You have a calculator tool. To use it, respond with:\n" +
  "'[operand1, operand2, operation_name]<call: calculator>'\n" +
  "The valid 'operation_name' values are exactly: 'sum', 'diff', 'prod', 'div'.\n" +
  "Example: [5, 3, sum]<call: calculator>\n" +
  "You will receive the result of your calculation as <result>...</result>\n" +
  "Use this result to make the next calculation if needed.\n" +
  "IMPORTANT: Only perform one calculation step (one tool call) before waiting for a result and making a new tool call.\n" +
  "IMPORTANT: Do not perform any other calculations or operations aside from the tool call and result. Doing so will result in failure.\n" +
  "To give the final answer, just output the number. numbers inside of <result> don't count, so output just the final number yourself outside of this.\n" +
  "Example full output: [2, 4, sum]<call: calculator>\n" +
  "<result>6.0</result>\n" +
  "[6, 6, diff]<call: calculator>\n" +
  "<result>0.0</result> 0\n" +
  "(note how you have to output the final 0 outside of the tags)------\n" +
  "Solve: (3 + 5) * 2";

describe("prompt", () => {
  it("is literals.md's user text, byte for byte", () => {
    expect(calculatorUserText("(3 + 5) * 2")).toBe(USER_TEXT);
  });

  it("is chat-templated without a system turn and not stripped", () => {
    const datum = calculatorDatum("(3 + 5) * 2", 16, 4, "multi_step_calculator_game");
    expect(datum.message_log).toEqual([
      { role: "user", content: `<|im_start|>user\n${USER_TEXT}<|im_end|>\n<|im_start|>assistant\n` },
    ]);
    expect(datum.stop_strings).toEqual(["<call: calculator>"]);
    expect(datum.task_name).toBe("multi_step_calculator_game");
    expect(datum.extra_env_info).toEqual({ problem: "(3 + 5) * 2", expected_final_answer: 16, max_steps: 4, current_step: 0 });
    expect(Object.keys(datum.extra_env_info!)).toEqual(["problem", "expected_final_answer", "max_steps", "current_step"]);
  });
});

describe("problems", () => {
  it("parenthesise every inner operation and evaluate left to right", () => {
    const expr = { left: { left: { left: 3, op: "+" as const, right: 5 }, op: "*" as const, right: 2 }, op: "-" as const, right: 4 };
    expect(renderExpr(expr)).toBe("((3 + 5) * 2) - 4");
    expect(evaluate(expr)).toBe(12);
    expect(parseProblem("((3 + 5) * 2) - 4")).toEqual(expr);
    expect(planSteps(expr).map((s) => s.value)).toEqual([8, 16, 12]);
    expect(parseProblem("3 +")).toBeNull();
    expect(parseProblem("(3 + 5")).toBeNull();
  });

  it("have `steps` operations on operands 1…max_operand, divisions only where exact", () => {
    for (let seed = 0; seed < 200; seed++) {
      const expr = generateProblem(4, 12, new Rng(seed));
      const steps = planSteps(expr);
      expect(steps).toHaveLength(4);
      for (const s of steps) {
        expect(Number.isInteger(s.value)).toBe(true);
        expect(s.right).toBeGreaterThanOrEqual(1);
        expect(s.right).toBeLessThanOrEqual(12);
      }
      expect(parseProblem(renderExpr(expr))).toEqual(expr);
    }
    const ops = new Set(Array.from({ length: 100 }, (_, seed) => planSteps(generateProblem(3, 20, new Rng(seed)))).flat().map((s) => s.op));
    expect([...ops].sort()).toEqual(["*", "+", "-", "/"]);
  });
});

describe("dataset", () => {
  const request = (seed: number, config: Record<string, unknown> = {}, size = 12) => ({ size, seed, config, taskName: "calc" });

  it("is the same for the same seed, different for another", () => {
    const a = generateCalculatorDataset(request(5, { steps: 3 }));
    expect(generateCalculatorDataset(request(5, { steps: 3 }))).toEqual(a);
    expect(generateCalculatorDataset(request(6, { steps: 3 }))).not.toEqual(a);
  });

  it("sets max_steps = steps + 2 and the expected answer of the problem", () => {
    for (const datum of generateCalculatorDataset(request(1, { steps: 3, max_operand: 9 }))) {
      const meta = datum.extra_env_info as unknown as CalculatorMetadata;
      expect(meta.max_steps).toBe(5);
      expect(meta.current_step).toBe(0);
      expect(meta.expected_final_answer).toBe(evaluate(parseProblem(meta.problem)!));
      expect(meta.problem).toMatch(/^\(\(\d+ [-+*/] \d+\) [-+*/] \d+\) [-+*/] \d+$/);
      expect(datum.message_log[0]!.content).toBe(
        `<|im_start|>user\n${calculatorUserText(meta.problem)}<|im_end|>\n<|im_start|>assistant\n`,
      );
      expect(datum.task_name).toBe("calc");
    }
    const first = generateCalculatorDataset(request(1))[0]!.extra_env_info as unknown as CalculatorMetadata;
    expect(first.max_steps).toBe(4);
    expect(first.problem).toMatch(/^\(\d+ [-+*/] \d+\) [-+*/] \d+$/);
  });

  it("has the literals.md defaults and rejects unknown or bad settings", () => {
    expect(calculatorDatasetConfig({})).toEqual({ steps: 2, max_operand: 20 });
    expect(() => calculatorDatasetConfig({ step: 2 })).toThrow(/unknown key 'step'/);
    expect(() => calculatorDatasetConfig({ steps: 0 })).toThrow(/dataset\.config\.steps: expected an integer >= 1, got 0/);
    expect(() => calculatorDatasetConfig({ max_operand: 1.5 })).toThrow(/max_operand/);
  });
});
