/**
 * The seeded calculator dataset (literals.md): the reference test's prompt around a generated problem, chat-templated
 * without a system text and not stripped (the prompt ends with `<|im_start|>assistant\n`).
 *
 * One generator seeded with the request's seed draws the problems datum after datum (draw order in problem.ts).
 */

import { chatPrompt, Rng } from "../../core/index.js";
import { integerConfig } from "../config.js";
import type { DatasetDatum, DatasetRequest, GeneratedDatum, RawPromptDatum } from "../types.js";
import { CALCULATOR_STOP_STRINGS, type CalculatorMetadata } from "./env.js";
import { evaluate, generateProblem, renderExpr } from "./problem.js";

export interface CalculatorDatasetConfig {
  steps: number;
  max_operand: number;
}

const DEFAULTS: CalculatorDatasetConfig = { steps: 2, max_operand: 20 };
const MINIMUMS: CalculatorDatasetConfig = { steps: 1, max_operand: 1 };

export function calculatorDatasetConfig(config: Record<string, unknown>): CalculatorDatasetConfig {
  return integerConfig("calculator dataset.config", config, DEFAULTS, MINIMUMS);
}

/** The user text, exactly as the reference test writes it (`tags)------` on one line, no final newline). */
export function calculatorUserText(problem: string): string {
  return (
    "You have a calculator tool. To use it, respond with:\n" +
    "'[operand1, operand2, operation_name]<call: calculator>'\n" +
    "The valid 'operation_name' values are exactly: 'sum', 'diff', 'prod', 'div'.\n" +
    "Example: [5, 3, sum]<call: calculator>\n" +
    "You will receive the result of your calculation as <result>...</result>\n" +
    "Use this result to make the next calculation if needed.\n" +
    "IMPORTANT: Only perform one calculation step (one tool call) before waiting for a result and making a new tool call.\n" +
    "IMPORTANT: Do not perform any other calculations or operations aside from the tool call and result. Doing so will result in failure.\n" +
    "To give the final answer, just output the number. numbers inside of <result> don't count, so output just the final number yourself outside of this.\n" +
    "Example full output: [2, 4, sum]<call: calculator>\n<result>6.0</result>\n[6, 6, diff]<call: calculator>\n<result>0.0</result> 0\n(note how you have to output the final 0 outside of the tags)" +
    "------\n" +
    `Solve: ${problem}`
  );
}

export function calculatorDatum(problem: string, expected: number, maxSteps: number, taskName: string): DatasetDatum {
  const metadata: CalculatorMetadata = {
    problem,
    expected_final_answer: expected,
    max_steps: maxSteps,
    current_step: 0,
  };
  return {
    message_log: [{ role: "user", content: chatPrompt(calculatorUserText(problem), null, false) }],
    extra_env_info: metadata,
    stop_strings: [...CALCULATOR_STOP_STRINGS],
    task_name: taskName,
  };
}

/** The datum with its prompt as raw chat messages (`DatasetRequest.prompts: "messages"`): the user text alone. */
export function rawCalculatorDatum(datum: DatasetDatum): RawPromptDatum {
  const { message_log: _rendered, ...rest } = datum;
  const problem = (datum.extra_env_info as unknown as CalculatorMetadata).problem;
  return { ...rest, messages: [{ role: "user", content: calculatorUserText(problem) }] };
}

/** The dataset; asked for raw prompts, each datum's prompt as chat messages for the active template. */
export function calculatorDataset(request: DatasetRequest): GeneratedDatum[] {
  const data = generateCalculatorDataset(request);
  return request.prompts === "messages" ? data.map(rawCalculatorDatum) : data;
}

export function generateCalculatorDataset(request: DatasetRequest): DatasetDatum[] {
  const cfg = calculatorDatasetConfig(request.config);
  const rng = new Rng(request.seed);
  return Array.from({ length: request.size }, () => {
    const expr = generateProblem(cfg.steps, cfg.max_operand, rng);
    // Two calls to spare: max_steps = steps + 2.
    return calculatorDatum(renderExpr(expr), evaluate(expr), cfg.steps + 2, request.taskName);
  });
}
