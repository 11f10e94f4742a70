/**
 * A filter expression over a run's samples (issue 19 item 4): `reward < 0.5 and turns > 3`, `termination ==
 * "error"`, `text ~ "Traceback"`, `drift`, `not solved`, `imported.uid == "a1b2"`, any final batch column by name.
 * Parsed once into a test run per sample; an error names the offending part by its position in the text.
 *
 *   expr    := and ("or" and)*
 *   and     := unary ("and" unary)*
 *   unary   := "not" unary | compare
 *   compare := operand (("==" | "!=" | "<" | "<=" | ">" | ">=" | "~") operand)?
 *   operand := number | string | true | false | null | field | "(" expr ")"
 *
 * `~` matches text: a string operand is searched case-insensitively; `/regex/flags` is a regular expression. A field
 * alone is true when its value is truthy (a non-empty text, a number other than 0). Comparing with a missing field
 * is false (`!=` true), so a filter on an imported field keeps only the samples that have it.
 */

import type { SampleView } from "./run-model.js";
import type { RunGroups } from "./groups.js";
import { sampleMismatch } from "./mismatch.js";
import { sampleOutcome } from "./outcome.js";
import { sampleFile } from "./run-steps.js";

export interface FilterError {
  message: string;
  /** Where in the expression: [start, end) character offsets. */
  start: number;
  end: number;
}

/** What a sample's fields are read from besides the sample: the run's final batch columns, the drift verdicts. */
export interface FilterContext {
  /** The final batch's columns by sample number (an import's `imported`, a run's reward components, …). */
  batch?: Record<string, unknown[]> | null;
  /** Whether a sample drifts from its chat template (null: not checked). */
  drift?: (sample: SampleView) => boolean | null;
  /** The run's GRPO groups (./groups.ts), for the group fields. */
  groups?: RunGroups;
}

type Value = number | string | boolean | null | undefined | RegExp | object;
type Getter = (s: SampleView) => Value;

/** The built-in fields, in words for the error that lists them. */
const FIELDS: Record<string, { about: string; get: (s: SampleView, c: FilterContext) => Value }> = {
  reward: { about: "total reward", get: (s) => s.totalReward },
  turns: { about: "turns taken", get: (s) => s.turns.filter(Boolean).length },
  tokens: { about: "tokens in the message log", get: (s) => s.messages.reduce((n, m) => n + m.token_ids.length, 0) },
  messages: { about: "messages", get: (s) => s.messages.length },
  termination: { about: "how it ended (terminated, truncated, max_turns, error, cancelled; an imported run's own, or not_recorded)", get: (s) => s.termination },
  outcome: { about: "solved, failed, error or cut", get: (s) => sampleOutcome(s) },
  solved: { about: "true when solved", get: (s) => sampleOutcome(s) === "solved" },
  error: { about: "the error text", get: (s) => s.error },
  task: { about: "task name", get: (s) => s.task },
  idx: { about: "the sample's idx", get: (s) => s.idx },
  sample: { about: "its number in the run", get: (s) => s.sample },
  text: { about: "every message's text", get: (s) => s.messages.map((m) => m.content).join("\n") },
  drift: { about: "drifts from the chat template", get: (s, c) => c.drift?.(s) ?? null },
  group: { about: "its group's key (a dump's group id, else its prompt)", get: (s, c) => c.groups?.of.get(s.sample)?.key ?? null },
  group_size: { about: "samples in its group", get: (s, c) => c.groups?.of.get(s.sample)?.samples.length ?? null },
  group_std: { about: "its group's reward standard deviation", get: (s, c) => c.groups?.of.get(s.sample)?.std ?? null },
  zero_variance: {
    about: "its group's rewards are all equal (no gradient)",
    get: (s, c) => {
      const g = c.groups?.of.get(s.sample);
      return g ? g.zeroVariance : null;
    },
  },
  mismatch: { about: "mean |Δ| of the trainer's and the engine's log-probabilities", get: (s, c) => sampleMismatch(s, c.batch?.imported?.[s.sample])?.meanAbs ?? null },
  file: { about: "the file it was read from (a run of several files)", get: (s, c) => sampleFile(c.batch?.imported?.[s.sample]) },
};

