/**
 * `MultiStepCalculatorEnv` (upstream-rollouts.md §5.3, the reference's `tests/unit/test_envs.py`) with the parsing
 * of literals.md: step budget first, then a final answer, then a tool call, else an invalid response.
 * Observations carry no trailing newline (unlike the puzzle's).
 */

import {
  formatFixed,
  pyFloat,
  pyStrip,
  type EnvironmentInterface,
  type EnvironmentReturn,
  type EnvMessage,
  type Metadata,
} from "../../core/index.js";
import { batchTotalRewards, environmentMessage, lastAssistantText, stepEachSample, type SampleTurn } from "../step.js";

export const CALCULATOR_STOP_STRINGS: readonly string[] = ["<call: calculator>"];
const CALL_SUFFIX = "<call: calculator>";

export interface CalculatorMetadata {
  problem: string;
  expected_final_answer: number;
  max_steps: number;
  current_step: number;
  [extra: string]: unknown;
}

export interface ToolCall {
  a: number;
  b: number;
  op: string;
}

/** `_parse_tool_call`: `[a, b, op]<call: calculator>`, or null ("not a tool call"). */
export function parseCalculatorCall(text: string): ToolCall | null {
  const s = pyStrip(text);
  if (!s.endsWith(CALL_SUFFIX)) return null;
  const content = pyStrip(s.slice(0, s.length - CALL_SUFFIX.length));
  if (!(content.startsWith("[") && content.endsWith("]"))) return null;
  const parts = content.slice(1, -1).split(",");
  if (parts.length !== 3) return null;
  const a = pyFloat(pyStrip(parts[0]!));
  const b = pyFloat(pyStrip(parts[1]!));
  if (a === null || b === null) return null;
  return { a, b, op: pyStrip(parts[2]!).toLowerCase() };
}

/** `_calculate`: null for a division by |b| < 1e-6 or an unknown operation. */
export function calculate(call: ToolCall): number | null {
  switch (call.op) {
    case "sum":
      return call.a + call.b;
    case "diff":
      return call.a - call.b;
    case "prod":
      return call.a * call.b;
    case "div":
      return Math.abs(call.b) < 1e-6 ? null : call.a / call.b;
    default:
      return null;
  }
}

const FINAL_OPEN = "<final_answer>";
const FINAL_CLOSE = "</final_answer>";

/** `_is_final_answer`: the text as a Python float, one surrounding `<final_answer>` pair removed. */
export function parseFinalAnswer(text: string): number | null {
  let s = pyStrip(text);
  if (s.startsWith(FINAL_OPEN) && s.endsWith(FINAL_CLOSE)) {
    s = s.slice(FINAL_OPEN.length, s.length - FINAL_CLOSE.length);
  }
  return pyFloat(s);
}

export type CalculatorTurn = SampleTurn<CalculatorMetadata>;

function asCalculatorMetadata(metadata: Metadata): CalculatorMetadata {
  const m = metadata as Partial<CalculatorMetadata> | null;
  if (
    !m ||
    typeof m !== "object" ||
    typeof m.current_step !== "number" ||
    typeof m.max_steps !== "number" ||
    typeof m.expected_final_answer !== "number"
  ) {
    throw new Error("calculator: metadata must hold expected_final_answer, max_steps and current_step");
  }
  return m as CalculatorMetadata;
}

export function processCalculatorTurn(log: readonly EnvMessage[], metadata: Metadata): CalculatorTurn {
  const meta = asCalculatorMetadata(metadata);
  const text = lastAssistantText(log);
  const stops = () => [...CALCULATOR_STOP_STRINGS];
  const end = (content: string, reward = 0): CalculatorTurn => ({
    observation: environmentMessage(content),
    reward,
    terminated: true,
    nextStopStrings: stops(),
    nextMetadata: null,
  });

  if (meta.current_step >= meta.max_steps) {
    return { ...end("<error>Maximum steps reached."), nextStopStrings: null };
  }
  // The final answer is checked before the tool call.
  const answer = parseFinalAnswer(text);
  if (answer !== null) {
    const expected = meta.expected_final_answer;
    if (Math.abs(answer - expected) < 1e-6) return end(`Correct! The final answer is ${formatFixed(answer, 2)}.`, 1.0);
    return end(`Incorrect final answer. Expected ${formatFixed(expected, 2)}, got ${formatFixed(answer, 2)}.`);
  }
  const call = parseCalculatorCall(text);
  if (call === null) return end("<error>Invalid response. Expected tool call or final answer.");
  const result = calculate(call);
  if (result === null) return end("<error>Calculation failed.");
  return {
    observation: environmentMessage(`<result>${formatFixed(result, 5)}</result>`),
    reward: 0,
    terminated: false,
    nextStopStrings: stops(),
    nextMetadata: { ...structuredClone(meta), current_step: meta.current_step + 1 },
  };
}

/** The reference's `global_post_process_and_metrics`: the mean total reward, as `success_rate`. */
export function calculatorSuccessRate(totalRewards: readonly number[]): number {
  if (totalRewards.length === 0) return 0.0;
  return totalRewards.reduce((a, b) => a + b, 0) / totalRewards.length;
}

export class CalculatorEnv implements EnvironmentInterface {
  step(messageLogBatch: EnvMessage[][], metadata: Metadata[]): EnvironmentReturn {
    return stepEachSample(messageLogBatch, metadata, processCalculatorTurn);
  }

  globalPostProcessAndMetrics(batch: Record<string, unknown[]>): [Record<string, unknown[]>, Record<string, number>] {
    return [batch, { success_rate: calculatorSuccessRate(batchTotalRewards(batch)) }];
  }
}
