/**
 * Turning an assistant turn into a shell command, as the derived library's `MultiTurnSessionEnvironment` does
 * (fork-additions.md §6.2): the structured parser (`_parse_structured_action`, exactly one valid `SESSION_TOOLS`
 * call per turn) and the legacy fenced-bash parser (`_parse_action`), with the reference's command strings for
 * read_file and write_file. The workspace shell runs those strings as they are (it understands `$(...)`), so the
 * observation is what the reference's container would print.
 */

import { assessToolCalls, SESSION_TOOLS } from "../../core/index.js";
import { utf8ToBase64 } from "./base64.js";
import { utf8Length } from "./fs.js";

export const STRUCTURED_NUDGE =
  "No runnable tool call found. Reply with exactly one tool call (run_shell, read_file, write_file, or task_complete to finish).";
export const LEGACY_NUDGE = "No shell command found. Reply with exactly one ```bash code block, or TASK_COMPLETE to finish.";

export interface StructuredAction {
  command: string;
  done: boolean;
  invalid: boolean;
}

export interface LegacyAction {
  command: string;
  done: boolean;
}

/** Single-quotes a word for sh: each `'` becomes the five characters `'"'"'`. */
export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'"'"'`)}'`;
}

/** The reference's read_file command. */
export function buildReadFileCommand(path: string): string {
  return `cat -- ${shellQuote(path)}`;
}

/** The reference's write_file command: creates the parent, writes the content through base64, reports the size. */
export function buildWriteFileCommand(path: string, content: string): string {
  const p = shellQuote(path);
  return (
    `mkdir -p -- "$(dirname -- ${p})" && printf %s ${shellQuote(utf8ToBase64(content))} | base64 -d > ${p} && ` +
    `printf 'wrote %s bytes to %s\\n' ${utf8Length(content)} ${p}`
  );
}

const INVALID: StructuredAction = { command: "", done: false, invalid: true };

/** `_parse_structured_action`: malformed, or not exactly one valid call ("one action per turn"), is invalid. */
export function parseStructuredAction(text: string): StructuredAction {
  const assessment = assessToolCalls(text, SESSION_TOOLS);
  if (assessment.malformed || assessment.valid_calls.length !== 1) return { ...INVALID };
  const call = assessment.valid_calls[0]!;
  const args = call.arguments as Record<string, unknown>;
  switch (call.name) {
    case "task_complete":
      return { command: "", done: true, invalid: false };
    case "run_shell":
      return { command: String(args.command), done: false, invalid: false };
    case "read_file":
      return { command: buildReadFileCommand(String(args.path)), done: false, invalid: false };
    case "write_file":
      return { command: buildWriteFileCommand(String(args.path), String(args.content)), done: false, invalid: false };
    default:
      return { ...INVALID };
  }
}

const SHELL_FENCE = /```(?:bash|sh|shell|console)?\s*\n([\s\S]*?)```/;
const TASK_COMPLETE_LINE = /^\s*TASK_COMPLETE\s*$/m;

/** `_parse_action`: the first shell fence's body (stripped), and whether a line is exactly `TASK_COMPLETE`. */
export function parseLegacyAction(text: string): LegacyAction {
  const fence = SHELL_FENCE.exec(text);
  return { command: fence ? fence[1]!.trim() : "", done: TASK_COMPLETE_LINE.test(text) };
}
