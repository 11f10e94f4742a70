/**
 * The workspace's random action (structured mode): a uniformly random session tool as a Hermes `<tool_call>`, its
 * arguments drawn from what the context shows. Always schema-valid for the tools the prompt advertises.
 */

import { pyJsonDumps, type Rng } from "../../core/index.js";
import type { OracleSolver } from "../oracle/types.js";
import { WORKSPACE_MARK } from "../oracle/workspace.js";

const TOOLS = ["run_shell", "read_file", "write_file", "task_complete"] as const;
const ROOT = "/workspace";
/** Absolute workspace paths; a sentence's full stop after one is not part of it. */
const PATH_RE = /\/workspace(?:\/[\w.@+-]+)*/g;
/** A command's stdout in an observation: after `[exit=N]`, up to the envelope's end or a special token. */
const OUTPUT_RE = /\[exit=-?\d+\]\n([\s\S]*?)(?=\n<\/tool_response>|<\|im_end\|>|<\|im_start\|>|<tool_call>|$)/g;
const GENERIC_COMMANDS = ["ls", "ls -R", "pwd", "find /workspace -type f"];
const PATH_COMMANDS = ["cat", "wc -l", "head -n 5"];

/** The distinct `/workspace…` paths in the context, in order of appearance. */
export function workspacePaths(text: string): string[] {
  const paths = (text.match(PATH_RE) ?? []).map((p) => p.replace(/\.+$/, ""));
  return [...new Set([ROOT, ...paths])];
}

/** The non-empty lines of every command output so far. */
export function outputLines(text: string): string[] {
  const lines = [...text.matchAll(OUTPUT_RE)].flatMap((m) => m[1]!.split("\n"));
  return [...new Set(lines.map((l) => l.trimEnd()).filter((l) => l !== "" && l !== "[stderr]"))];
}

/** A word for sh: as is when it has no special characters, else single-quoted. */
function quote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'"'"'`)}'`;
}

function shellCommand(rng: Rng, paths: string[]): string {
  const template = rng.choice([...GENERIC_COMMANDS, ...PATH_COMMANDS.map((c) => `${c} <path>`)]);
  return template.endsWith("<path>") ? template.replace("<path>", quote(rng.choice(paths))) : template;
}

function toolArguments(tool: (typeof TOOLS)[number], rng: Rng, text: string): Record<string, string> {
  const paths = workspacePaths(text);
  // Files are what a write can target: the root itself is a directory.
  const files = paths.length > 1 ? paths.filter((p) => p !== ROOT) : paths;
  switch (tool) {
    case "run_shell":
      return { command: shellCommand(rng, paths) };
    case "read_file":
      return { path: rng.choice(files) };
    case "write_file":
      return { path: rng.choice(files), content: `${rng.choice([...outputLines(text), ...paths])}\n` };
    case "task_complete":
      return {};
  }
}

export const randomWorkspaceSolver: OracleSolver = {
  env: "workspace",
  matches: (text) => text.includes(WORKSPACE_MARK),
  respond: ({ promptText, rng }) => {
    const at = promptText.indexOf("<|im_start|>assistant\n");
    if (at < 0) throw new Error("random-action workspace: the context has no assistant turn to answer");
    if (!promptText.slice(0, at).includes("<tools>")) throw new Error("random-action workspace: only the structured tool-call mode is supported (the prompt lists no <tools>)");
    const tool = rng.choice(TOOLS);
    const call = `<tool_call>\n${pyJsonDumps({ name: tool, arguments: toolArguments(tool, rng, promptText) })}\n</tool_call>`;
    // A template that prefills `<think>\n` leaves a block open: close it, as the oracle does.
    return /<think>\s*$/.test(promptText) ? `</think>\n\n${call}` : call;
  },
};
