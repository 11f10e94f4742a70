/**
 * A tokenizer's own chat template, rendered as Hugging Face's Python `apply_chat_template` renders it. transformers.js
 * renders with @huggingface/jinja, whose string methods `strip`, `lstrip` and `rstrip` ignore their argument:
 * `content.rstrip('\n')` trims every whitespace, so Qwen3's template lost the spaces and tabs beside a think block and
 * an answer's indentation, which Python keeps (the prompt's ids then differ from the reference's, and the token check
 * judged by the wrong rendering). Here the same engine renders the template, with those three methods read as
 * Python's, and the variables transformers.js passes. Browser-safe: the tokenizer is typed by what is used of it.
 */

import { Template } from "@huggingface/jinja";
import { pyJsonDumps } from "../../core/index.js";

/** What rendering uses of a transformers.js `PreTrainedTokenizer` (any realm's instance fits). */
export interface ChatTemplateTokenizer {
  get_chat_template(options: { chat_template?: string | null; tools?: unknown[] }): string;
  /** Its tokenizer_config.json: the special tokens the template may name. */
  config: Record<string, unknown>;
}

export interface ChatTemplateOptions {
  tools?: readonly unknown[] | null;
  addGenerationPrompt: boolean;
}

/** The special tokens transformers.js passes to a template (its SPECIAL_TOKEN_ATTRIBUTES). */
const SPECIAL_TOKENS = ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"];

/** `str.isspace()`'s characters: what Python's `strip()` removes when given no characters. */
const PYTHON_WHITESPACE = new Set(Array.from("\t\n\v\f\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"));

/** Python's `str.strip`/`lstrip`/`rstrip`: `chars` (None: whitespace) removed from the chosen ends, by code point. */
export function pythonStrip(text: unknown, chars: unknown, ends: "both" | "left" | "right"): string {
  const method = ends === "both" ? "strip" : `${ends[0]}strip`;
  if (typeof text !== "string") throw new Error(`chat template: ${method}() of a ${text === null ? "None" : typeof text}, not a string`);
  if (chars !== null && chars !== undefined && typeof chars !== "string") throw new Error(`chat template: ${method} arg must be None or str`);
  const strip = typeof chars === "string" ? new Set(Array.from(chars)) : PYTHON_WHITESPACE;
  const points = Array.from(text);
  let start = 0;
  let end = points.length;
  if (ends !== "right") while (start < end && strip.has(points[start]!)) start++;
  if (ends !== "left") while (end > start && strip.has(points[end - 1]!)) end--;
  return points.slice(start, end).join("");
}

/** The global functions the rewritten calls name (names no template uses). */
const PYTHON = {
  strip: "__rollout_lab_python_strip",
  lstrip: "__rollout_lab_python_lstrip",
  rstrip: "__rollout_lab_python_rstrip",
  tojson: "__rollout_lab_python_tojson",
} as const;
const PYTHON_GLOBALS = {
  [PYTHON.strip]: (text: unknown, chars?: unknown) => pythonStrip(text, chars, "both"),
  [PYTHON.lstrip]: (text: unknown, chars?: unknown) => pythonStrip(text, chars, "left"),
  [PYTHON.rstrip]: (text: unknown, chars?: unknown) => pythonStrip(text, chars, "right"),
  [PYTHON.tojson]: (value: unknown, options?: unknown) => pythonToJson(value, options),
};

/** A value as the template engine hands it to a function: JavaScript's for a scalar; a Map or an array of runtime values for a mapping or a list. */
interface RuntimeValue {
  type: string;
  value: unknown;
}

/**
 * transformers' `tojson` (`json.dumps(x, ensure_ascii=False, indent=…)`, keys unsorted) of a value the engine hands
 * over: a float as Python writes it (`1e-05`, not `0.00001`). (Keys come in the order JavaScript gave them, integer-like
 * ones first, and a whole float such as 1.0 is the integer 1 by then: both are lost when the scenario's JSON is read.)
 */
