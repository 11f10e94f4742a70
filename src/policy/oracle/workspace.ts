/**
 * The workspace oracle. From the context text alone it reads the task (the `Task: …` line of the prompt), picks
 * the two-step plan for that kind of task (look something up, then write the result), and answers with the next
 * step: a Hermes `<tool_call>` when the prompt advertises tools, else a ```bash block (legacy mode). A step is done
 * when its exact text appears after the prompt (so a mistaken turn does not advance the plan, and an unclosed
 * `<think>` before a correct call does); the output a later step needs is read from the observation that followed
 * the step's call, whether the rollout wrapped it in the `<tool_response>` envelope or appended it raw. When the
 * plan is done it calls task_complete (TASK_COMPLETE in legacy mode).
 *
 * Mistakes (with probability `errorRate` per turn, one kind drawn uniformly), after which the plan goes on:
 * structured mode: prose without a call, an unclosed `<think>` before the planned call (executed, but malformed
 * thinking), a call whose arguments fail the schema, a call whose JSON does not parse; legacy mode: prose, an
 * unclosed `<think>` before the planned block, a ```python block (no shell command). In both modes, where the next
 * step looks up a file whose name has look-alikes (`server.log` for `worker.log`), also a well-formed look-up of a
 * look-alike, which fails with "No such file": the plan then looks up the right one.
 *
 * It imports no environment code: it knows the instructions' wording and the shell's output format as a policy
 * that has read them would.
 */

import { pyJsonDumps, type Rng } from "../../core/index.js";
import type { OracleContext, OracleSolver } from "./types.js";

/** How every workspace prompt's user text starts. */
export const WORKSPACE_MARK = "You are working in a virtual workspace at /workspace";
const GENERATION_PROMPT = "<|im_start|>assistant\n";

type Action =
  | { tool: "run_shell"; command: string }
  | { tool: "read_file"; path: string }
  | { tool: "write_file"; path: string; content: string; legacy: string }
  | { tool: "task_complete" };

/** Step i of a plan, given the stdout of each earlier step's observation (null when it cannot be found). */
type Step = (outputs: (string | null)[]) => Action;

const PROSE = [
  "Let me look around the workspace before doing anything.",
  "I think I know what to do next.",
  "First I need to understand the task better.",
];

/**
 * Where an observation ends in the context: the envelope's close, a special token, or the start of the next
 * response this oracle wrote (raw observations are followed directly by it).
 */
const OBSERVATION_ENDS = ["\n</tool_response>", "<|im_end|>", "<|im_start|>", "<tool_call>", "```", "<think>", "</think>", "TASK_COMPLETE", ...PROSE];

export interface WorkspaceOracleOptions {
  /** Call task_complete once this many steps of the plan are done, even if the task is not (for tests, demos). */
  finishAfterSteps?: number;
  /**
   * How many times as likely as each other kind of mistake the look-alike look-up is, where one is possible (a whole
   * number, default 1: all kinds alike). Training data can raise it so that a model sees the way back from "No such
   * file" often (`train:data --look-alike-weight`, src/training/collect.ts); the error rate, and so how many turns
   * are mistakes, stays the same.
   */
  lookAlikeWeight?: number;
  /**
   * How many times as likely as each other kind of mistake a `write_file` call with its path and no `content` is, where
   * the next action is a structured `write_file` (a whole number, default 0: never, as the lab's oracle). It is the
   * `read_file` call's ending after a path, the slip trained models make (docs/training.md, section 7, session 26);
   * training data can show the way back from it (`train:data --path-only-write-weight`).
   */
  pathOnlyWriteWeight?: number;
  /**
   * Structured `write_file` calls name their `content` before their `path` (default false: path first, as the lab's
   * oracle). JSON's order is free and the environment reads either; with the content first, a model decides whether
   * the call has content at its first argument, next to the tool's name, rather than after the path, where a
   * `read_file` call ends (docs/training.md, section 7, session 28). Training data can write it so
   * (`train:data --content-first-writes`).
   */
  contentFirstWrites?: boolean;
}

export function makeWorkspaceOracle(options: WorkspaceOracleOptions = {}): OracleSolver {
  const weight = options.lookAlikeWeight ?? 1;
  if (!Number.isInteger(weight) || weight < 1) throw new RangeError(`workspace oracle: lookAlikeWeight must be a whole number ≥ 1, got ${weight}`);
  const pathOnly = options.pathOnlyWriteWeight ?? 0;
  if (!Number.isInteger(pathOnly) || pathOnly < 0) throw new RangeError(`workspace oracle: pathOnlyWriteWeight must be a whole number ≥ 0, got ${pathOnly}`);
  return {
    env: "workspace",
    matches: (text) => text.includes(WORKSPACE_MARK),
    respond: (context) => respondToWorkspace(context, options),
  };
}

export const workspaceOracle: OracleSolver = makeWorkspaceOracle();

