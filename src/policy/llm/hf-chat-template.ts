/**
 * A tokenizer's own chat template, rendered as Hugging Face's Python `apply_chat_template` renders it. transformers.js
 * renders with @huggingface/jinja, whose string methods `strip`, `lstrip` and `rstrip` ignore their argument:
 * `content.rstrip('\n')` trims every whitespace, so Qwen3's template lost the spaces and tabs beside a think block and
 * an answer's indentation, which Python keeps (the prompt's ids then differ from the reference's, and the token check
 * judged by the wrong rendering). Here the same engine renders the template, with those three methods read as
 * Python's, and the variables transformers.js passes. Browser-safe: the tokenizer is typed by what is used of it.
 */

import { Template } from "@huggingface/jinja";

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

/** The global functions the rewritten calls name (a name no template uses). */
const STRIP_FUNCTIONS = {
  strip: "__rollout_lab_python_strip",
  lstrip: "__rollout_lab_python_lstrip",
  rstrip: "__rollout_lab_python_rstrip",
} as const;
const STRIP_GLOBALS = {
  [STRIP_FUNCTIONS.strip]: (text: unknown, chars?: unknown) => pythonStrip(text, chars, "both"),
  [STRIP_FUNCTIONS.lstrip]: (text: unknown, chars?: unknown) => pythonStrip(text, chars, "left"),
  [STRIP_FUNCTIONS.rstrip]: (text: unknown, chars?: unknown) => pythonStrip(text, chars, "right"),
};

interface Node {
  type?: unknown;
  [key: string]: unknown;
}

/**
 * Rewrites every `x.strip(…)`, `x.lstrip(…)` and `x.rstrip(…)` of the parsed template (no more than one argument, given
 * by position, as Python's take) into a call of the global Python one with `x` first, in place.
 */
function withPythonStrip(node: unknown, seen = new Set<unknown>()): void {
  if (node === null || typeof node !== "object" || seen.has(node)) return;
  seen.add(node);
  if (Array.isArray(node)) {
    for (const child of node) withPythonStrip(child, seen);
    return;
  }
  for (const child of Object.values(node)) withPythonStrip(child, seen);
  const call = node as Node;
  if (call.type !== "CallExpression") return;
  const callee = call.callee as Node;
  const args = call.args as Node[];
  if (callee?.type !== "MemberExpression" || callee.computed) return;
  const property = callee.property as Node;
  const name = property?.type === "Identifier" ? (property.value as string) : null;
  if (name !== "strip" && name !== "lstrip" && name !== "rstrip") return;
  if (args.length > 1 || args.some((a) => a.type === "KeywordArgumentExpression")) return;
  // The method's Identifier node becomes the global's name: the interpreter reads nodes by their `type`.
  property.value = STRIP_FUNCTIONS[name];
  call.callee = property;
  call.args = [callee.object as Node, ...args];
}

const compiled = new Map<string, Template>();

function compile(source: string): Template {
  let template = compiled.get(source);
  if (!template) {
    template = new Template(source);
    withPythonStrip(template.parsed);
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
    ...STRIP_GLOBALS,
  });
}
