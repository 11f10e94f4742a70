/**
 * The port's calculator problems (literals.md: the reference ships no generator): a left-to-right chain of
 * operations on operands 1…max_operand, every inner operation in explicit parentheses, e.g. `((3 + 5) * 2) - 4`.
 * A division only appears where it is exact, so every intermediate result is an integer.
 */

import type { Rng } from "../../core/index.js";

export type Operator = "+" | "-" | "*" | "/";
export type Expr = number | { left: Expr; op: Operator; right: Expr };

const OPERATORS: readonly Operator[] = ["+", "-", "*", "/"];

export function evaluate(expr: Expr): number {
  if (typeof expr === "number") return expr;
  const [a, b] = [evaluate(expr.left), evaluate(expr.right)];
  switch (expr.op) {
    case "+":
      return a + b;
    case "-":
      return a - b;
    case "*":
      return a * b;
    case "/":
      return a / b;
  }
}

/** The problem text: an operation inside another one is parenthesised; the outermost one is not. */
export function renderExpr(expr: Expr, nested = false): string {
  if (typeof expr === "number") return String(expr);
  const text = `${renderExpr(expr.left, true)} ${expr.op} ${renderExpr(expr.right, true)}`;
  return nested ? `(${text})` : text;
}

/**
 * Draw order: the first operand; then per step an operator (uniform over + - * /) and its right operand
 * (uniform in 1…max_operand). For a division the right operand is drawn among the divisors 2…max_operand of the
 * value so far; when there is none, the operator is drawn again among + - * instead.
 */
export function generateProblem(steps: number, maxOperand: number, rng: Rng): Expr {
  let expr: Expr = rng.int(1, maxOperand);
  let value = expr;
  for (let i = 0; i < steps; i++) {
    let op = rng.choice(OPERATORS);
    let right: number;
    const divisors = op === "/" ? exactDivisors(value, maxOperand) : [];
    if (op === "/" && divisors.length > 0) {
      right = rng.choice(divisors);
    } else {
      if (op === "/") op = rng.choice(OPERATORS.slice(0, 3));
      right = rng.int(1, maxOperand);
    }
    expr = { left: expr, op, right };
    value = evaluate(expr);
  }
  return expr;
}

function exactDivisors(value: number, maxOperand: number): number[] {
  const out: number[] = [];
  for (let d = 2; d <= maxOperand; d++) if (value % d === 0) out.push(d);
  return out;
}

/** Parses a problem text back (`+ - * /` with the usual precedence, parentheses, decimal operands); null if not one. */
export function parseProblem(text: string): Expr | null {
  const tokens = text.match(/\d+(?:\.\d+)?|[-+*/()]|\S/g) ?? [];
  let at = 0;
  const peek = () => tokens[at];
  const primary = (): Expr | null => {
    const t = tokens[at++];
    if (t === "(") {
      const inner = sum();
      return inner !== null && tokens[at++] === ")" ? inner : null;
    }
    return t !== undefined && /^\d/.test(t) ? Number(t) : null;
  };
  const chain = (ops: readonly string[], next: () => Expr | null) => (): Expr | null => {
    let left = next();
    while (left !== null && ops.includes(peek() ?? "")) {
      const op = tokens[at++] as Operator;
      const right = next();
      left = right === null ? null : { left, op, right };
    }
    return left;
  };
  const product = chain(["*", "/"], primary);
  const sum = chain(["+", "-"], product);
  const expr = sum();
  return expr !== null && at === tokens.length ? expr : null;
}

export interface PlanStep {
  left: number;
  op: Operator;
  right: number;
  value: number;
}

/** The operations in the order they are evaluated (innermost first, left to right), with their values. */
export function planSteps(expr: Expr): PlanStep[] {
  const steps: PlanStep[] = [];
  const walk = (e: Expr): number => {
    if (typeof e === "number") return e;
    const left = walk(e.left);
    const right = walk(e.right);
    const value = evaluate({ left, op: e.op, right });
    steps.push({ left, op: e.op, right, value });
    return value;
  };
  walk(expr);
  return steps;
}
