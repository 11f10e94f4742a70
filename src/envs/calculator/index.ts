/** The multi-step calculator environment (upstream-rollouts.md §5.3) as the lab plugs it in. */

import { checkConfigKeys } from "../config.js";
import type { BuiltinEnvironmentDefinition } from "../types.js";
import { calculatorDataset } from "./dataset.js";
import { CalculatorEnv } from "./env.js";
import { calculatorView } from "./view.js";

export {
  CalculatorEnv,
  calculate,
  calculatorSuccessRate,
  parseCalculatorCall,
  parseFinalAnswer,
  processCalculatorTurn,
  CALCULATOR_STOP_STRINGS,
} from "./env.js";
export type { CalculatorMetadata, CalculatorTurn, ToolCall } from "./env.js";
export { calculatorDataset, calculatorDatasetConfig, calculatorDatum, calculatorUserText, generateCalculatorDataset, rawCalculatorDatum } from "./dataset.js";
export { evaluate, generateProblem, parseProblem, planSteps, renderExpr } from "./problem.js";
export type { Expr, Operator, PlanStep } from "./problem.js";
export { calculatorView } from "./view.js";

export const calculatorEnvironment: BuiltinEnvironmentDefinition = {
  name: "calculator",
  defaultTaskName: "multi_step_calculator_game",
  title: "Multi-step calculator",
  description:
    "NeMo RL's test environment: the model calls [a, b, op]<call: calculator> one step at a time, then answers " +
    "with the final number; reward 1.0 for a correct answer within max_steps calls.",
  create(config) {
    checkConfigKeys("calculator config", config, []);
    return new CalculatorEnv();
  },
  generateDataset: calculatorDataset as BuiltinEnvironmentDefinition["generateDataset"],
  view: calculatorView,
};