export const FILTER_FIELDS: readonly string[] = Object.keys(FIELDS);

class Parse extends Error {
  constructor(
    message: string,
    readonly start: number,
    readonly end: number,
  ) {
    super(message);
  }
}

interface Token {
  kind: "number" | "string" | "regex" | "name" | "op" | "paren" | "end";
  text: string;
  value?: Value;
  start: number;
  end: number;
}

const OPS = ["==", "!=", "<=", ">=", "<", ">", "~"];

function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const c = input[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const start = i;
    if (c === "(" || c === ")") {
      tokens.push({ kind: "paren", text: c, start, end: ++i });
    } else if (c === '"' || c === "'") {
      let text = "";
      i++;
      while (i < input.length && input[i] !== c) {
        if (input[i] === "\\" && i + 1 < input.length) i++;
        text += input[i++];
      }
      if (i >= input.length) throw new Parse(`a text that is not closed (no ${c})`, start, input.length);
      tokens.push({ kind: "string", text: input.slice(start, ++i), value: text, start, end: i });
    } else if (c === "/") {
      let body = "";
      i++;
      while (i < input.length && input[i] !== "/") {
        if (input[i] === "\\" && i + 1 < input.length) body += input[i++];
        body += input[i++];
      }
      if (i >= input.length) throw new Parse("a regular expression that is not closed (no /)", start, input.length);
      i++;
      let flags = "";
      while (i < input.length && /[a-z]/.test(input[i]!)) flags += input[i++];
      let value: RegExp;
      try {
        value = new RegExp(body, flags);
      } catch (e) {
        throw new Parse(`not a regular expression: ${(e as Error).message}`, start, i);
      }
      tokens.push({ kind: "regex", text: input.slice(start, i), value, start, end: i });
    } else if (/[0-9.\-]/.test(c) && /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?/.test(input.slice(i))) {
      const m = /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?/.exec(input.slice(i))!;
      i += m[0].length;
      tokens.push({ kind: "number", text: m[0], value: Number(m[0]), start, end: i });
    } else if (/[A-Za-z_]/.test(c)) {
      while (i < input.length && /[A-Za-z0-9_.\/]/.test(input[i]!)) i++;
      tokens.push({ kind: "name", text: input.slice(start, i), start, end: i });
    } else {
      const op = OPS.find((o) => input.startsWith(o, i));
      if (!op) throw new Parse(`unexpected '${c}'`, start, start + 1);
      i += op.length;
      tokens.push({ kind: "op", text: op, start, end: i });
    }
  }
  tokens.push({ kind: "end", text: "", start: input.length, end: input.length });
  return tokens;
}

type Node = (s: SampleView) => Value;

class Parser {
  private at = 0;
  constructor(
    private readonly tokens: Token[],
    private readonly context: FilterContext,
  ) {}

  private peek(): Token {
    return this.tokens[this.at]!;
  }
  private next(): Token {
    return this.tokens[this.at++]!;
  }
  private word(w: string): boolean {
    const t = this.peek();
    return t.kind === "name" && t.text.toLowerCase() === w;
  }

  parse(): Node {
    const node = this.or();
    const rest = this.peek();
    if (rest.kind !== "end") throw new Parse(`expected 'and', 'or' or the end, got '${rest.text}'`, rest.start, rest.end);
    return node;
  }

  private or(): Node {
    let left = this.and();
    while (this.word("or")) {
      this.next();
      const l = left;
      const r = this.and();
      left = (s) => Boolean(l(s)) || Boolean(r(s));
    }
    return left;
  }

  private and(): Node {
    let left = this.unary();
    while (this.word("and")) {
      this.next();
      const l = left;
      const r = this.unary();
      left = (s) => Boolean(l(s)) && Boolean(r(s));
    }
    return left;
  }

