import { describe, expect, it } from "vitest";
import { chatPrompt, renderChatTemplate, type ChatTemplateMessage } from "./chat-template.js";
import { makeTool, SESSION_TOOLS } from "./registry.js";

const WEATHER = makeTool("get_weather", "Get the current weather for a city.", {
  type: "object",
  properties: { city: { type: "string", description: "City name" } },
  required: ["city"],
});

const TOOLS_HEADER =
  "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n" +
  "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n";
const TOOLS_FOOTER =
  "\n</tools>\n\nFor each function call, return a json object with function name and arguments within " +
  '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n';

describe("renderChatTemplate (Qwen2.5 Hermes format)", () => {
  it("matches the Qwen2.5 literal render of hermes-and-thinking.md §1.5 byte for byte", () => {
    const messages: ChatTemplateMessage[] = [
      { role: "system", content: "You are a helpful assistant." },
      { role: "user", content: "What's the weather in Paris?" },
      {
        role: "assistant",
        content: "",
        tool_calls: [{ type: "function", function: { name: "get_weather", arguments: { city: "Paris" } } }],
      },
      { role: "tool", content: '{"temp_c": 18, "sky": "cloudy"}' },
      { role: "assistant", content: "It is 18 °C and cloudy in Paris." },
    ];
    const expected = `<|im_start|>system
You are a helpful assistant.

# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>
{"type": "function", "function": {"name": "get_weather", "description": "Get the current weather for a city.", "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City name"}}, "required": ["city"]}}}
</tools>

For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call><|im_end|>
<|im_start|>user
What's the weather in Paris?<|im_end|>
<|im_start|>assistant
<tool_call>
{"name": "get_weather", "arguments": {"city": "Paris"}}
</tool_call><|im_end|>
<|im_start|>user
<tool_response>
{"temp_c": 18, "sky": "cloudy"}
</tool_response><|im_end|>
<|im_start|>assistant
It is 18 °C and cloudy in Paris.<|im_end|>
`;
    expect(renderChatTemplate(messages, { tools: [WEATHER] })).toBe(expected);
  });

  it("puts content before the calls and groups consecutive tool messages into one user turn", () => {
    const text = renderChatTemplate(
      [
        { role: "user", content: "Paris and Rome?" },
        {
          role: "assistant",
          content: "Checking both.",
          tool_calls: [
            { function: { name: "get_weather", arguments: { city: "Paris" } } },
            { function: { name: "get_weather", arguments: { city: "Rome" } } },
          ],
        },
        { role: "tool", content: '{"temp_c": 18}' },
        { role: "tool", content: '{"temp_c": 25}' },
      ],
      { addGenerationPrompt: true },
    );
    expect(text).toBe(
      "<|im_start|>user\nParis and Rome?<|im_end|>\n" +
        "<|im_start|>assistant\nChecking both.\n" +
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n' +
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n</tool_call><|im_end|>\n' +
        '<|im_start|>user\n<tool_response>\n{"temp_c": 18}\n</tool_response>\n<tool_response>\n{"temp_c": 25}\n</tool_response><|im_end|>\n' +
        "<|im_start|>assistant\n",
    );
  });

  it("renders the tools block with the built-in default system text when no system message is given", () => {
    const text = renderChatTemplate([{ role: "user", content: "hi" }], { tools: SESSION_TOOLS.chatTemplateTools() });
    expect(text.startsWith(`<|im_start|>system\nYou are a helpful assistant.\n\n${TOOLS_HEADER}`)).toBe(true);
    expect(text.endsWith(`${TOOLS_FOOTER}<|im_start|>user\nhi<|im_end|>\n`)).toBe(true);
    expect(text.split("\n").filter((l) => l.startsWith('{"type": "function"'))).toHaveLength(4);
  });

  it("renders no system turn without tools or a system message, and an empty tool list is no tools", () => {
    expect(renderChatTemplate([{ role: "user", content: "hi" }], { tools: [] })).toBe("<|im_start|>user\nhi<|im_end|>\n");
  });

  it("chatPrompt ends with the generation prompt and can strip like Python", () => {
    expect(chatPrompt("hi", "sys")).toBe(
      "<|im_start|>system\nsys<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
    );
    expect(chatPrompt("hi", null)).toBe("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
    expect(chatPrompt("hi", null, true)).toBe("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant");
  });
});
