/**
 * The problems a turn cell of the overview carries as a badge: what the run recorded (a truncated response, the
 * invalid-action assessment's violations: ../run/outcome.ts `turnProblems`), and what the transcript finds in the
 * assistant's text when the assessment was off and recorded nothing: tool calls the Hermes parser rejects or whose
 * arguments do not fit their schema, and malformed thinking. The same words either way, so each problem is named once.
 */

import type { Message } from "../../core/index.js";
import type { SampleView, TurnView } from "../run/run-model.js";
import { turnProblems } from "../run/outcome.js";
import { analyzeAssistantText } from "./transcript/segments.js";

export type ThinkingStyle = "paired" | "closing_only";

// An assistant message's text never changes: its findings are worked out once per message and style.
const found = new WeakMap<Message, Map<ThinkingStyle, string[]>>();

/** What the transcript would mark in an assistant message (../views/transcript/parts.tsx `AssistantMessage`). */
export function textProblems(message: Message, thinkingStyle: ThinkingStyle): string[] {
  let byStyle = found.get(message);
  const cached = byStyle?.get(thinkingStyle);
  if (cached) return cached;
  const analysis = analyzeAssistantText(message.content, { thinkingStyle });
  const problems: string[] = [];
  if (analysis.toolCalls.some((c) => c.verdict.status !== "parsed") || (analysis.toolCallError !== null && analysis.toolCalls.length > 0)) {
    problems.push("a tool call that does not parse");
  }
  // Arguments checked against the schemas the lab knows; a name it does not know may be a user module's tool, so an
  // unknown name is no badge (the assessment, when on, knows the run's tools and says so).
  if (analysis.toolCalls.some((c) => c.schema?.known && c.schema.errors.length > 0)) problems.push("a tool call whose arguments do not fit its schema");
  if (analysis.malformedThinking) problems.push("malformed thinking");
  const result = [...new Set(problems)];
  if (!byStyle) found.set(message, (byStyle = new Map()));
  byStyle.set(thinkingStyle, result);
  return result;
}

/** A turn's problems: those recorded, or (none recorded) those its assistant text shows. */
export function turnBadges(s: SampleView, t: TurnView, thinkingStyle: ThinkingStyle): string[] {
  const recorded = turnProblems(s, t);
  const assistant = t.assistantIndex === null ? undefined : s.messages[t.assistantIndex];
  const assessed = t.violations.length > 0 || (assistant?.invalid_action_violations?.length ?? 0) > 0;
  if (assessed || !assistant) return recorded;
  return [...new Set([...recorded, ...textProblems(assistant, thinkingStyle)])];
}