  private unary(): Node {
    if (this.word("not")) {
      this.next();
      const inner = this.unary();
      return (s) => !inner(s);
    }
    return this.compare();
  }

  private compare(): Node {
    const leftToken = this.peek();
    const left = this.operand();
    const op = this.peek();
    if (op.kind !== "op") return left;
    this.next();
    const rightToken = this.peek();
    const right = this.operand();
    if (op.text === "~") {
      if (rightToken.kind !== "string" && rightToken.kind !== "regex") {
        throw new Parse("'~' matches a text: give \"words\" or /regex/", rightToken.start, rightToken.end);
      }
      const pattern = rightToken.kind === "regex" ? (rightToken.value as RegExp) : null;
      const needle = rightToken.kind === "string" ? String(rightToken.value).toLowerCase() : "";
      return (s) => {
        const v = left(s);
        if (v === null || v === undefined) return false;
        const text = typeof v === "string" ? v : JSON.stringify(v);
        if (pattern) {
          pattern.lastIndex = 0;
          return pattern.test(text);
        }
        return text.toLowerCase().includes(needle);
      };
    }
    if ((op.text === "<" || op.text === ">" || op.text === "<=" || op.text === ">=") && (leftToken.kind === "string" || rightToken.kind === "string")) {
      const t = leftToken.kind === "string" ? leftToken : rightToken;
      throw new Parse(`'${op.text}' compares numbers, not a text`, t.start, t.end);
    }
    return (s) => compareValues(left(s), op.text, right(s));
  }

  private operand(): Node {
    const t = this.next();
    switch (t.kind) {
      case "number":
      case "string":
      case "regex": {
        const v = t.value;
        return () => v;
      }
      case "paren": {
        if (t.text === ")") throw new Parse("a ')' without its '('", t.start, t.end);
        const inner = this.or();
        const close = this.next();
        if (close.kind !== "paren" || close.text !== ")") throw new Parse("expected ')'", close.start, close.end);
        return inner;
      }
      case "name":
        return this.field(t);
      case "end":
        throw new Parse("the expression ends too soon: expected a field or a value", t.start, t.end);
      default:
        throw new Parse(`expected a field or a value, got '${t.text}'`, t.start, t.end);
    }
  }

  private field(t: Token): Node {
    const name = t.text;
    const lower = name.toLowerCase();
    if (lower === "true") return () => true;
    if (lower === "false") return () => false;
    if (lower === "null") return () => null;
    if (lower === "and" || lower === "or" || lower === "not") throw new Parse(`'${name}' needs a condition before it`, t.start, t.end);
    const builtin = Object.hasOwn(FIELDS, lower) ? FIELDS[lower]! : null;
    if (builtin) {
      const context = this.context;
      return (s) => builtin.get(s, context);
    }
    const getter = columnGetter(name, this.context);
    if (getter) return getter;
    const columns = Object.keys(this.context.batch ?? {}).filter((k) => k !== "imported");
    const imported = importedKeys(this.context);
    const known = [...FILTER_FIELDS, ...columns, ...imported.map((k) => `imported.${k}`)];
    throw new Parse(`unknown field '${name}' (fields: ${known.join(", ")})`, t.start, t.end);
  }
}

/** The imported fields' keys of a run's column, read once (a run's final batch does not change). */
const keysOfColumn = new WeakMap<unknown[], string[]>();

/** The keys of the imported fields any sample has (every sample: a run of several files may add some late). */
function importedKeys(context: FilterContext): string[] {
  const column = context.batch?.imported;
  if (!Array.isArray(column)) return [];
  let keys = keysOfColumn.get(column);
  if (!keys) {
    const found = new Set<string>();
    for (const entry of column) {
      const fields = (entry as { fields?: unknown } | null)?.fields;
      if (fields && typeof fields === "object") for (const k of Object.keys(fields)) found.add(k);
    }
    keys = [...found];
    keysOfColumn.set(column, keys);
  }
  return keys;
}

