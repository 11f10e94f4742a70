import { describe, expect, it } from "vitest";
import type { Message } from "../../core/index.js";
import type { SampleView, TurnView } from "../run/run-model.js";
import { textProblems, turnBadges } from "./turn-badges.js";

const assistant = (content: string, extra: Partial<Message> = {}): Message => ({ role: "assistant", content, token_ids: [], generation_logprobs: [], ...extra });

function sampleWith(message: Message, turn: Partial<TurnView> = {}): { s: SampleView; t: TurnView } {
  const t = { turn: 0, assistantIndex: 0, observationIndex: null, responseTruncated: false, violations: [], ...turn } as unknown as TurnView;
  const s = { messages: [message], turns: [t] } as unknown as SampleView;
  return { s, t };
}

describe("turn badges", () => {
  it("a tool call that does not parse, with the assessment off (nothing recorded), is found in the text", () => {
    const { s, t } = sampleWith(assistant('<tool_call>{"name": "run_shell", "arguments": </tool_call>'));
    expect(turnBadges(s, t, "paired")).toEqual(["a tool call that does not parse"]);
  });

  it("arguments that do not fit a known tool's schema, and malformed thinking", () => {
    expect(textProblems(assistant('<tool_call>{"name": "run_shell", "arguments": {"command": 5}}</tool_call>'), "paired")).toEqual([
      "a tool call whose arguments do not fit its schema",
    ]);
    expect(textProblems(assistant("<think>unclosed and then <think> again"), "paired")).toContain("malformed thinking");
  });

  it("a clean turn, and a call of a tool the lab does not know (a user module's), carry none", () => {
    expect(textProblems(assistant('<tool_call>{"name": "run_shell", "arguments": {"command": "ls"}}</tool_call>'), "paired")).toEqual([]);
    expect(textProblems(assistant('<tool_call>{"name": "my_module_tool", "arguments": {}}</tool_call>'), "paired")).toEqual([]);
  });

  it("what the run recorded wins: an assessed turn's violations are its badges, not the text's findings again", () => {
    const violation = { type: "malformed_tool_call", severity: 1, locus: "reward", detail: "bad json" } as never;
    const { s, t } = sampleWith(assistant("<tool_call>{oops</tool_call>"), { violations: [violation], responseTruncated: true });
    const badges = turnBadges(s, t, "paired");
    expect(badges).toContain("response truncated at its token limit");
    expect(badges.filter((b) => b === "a tool call that does not parse")).toHaveLength(1);
  });
});
