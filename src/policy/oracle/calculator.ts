/**
 * The calculator oracle. From the context text alone it reads the problem (`Solve: …`), plans its operations in
 * evaluation order (innermost first, left to right: `+`→sum, `-`→diff, `*`→prod, `/`→div), and counts the calls
 * the environment answered with a `<result>`. Call k is step k of the plan; its exact value is recomputed from the
 * call's own operands (the observation shows only 5 decimals), and later steps use these values, so a result
 * feeds forward whether or not the call was right. Operands are written so that Python's `float()` reads back the
 * same double (integers plainly, others in shortest round-trip form). When every step is done it answers with the
 * last value.
 *
 * Mistakes (with probability `errorRate` on a call turn, one kind drawn uniformly): a bad tool argument (the
 * right operand off by 1–3) or a wrong operation (another valid one). Both are accepted calls whose wrong result
 * then feeds forward. The other kinds would end the episode on the spot in this environment, so they are left out:
 * an invalid format, and malformed thinking, since any text around `[a, b, op]<call: calculator>` (an unclosed
 * `<think>` included) or around the final number makes the response "invalid". The final answer turn makes no
 * mistake of its own (it could only be a wrong number, which the call mistakes already lead to).
 */

import { pyFloat, pyFloatRepr, pyStrip } from "../../core/index.js";
import type { OracleContext, OracleSolver } from "./types.js";

type Op = "sum" | "diff" | "prod" | "div";
const OPS: readonly Op[] = ["sum", "diff", "prod", "div"];
const OP_OF_SYMBOL: Readonly<Record<string, Op>> = { "+": "sum", "-": "diff", "*": "prod", "/": "div" };

/** An operand: a number from the problem, or the value of an earlier step. */
type Operand = { literal: number } | { step: number };
interface Step {
  left: Operand;
  op: Op;
  right: Operand;
}

/** Parses the problem (`+ - * /`, usual precedence, parentheses) straight into steps in evaluation order. */
export function planProblem(problem: string): Step[] | null {
  const tokens = problem.match(/\d+(?:\.\d+)?|\S/g) ?? [];
  const steps: Step[] = [];
  let at = 0;
  const primary = (): Operand | null => {
    const t = tokens[at++];
    if (t === "(") {
      const inner = sum();
      return inner !== null && tokens[at++] === ")" ? inner : null;
    }
    return t !== undefined && /^\d/.test(t) ? { literal: Number(t) } : null;
  };
  const chain = (symbols: string, next: () => Operand | null) => (): Operand | null => {
    let left = next();
    while (left !== null && at < tokens.length && symbols.includes(tokens[at]!)) {
      const op = OP_OF_SYMBOL[tokens[at++]!]!;
      const right = next();
      if (right === null) return null;
      steps.push({ left, op, right });
      left = { step: steps.length - 1 };
    }
    return left;
  };
  const product = chain("*/", primary);
  const sum = chain("+-", product);
  const result = sum();
  return result === null || at !== tokens.length ? null : steps;
}

function apply(a: number, op: string, b: number): number | null {
  if (op === "sum") return a + b;
  if (op === "diff") return a - b;
  if (op === "prod") return a * b;
  if (op === "div") return Math.abs(b) < 1e-6 ? null : a / b;
  return null;
}

const CALL_RE = /\[([^[\]]*)\]<call: calculator>/g;

/** The exact values of the calls the environment answered with a result, in order. */
export function answeredCallValues(conversation: string): number[] {
  const calls = [...conversation.matchAll(CALL_RE)];
  const values: number[] = [];
  calls.forEach((m, i) => {
    const end = m.index + m[0].length;
    const next = calls[i + 1]?.index ?? conversation.length;
    if (!conversation.slice(end, next).includes("<result>")) return;
    const parts = m[1]!.split(",");
    if (parts.length !== 3) return;
    const [a, b] = [pyFloat(pyStrip(parts[0]!)), pyFloat(pyStrip(parts[1]!))];
    const value = a === null || b === null ? null : apply(a, pyStrip(parts[2]!).toLowerCase(), b);
    if (value !== null) values.push(value);
  });
  return values;
}

/** A number as Python's `float()` reads back exactly: integers plainly, others in shortest round-trip form. */
export function numberText(x: number): string {
  if (Object.is(x, -0)) return "-0";
  return Number.isInteger(x) && Math.abs(x) < 1e16 ? String(x) : pyFloatRepr(x);
}

const PROBLEM_LINE = /(?:^|\n)Solve: /;

/** The problem of the first `Solve:` line, its plan, and where the conversation after it starts. */
function readProblem(text: string): { problem: string; plan: Step[]; end: number } | null {
  const mark = PROBLEM_LINE.exec(text);
  if (!mark) return null;
  const start = mark.index + mark[0].length;
  const end = [text.indexOf("<|im_end|>", start), text.indexOf("\n", start), text.length]
    .filter((i) => i >= 0)
    .reduce((a, b) => Math.min(a, b));
  const problem = text.slice(start, end);
  const plan = planProblem(problem);
  return plan === null ? null : { problem, plan, end };
}

export function respondToCalculator(context: OracleContext): string {
  const text = context.promptText;
  const read = readProblem(text);
  if (read === null) throw new Error("calculator oracle: the prompt has no 'Solve:' line with a problem it can read");
  const { problem, plan, end } = read;

  const values = answeredCallValues(text.slice(end));
  // Drawn every turn, so a turn's choices do not depend on whether an error was made before.
  const erring = context.rng.next() < context.errorRate;
  const step = plan[values.length];
  if (step === undefined) {
    const final = values.length > 0 ? values[values.length - 1]! : Number(problem.trim());
    return numberText(final);
  }
  const value = (o: Operand) => ("literal" in o ? o.literal : values[o.step]!);
  const a = value(step.left);
  let b = value(step.right);
  let op: Op = step.op;
  if (erring) {
    if (context.rng.choice(["bad_argument", "wrong_operation"] as const) === "bad_argument") {
      b += context.rng.int(1, 3);
      if (op === "div" && Math.abs(b) < 1e-6) b += 1; // a division by zero would end the episode
    } else {
      op = context.rng.choice(OPS.filter((o) => o !== op && !(o === "div" && Math.abs(b) < 1e-6)));
    }
  }
  return `[${numberText(a)}, ${numberText(b)}, ${op}]<call: calculator>`;
}

export const calculatorOracle: OracleSolver = {
  env: "calculator",
  // Any prompt with a readable `Solve:` line, the dataset's or a hand-written one.
  matches: (text) => readProblem(text) !== null,
  respond: respondToCalculator,
};
