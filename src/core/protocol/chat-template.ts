/**
 * The built-in model's ChatML chat template, in TypeScript (Qwen2.5's Hermes tool format): used to build
 * dataset prompts and to show a log as the template would render it. The model folder's Jinja template renders
 * the same text.
 *
 * A system turn is rendered when there is a system message, or tools (then with the default system text when
 * none was given); with neither there is no system turn, as `literals.md`'s `chat(user, system)` requires.
 */

import { pyJsonDumps } from "../python/repr.js";
import type { ToolSpec } from "./registry.js";

export const DEFAULT_SYSTEM_PROMPT = "You are a helpful assistant.";

export interface ChatTemplateMessage {
  role: string;
  content: string;
  tool_calls?: { type?: "function"; function: { name: string; arguments: unknown } }[];
}

export interface ChatTemplateOptions {
  tools?: readonly ToolSpec[] | null;
  addGenerationPrompt?: boolean;
}

function toolsBlock(tools: readonly ToolSpec[]): string {
  return (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n" +
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>" +
    tools.map((t) => `\n${pyJsonDumps(t)}`).join("") +
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments within " +
    '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
  );
}

export function renderChatTemplate(messages: readonly ChatTemplateMessage[], options: ChatTemplateOptions = {}): string {
  const tools = options.tools && options.tools.length ? options.tools : null;
  let out = "";
  let rest = messages;
  const first = messages[0];
  if (tools) {
    const system = first?.role === "system" ? first.content : DEFAULT_SYSTEM_PROMPT;
    out += `<|im_start|>system\n${system}\n\n${toolsBlock(tools)}<|im_end|>\n`;
    if (first?.role === "system") rest = messages.slice(1);
  }
  rest.forEach((m, i) => {
    if (m.role === "tool") {
      if (rest[i - 1]?.role !== "tool") out += "<|im_start|>user";
      out += `\n<tool_response>\n${m.content}\n</tool_response>`;
      if (rest[i + 1]?.role !== "tool") out += "<|im_end|>\n";
      return;
    }
    if (m.role === "assistant" && m.tool_calls?.length) {
      // Qwen2.5: `'\n' + content` only when the content is non-empty; each call is then preceded by `\n`.
      // The name goes in raw between quotes (Qwen2.5 does not JSON-escape it); the arguments through tojson.
      out += `<|im_start|>assistant${m.content ? `\n${m.content}` : ""}`;
      for (const call of m.tool_calls) {
        out += `\n<tool_call>\n{"name": "${call.function.name}", "arguments": ${pyJsonDumps(call.function.arguments)}}\n</tool_call>`;
      }
      out += "<|im_end|>\n";
      return;
    }
    out += `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`;
  });
  if (options.addGenerationPrompt) out += "<|im_start|>assistant\n";
  return out;
}

/**
 * `literals.md`'s `chat(user, system)`: the single-user-turn prompt of the reference datasets, ending with the
 * generation prompt. `strip` applies Python's `str.strip()` (the sliding puzzle's datasets do).
 */
export function chatPrompt(user: string, system: string | null, strip = false): string {
  const text = renderChatTemplate(
    [...(system !== null ? [{ role: "system", content: system }] : []), { role: "user", content: user }],
    { addGenerationPrompt: true },
  );
  return strip ? text.trim() : text;
}