/** A final batch column (`advantages`, a reward component), or an imported field (`imported.uid`, or `uid` alone). */
function columnGetter(name: string, context: FilterContext): Getter | null {
  const batch = context.batch;
  if (!batch) return null;
  if (name.startsWith("imported.")) {
    const key = name.slice("imported.".length);
    if (!importedKeys(context).includes(key)) return null;
    return (s) => importedField(batch, s.sample, key);
  }
  if (Object.hasOwn(batch, name) && name !== "imported") {
    const column = batch[name]!;
    return (s) => column[s.sample] as Value;
  }
  if (importedKeys(context).includes(name)) return (s) => importedField(batch, s.sample, name);
  return null;
}

function importedField(batch: Record<string, unknown[]>, sample: number, key: string): Value {
  const fields = (batch.imported?.[sample] as { fields?: Record<string, unknown> } | null)?.fields;
  return fields && Object.hasOwn(fields, key) ? (fields[key] as Value) : undefined;
}

function compareValues(a: Value, op: string, b: Value): boolean {
  if (a === undefined || b === undefined) return op === "!=";
  if (op === "==") return equal(a, b);
  if (op === "!=") return !equal(a, b);
  if (typeof a !== "number" || typeof b !== "number") return false;
  if (op === "<") return a < b;
  if (op === "<=") return a <= b;
  if (op === ">") return a > b;
  return a >= b;
}

function equal(a: Value, b: Value): boolean {
  if (a === null || b === null) return a === b;
  if (typeof a === "object" || typeof b === "object") return JSON.stringify(a) === JSON.stringify(b);
  return a === b;
}

/** The value of a field (or any operand) per sample, for sorting by it; or why the text names none. */
export function compileValue(text: string, context: FilterContext = {}): { get: (s: SampleView) => unknown } | { error: FilterError } {
  try {
    const node = new Parser(tokenize(text), context).parse();
    return { get: (s) => node(s) };
  } catch (e) {
    if (e instanceof Parse) return { error: { message: e.message, start: e.start, end: e.end } };
    throw e;
  }
}

/** Sample numbers in the order of `get`'s value (numbers before the rest; ties and missing values by sample number). */
export function sortRows(rows: readonly number[], samples: readonly SampleView[], get: (s: SampleView) => unknown, down: boolean): number[] {
  const keyed = rows.map((n) => {
    const v = get(samples[n]!);
    return { n, v: typeof v === "number" && Number.isFinite(v) ? v : typeof v === "boolean" ? Number(v) : null };
  });
  keyed.sort((a, b) => {
    if (a.v === null || b.v === null) return a.v === b.v ? a.n - b.n : a.v === null ? 1 : -1;
    return a.v === b.v ? a.n - b.n : down ? b.v - a.v : a.v - b.v;
  });
  return keyed.map((k) => k.n);
}

/** The fields a run's samples can be sorted by: the numeric built-ins, the final batch's number columns, the imported numbers. */
export function sortableFields(context: FilterContext): string[] {
  const numeric = ["reward", "turns", "tokens", "messages", "idx", "mismatch", "group_size", "group_std"];
  const batch = context.batch ?? {};
  const columns = Object.keys(batch).filter((k) => k !== "imported" && batch[k]!.some((v) => typeof v === "number"));
  const imported = importedKeys(context).filter((k) => {
    const column = batch.imported ?? [];
    return column.some((e) => typeof (e as { fields?: Record<string, unknown> } | null)?.fields?.[k] === "number");
  });
  return [...numeric, ...columns.filter((c) => !numeric.includes(c)), ...imported.map((k) => `imported.${k}`)];
}

/** The expression's test of a sample, or where and why it cannot be read. Empty text: no filter (null). */
export function compileFilter(text: string, context: FilterContext = {}): { test: ((s: SampleView) => boolean) | null } | { error: FilterError } {
  if (!text.trim()) return { test: null };
  try {
    const node = new Parser(tokenize(text), context).parse();
    return { test: (s) => Boolean(node(s)) };
  } catch (e) {
    if (e instanceof Parse) return { error: { message: e.message, start: e.start, end: e.end } };
    throw e;
  }
}
