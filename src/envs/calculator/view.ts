/** The calculator's state as the UI draws it: the problem's operations in order, and the calls used. */

import { formatFixed, type Metadata } from "../../core/index.js";
import type { EnvView } from "../types.js";
import type { CalculatorMetadata } from "./env.js";
import { parseProblem, planSteps } from "./problem.js";

const numberText = (n: number) => (Number.isInteger(n) ? String(n) : formatFixed(n, 5));

export function calculatorView(metadata: Metadata): EnvView {
  const meta = metadata as Partial<CalculatorMetadata> | null;
  if (!meta || typeof meta.problem !== "string") {
    // The environment returns no metadata once the episode is over.
    return { kind: "text", title: "Multi-step calculator", text: "No problem: the episode has ended." };
  }
  const expr = parseProblem(meta.problem);
  const steps = (expr === null ? [] : planSteps(expr)).map((s) => ({
    label: `${numberText(s.left)} ${s.op} ${numberText(s.right)}`,
    value: numberText(s.value),
  }));
  const used = typeof meta.current_step === "number" ? meta.current_step : 0;
  const budget = typeof meta.max_steps === "number" ? ` of ${meta.max_steps}` : "";
  const expected =
    typeof meta.expected_final_answer === "number" ? `; expected answer ${formatFixed(meta.expected_final_answer, 2)}` : "";
  return {
    kind: "steps",
    title: "Multi-step calculator",
    problem: meta.problem,
    steps,
    caption: `Tool calls made: ${used}${budget}${expected}`,
  };
}
