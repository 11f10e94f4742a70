/**
 * The model folder's Jinja chat template: Qwen2.5-Instruct's ChatML + Hermes-tools template, adjusted to render
 * byte-identically to `core/protocol/chat-template.ts` (`renderChatTemplate`): no system turn without tools or a
 * system message, the default system text "You are a helpful assistant." with tools, and any other role rendered
 * as a plain turn. Every tag trims the whitespace before it, so the line breaks below are not part of the output.
 */

import { DEFAULT_SYSTEM_PROMPT } from "../../core/protocol/chat-template.js";

const TOOLS_INTRO =
  "\\n\\n# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\n" +
  "You are provided with function signatures within <tools></tools> XML tags:\\n<tools>";
const TOOLS_OUTRO =
  "\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within " +
  '<tool_call></tool_call> XML tags:\\n<tool_call>\\n{"name": <function-name>, "arguments": <args-json-object>}\\n</tool_call><|im_end|>\\n';

export const CHAT_TEMPLATE = [
  "{%- if tools %}",
  "{{- '<|im_start|>system\\n' }}",
  "{%- if messages[0].role == 'system' %}",
  "{{- messages[0].content }}",
  "{%- else %}",
  `{{- '${DEFAULT_SYSTEM_PROMPT}' }}`,
  "{%- endif %}",
  `{{- '${TOOLS_INTRO}' }}`,
  "{%- for tool in tools %}",
  "{{- '\\n' + (tool | tojson) }}",
  "{%- endfor %}",
  `{{- '${TOOLS_OUTRO}' }}`,
  "{%- endif %}",
  "{%- for message in messages %}",
  // With tools the first system message already went into the tools turn. (No `not` here: the Jinja bundled in
  // transformers.js 4.3.2 evaluates `not []` as false.)
  "{%- if loop.first and message.role == 'system' and tools %}",
  "{%- elif message.role == 'tool' %}",
  // Consecutive tool results share one user turn (Qwen2.5).
  "{%- if loop.first or messages[loop.index0 - 1].role != 'tool' %}",
  "{{- '<|im_start|>user' }}",
  "{%- endif %}",
  "{{- '\\n<tool_response>\\n' + message.content + '\\n</tool_response>' }}",
  "{%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}",
  "{{- '<|im_end|>\\n' }}",
  "{%- endif %}",
  "{%- elif message.role == 'assistant' and message.tool_calls %}",
  "{{- '<|im_start|>assistant' }}",
  "{%- if message.content %}",
  "{{- '\\n' + message.content }}",
  "{%- endif %}",
  "{%- for tool_call in message.tool_calls %}",
  // The name goes in raw between quotes, as Qwen2.5 does; the arguments via tojson.
  "{{- '\\n<tool_call>\\n{\"name\": \"' + tool_call.function.name + '\", \"arguments\": ' + (tool_call.function.arguments | tojson) + '}\\n</tool_call>' }}",
  "{%- endfor %}",
  "{{- '<|im_end|>\\n' }}",
  "{%- else %}",
  "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}",
  "{%- endif %}",
  "{%- endfor %}",
  "{%- if add_generation_prompt %}",
  "{{- '<|im_start|>assistant\\n' }}",
  "{%- endif %}",
].join("\n");