export function respondToWorkspace(context: OracleContext, options: WorkspaceOracleOptions = {}): string {
  const text = context.promptText;
  const promptEnd = text.indexOf(GENERATION_PROMPT);
  if (promptEnd < 0) throw new Error("workspace oracle: the context has no assistant turn to answer");
  const prompt = text.slice(0, promptEnd);
  const history = text.slice(promptEnd + GENERATION_PROMPT.length);
  const structured = prompt.includes("<tools>");
  const plan = planFor(instructionOf(prompt));
  const draw = (action: Action) => render(action, structured, options.contentFirstWrites ?? false);

  // The next action: the first step whose text is not in the history yet (or task_complete when all are).
  const outputs: (string | null)[] = [];
  let next: Action = { tool: "task_complete" };
  for (let i = 0; i < plan.length && i < (options.finishAfterSteps ?? Infinity); i++) {
    const action = plan[i]!(outputs);
    const block = draw(action);
    const at = history.lastIndexOf(block);
    if (at < 0) {
      next = action;
      break;
    }
    outputs.push(stdoutAfter(history, at + block.length));
  }

  // Drawn every turn, so a turn's choices do not depend on whether an error was made before.
  const erring = context.rng.next() < context.errorRate;
  // A template that prefills `<think>\n` leaves a block open: close it before acting (unless erring on purpose).
  const closeThink = /<think>\s*$/.test(text) ? "</think>\n\n" : "";
  if (!erring) return closeThink + draw(next);
  return mistake(next, structured, draw, context.rng, closeThink, options.lookAlikeWeight ?? 1, options.pathOnlyWriteWeight ?? 0);
}

function instructionOf(prompt: string): string {
  const at = prompt.lastIndexOf("\nTask: ");
  if (at < 0) throw new Error("workspace oracle: the prompt has no 'Task:' line");
  const start = at + "\nTask: ".length;
  const end = [prompt.indexOf("\n", start), prompt.indexOf("<|im_end|>", start), prompt.length].filter((i) => i >= 0);
  return prompt.slice(start, Math.min(...end));
}

/** The plan for an instruction, by its wording (tasks.ts in the environment writes it). */
function planFor(instruction: string): Step[] {
  let m: RegExpExecArray | null;
  if ((m = /^Count the lines of (\S+) that contain the text (\S+) \(case-sensitive\) and write that number to (\S+)\.$/.exec(instruction))) {
    const [, log, pattern, answer] = m as unknown as [string, string, string, string];
    return [
      () => ({ tool: "run_shell", command: `grep -c ${quote(pattern)} ${quote(log)}` }),
      ([count]) => {
        const n = /^\s*(\d+)/.exec(count ?? "")?.[1] ?? "0";
        return writeFile(answer, `${n}\n`, `echo ${n} > ${quote(answer)}`);
      },
    ];
  }
  if ((m = /^Create (\S+) listing the file names \(without directories\) of all \.py files under (\S+),/.exec(instruction))) {
    const [, summary, source] = m as unknown as [string, string, string];
    return [
      () => ({ tool: "run_shell", command: `find ${quote(source)} -name '*.py'` }),
      ([found]) => {
        const names = (found ?? "")
          .split("\n")
          .filter((line) => line.endsWith(".py"))
          .map((line) => line.slice(line.lastIndexOf("/") + 1))
          .sort();
        const dir = summary.slice(0, summary.lastIndexOf("/")) || "/";
        const legacy = `mkdir -p ${quote(dir)} && printf '%s\\n' ${names.map(quote).join(" ")} > ${quote(summary)}`;
        return writeFile(summary, names.map((n) => `${n}\n`).join(""), legacy);
      },
    ];
  }
  if ((m = /^The config file (\S+) has the line "debug = true"\./.exec(instruction))) {
    const [, config] = m as unknown as [string, string];
    return [
      () => ({ tool: "read_file", path: config }),
      ([content]) => {
        const lines = (content ?? "").replace(/\n$/, "").split("\n");
        const fixed = lines.map((line) => (line === "debug = true" ? "debug = false" : line));
        const legacy = `printf '%s\\n' ${fixed.map(quote).join(" ")} > ${quote(config)}`;
        return writeFile(config, fixed.map((l) => `${l}\n`).join(""), legacy);
      },
    ];
  }
  if ((m = /^Exactly one file under (\S+) contains a line starting with (\S+)\. Write the absolute path of that file to (\S+)\.$/.exec(instruction))) {
    const [, dir, key, answer] = m as unknown as [string, string, string, string];
    return [
      () => ({ tool: "run_shell", command: `grep -rl ${quote(key)} ${quote(dir)}` }),
      ([found]) => {
        const path = (found ?? "").split("\n")[0]?.trim() ?? "";
        return writeFile(answer, `${path}\n`, `echo ${quote(path)} > ${quote(answer)}`);
      },
    ];
  }
  throw new Error(`workspace oracle: unknown task '${instruction}'`);
}

function writeFile(path: string, content: string, legacy: string): Action {
  return { tool: "write_file", path, content, legacy };
}

/** A word for sh: as is when it has no special characters, else single-quoted. */
function quote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'"'"'`)}'`;
}