function pythonToJson(value: unknown, options: unknown): string {
  const indentValue = options instanceof Map ? (options.get("indent") as RuntimeValue | undefined)?.value : undefined;
  const indent = typeof indentValue === "number" ? " ".repeat(indentValue) : typeof indentValue === "string" ? indentValue : null;
  const dump = (v: unknown, depth: number): string => {
    if (v instanceof Map) {
      const entries = [...v].map(([k, x]) => `${pyJsonDumps(String(k))}: ${dump(x, depth + 1)}`);
      return wrap("{", "}", entries, depth);
    }
    if (Array.isArray(v)) return wrap("[", "]", v.map((x) => dump(x, depth + 1)), depth);
    if (v !== null && typeof v === "object" && "type" in v && "value" in v) {
      const r = v as RuntimeValue;
      // A float literal of the template itself (`1.0`) keeps its point, as Python's float does.
      if (r.type === "FloatValue" && Number.isInteger(r.value)) return `${String(r.value)}.0`;
      if (r.type === "UndefinedValue") return "null";
      return dump(r.value, depth);
    }
    return pyJsonDumps(v ?? null);
  };
  const wrap = (open: string, close: string, items: string[], depth: number) => {
    if (items.length === 0) return `${open}${close}`;
    if (indent === null) return `${open}${items.join(", ")}${close}`;
    const inner = `\n${indent.repeat(depth + 1)}`;
    return `${open}${inner}${items.join(`,${inner}`)}\n${indent.repeat(depth)}${close}`;
  };
  return dump(value, 0);
}

interface Node {
  type?: unknown;
  [key: string]: unknown;
}

const identifier = (value: string): Node => ({ type: "Identifier", value });
const call = (name: string, args: Node[]): Node => ({ type: "CallExpression", callee: identifier(name), args });

/**
 * What Python's Jinja does otherwise, rewritten into calls of the global Python functions: `x.strip(…)`,
 * `x.lstrip(…)`, `x.rstrip(…)` (at most one argument, by position, as Python's take), the filter `x | trim(…)`
 * (Jinja's: `str.strip`), and `x | tojson(…)` (transformers': Python's number formatting). Returns the node in
 * place of `node`; its children are rewritten in place.
 */
function withPython(node: unknown, seen = new Set<unknown>()): unknown {
  if (node === null || typeof node !== "object" || seen.has(node)) return node;
  seen.add(node);
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) node[i] = withPython(node[i], seen);
    return node;
  }
  const n = node as Node;
  for (const key of Object.keys(n)) n[key] = withPython(n[key], seen);
  if (n.type === "CallExpression") {
    const callee = n.callee as Node;
    const args = n.args as Node[];
    if (callee?.type !== "MemberExpression" || callee.computed) return n;
    const property = callee.property as Node;
    const name = property?.type === "Identifier" ? property.value : null;
    if (name !== "strip" && name !== "lstrip" && name !== "rstrip") return n;
    if (args.length > 1 || args.some((a) => a.type === "KeywordArgumentExpression")) return n;
    return call(PYTHON[name], [callee.object as Node, ...args]);
  }
  if (n.type === "FilterExpression") {
    const filter = n.filter as Node;
    const named = filter?.type === "Identifier" ? { name: filter.value, args: [] as Node[] } : filter?.type === "CallExpression" && (filter.callee as Node)?.type === "Identifier" ? { name: (filter.callee as Node).value, args: filter.args as Node[] } : null;
    if (named?.name === "trim" && named.args.length <= 1 && !named.args.some((a) => a.type === "KeywordArgumentExpression")) {
      return call(PYTHON.strip, [n.operand as Node, ...named.args]);
    }
    // `tojson` with at most the `indent` keyword (transformers' other options are left to the engine).
    const onlyIndent = named?.args.every((a) => a.type === "KeywordArgumentExpression" && (a.key as Node)?.value === "indent");
    if (named?.name === "tojson" && onlyIndent) return call(PYTHON.tojson, [n.operand as Node, ...named.args]);
  }
  return n;
}

const compiled = new Map<string, Template>();

function compile(source: string): Template {
  let template = compiled.get(source);
  if (!template) {
    template = new Template(source);
    withPython(template.parsed);
    compiled.set(source, template);
  }
  return template;
}

/** The tokenizer's template (its tool-use one where it has several and `tools` are given), rendered to text. */
export function renderTokenizerChatTemplate(
  tokenizer: ChatTemplateTokenizer,
  messages: readonly { role: string; content: string }[],
  options: ChatTemplateOptions,
): string {
  const tools = options.tools ? [...options.tools] : null;
  const source = tokenizer.get_chat_template(tools ? { tools } : {});
  if (typeof source !== "string") throw new Error(`chat_template must be a string, but got ${typeof source}`);
  const special: Record<string, string> = {};
  for (const key of SPECIAL_TOKENS) {
    const value = tokenizer.config[key];
    if (typeof value === "string" && value) special[key] = value;
    else if (value && typeof value === "object" && (value as { __type?: unknown }).__type === "AddedToken") special[key] = String((value as { content: unknown }).content);
  }
  return compile(source).render({
    messages: messages.map((m) => ({ ...m })),
    add_generation_prompt: options.addGenerationPrompt,
    tools,
    documents: null,
    ...special,
    ...PYTHON_GLOBALS,
  });
}
