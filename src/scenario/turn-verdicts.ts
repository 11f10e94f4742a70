/**
 * Each assistant turn of a rollout sample judged well-formed, malformed or not judged: the policy-quality benchmark's
 * measure (src/bench-support/policy-quality.ts) and the training data's (a learner's malformed turns, whose likelihood
 * a training stage lowers: src/training/collect.ts).
 *
 * Well-formed is judged per assistant turn from what the run already reports, never by re-parsing with our own rules:
 * - workspace (structured tool calls, invalid-action assessment on): the turn's `invalid_action_violations` of an
 *   invalid-action type (`env_invalid_action`: the environment found no single runnable call; `malformed_tool_call`,
 *   `schema_args`, `schema_unknown_tool`: the core's parse and schema checks). Malformed thinking is reported apart,
 *   since a call inside a broken think block still runs. Without the assessment, the environment's own parser decides.
 * - sliding puzzle: the environment's answer. "Invalid response format" (no `<action>` pair), "Unknown command" and
 *   "Invalid input format" (an action it cannot read) are malformed; a direction that cannot slide is a well-formed
 *   move that failed. The turn after the move budget ("Maximum moves … reached") is not judged: the action is not read.
 * - calculator: well-formed when the environment answered with a `<result>` or judged a final answer ("Correct!",
 *   "Incorrect final answer"); "Invalid response" and "Calculation failed" (an unknown operation, a division by
 *   zero) are not; "Maximum steps reached" is not judged.
 * - number guess: "Answer with <guess>N</guess>." is malformed; higher/lower/correct are well-formed.
 * A turn the environment never answered (the sample ended on an error or the sequence limit first) is not judged.
 */

import { isInvalidActionType, type Message } from "../core/index.js";
import { parseStructuredAction } from "../envs/workspace/tools.js";
import type { ResultSample } from "./result.js";

export type TurnVerdict = "well_formed" | "malformed" | "unjudged";

/** One sample as the judge reads it: its messages and whether the invalid-action assessment ran. */
export type JudgedSample = Pick<ResultSample, "message_log"> & { invalid_action_count?: unknown };

type TurnJudge = (assistant: Message, answer: Message | undefined, assessed: boolean) => TurnVerdict;

/** A judge that reads the environment's answer: `unjudged` and `malformed` patterns, else well-formed. */
const byAnswer =
  (unjudged: RegExp | null, malformed: RegExp): TurnJudge =>
  (_assistant, answer) => {
    if (answer === undefined) return "unjudged";
    if (unjudged?.test(answer.content)) return "unjudged";
    return malformed.test(answer.content) ? "malformed" : "well_formed";
  };

const invalidViolations = (m: Message) => (m.invalid_action_violations ?? []).filter((v) => isInvalidActionType(v.type));

/** The environments' own wording (src/envs/*, environments/number_guess.js); the tests run each to keep it true. */
const JUDGES: Readonly<Record<string, TurnJudge>> = {
  sliding_puzzle: byAnswer(/<error>Maximum moves \(\d+\) reached\.<\/error>/, /Invalid response format no move made|Unknown command\. Type 'help'|Invalid input format\. Use: slide row col/),
  calculator: byAnswer(/^<error>Maximum steps reached\./, /^(?!<result>|Correct! The final answer is |Incorrect final answer\. )/),
  number_guess: byAnswer(null, /^<environment>Answer with <guess>N<\/guess>\./),
  workspace: (assistant, answer, assessed) => {
    if (answer === undefined) return "unjudged";
    if (assessed) return invalidViolations(assistant).length > 0 ? "malformed" : "well_formed";
    return parseStructuredAction(assistant.content).invalid ? "malformed" : "well_formed";
  },
};

/** Each assistant turn's verdict, in order. */
export function judgeTurns(env: string, sample: JudgedSample): TurnVerdict[] {
  const judge = JUDGES[env];
  if (!judge) throw new Error(`no well-formedness judge for environment '${env}' (known: ${Object.keys(JUDGES).join(", ")})`);
  const assessed = sample.invalid_action_count !== undefined;
  const log = sample.message_log;
  const out: TurnVerdict[] = [];
  log.forEach((m, i) => {
    if (m.role !== "assistant") return;
    const next = log[i + 1];
    out.push(judge(m, next && next.role !== "assistant" ? next : undefined, assessed));
  });
  return out;
}