function toolCall(name: string, args: unknown): string {
  return `<tool_call>\n${pyJsonDumps({ name, arguments: args })}\n</tool_call>`;
}

function render(action: Action, structured: boolean, contentFirst: boolean): string {
  if (!structured) {
    switch (action.tool) {
      case "run_shell":
        return fence(action.command);
      case "read_file":
        return fence(`cat ${quote(action.path)}`);
      case "write_file":
        return fence(action.legacy);
      case "task_complete":
        return "TASK_COMPLETE";
    }
  }
  const { tool, ...args } = action;
  if (action.tool === "write_file") {
    return toolCall(tool, contentFirst ? { content: action.content, path: action.path } : { path: action.path, content: action.content });
  }
  return toolCall(tool, args);
}

const fence = (command: string) => "```bash\n" + command + "\n```";

/** The stdout of the observation that follows a step's call, or null when none does. */
function stdoutAfter(history: string, from: number): string | null {
  const start = history.indexOf("[exit=", from);
  if (start < 0) return null;
  let end = history.length;
  for (const stop of OBSERVATION_ENDS) {
    const at = history.indexOf(stop, start);
    if (at >= 0 && at < end) end = at;
  }
  const observation = history.slice(start, end);
  const body = observation.slice(observation.indexOf("\n") + 1);
  const stderr = body.indexOf("\n[stderr]\n");
  return stderr >= 0 ? body.slice(0, stderr) : body;
}

/**
 * File names a policy may take for one another (the task generator's choices, as a reader of many tasks knows them):
 * the name in a look-up that is swapped for a sibling by the `wrong_path` mistake.
 */
const LOOK_ALIKE_NAMES: readonly (readonly string[])[] = [
  ["app.log", "server.log", "worker.log"],
  ["config.ini", "settings.ini", "service.ini"],
];

/** The look-up with its file's name swapped for `pick`'s look-alike, or null when the action is no look-up of such a file. */
function lookAlikeLookUp(action: Action, pick: (names: readonly string[]) => string): Action | null {
  if (action.tool !== "read_file" && action.tool !== "run_shell") return null;
  // A run_shell look-up names its file last (`grep -c ERROR /workspace/logs/app.log`).
  const text = action.tool === "read_file" ? action.path : action.command;
  const name = text.slice(Math.max(text.lastIndexOf("/"), text.lastIndexOf(" ")) + 1);
  const family = LOOK_ALIKE_NAMES.find((names) => names.includes(name));
  if (!family) return null;
  const swapped = text.slice(0, -name.length) + pick(family.filter((n) => n !== name));
  return action.tool === "read_file" ? { ...action, path: swapped } : { ...action, command: swapped };
}

function mistake(next: Action, structured: boolean, draw: (action: Action) => string, rng: Rng, closeThink: string, lookAlikeWeight: number, pathOnlyWriteWeight: number): string {
  const kinds = [
    ...(structured ? ["invalid_format", "malformed_thinking", "bad_argument", "malformed_json"] : ["invalid_format", "malformed_thinking", "wrong_fence"]),
    ...(lookAlikeLookUp(next, (names) => names[0]!) ? Array<string>(lookAlikeWeight).fill("wrong_path") : []),
    ...(structured && next.tool === "write_file" ? Array<string>(pathOnlyWriteWeight).fill("path_only_write") : []),
  ];
  const planned = draw(next);
  switch (rng.choice<string>(kinds)) {
    case "wrong_path":
      return closeThink + draw(lookAlikeLookUp(next, (names) => rng.choice(names))!);
    case "invalid_format":
      return closeThink + rng.choice(PROSE);
    case "malformed_thinking":
      return `<think>\nI should ${describe(next)}.\n${planned}`;
    case "bad_argument":
      return closeThink + badArguments(next);
    case "path_only_write":
      // Drawn only where the next action is a write_file (the kinds above).
      if (next.tool !== "write_file") throw new Error("workspace oracle: path_only_write drawn for a " + next.tool);
      return closeThink + toolCall("write_file", { path: next.path });
    case "malformed_json": {
      const json = planned.slice("<tool_call>\n".length, -"\n</tool_call>".length);
      return `${closeThink}<tool_call>\n${json.slice(0, -1)}\n</tool_call>`;
    }
    default:
      return closeThink + "```python\nprint(open('answer.txt').read())\n```";
  }
}

/** A call the registry's schema rejects: a number for a string, a missing required path, non-object arguments. */
function badArguments(action: Action): string {
  switch (action.tool) {
    case "run_shell":
      return toolCall("run_shell", { command: 5 });
    case "read_file":
      return toolCall("read_file", {});
    case "write_file":
      return toolCall("write_file", { content: action.content });
    case "task_complete":
      return toolCall("task_complete", "now");
  }
}

function describe(action: Action): string {
  switch (action.tool) {
    case "run_shell":
      return `run ${action.command}`;
    case "read_file":
      return `read ${action.path}`;
    case "write_file":
      return `write ${action.path}`;
    case "task_complete":
      return "finish now";
  }
}
