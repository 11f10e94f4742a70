/**
 * `run_shell` over the virtual workspace: parses a command line (shell-syntax.ts), expands words, applies
 * redirections and runs the built-in commands. Every failure is output the model can read (a message on stderr
 * and an exit status, 127 for an unknown command, 2 for a syntax error), never an exception.
 *
 * The current directory is part of the file system state, so a `cd` lasts into later turns, as in an
 * interactive session.
 */

import { BUILTIN_COMMANDS, type CommandResult } from "./commands/index.js";
import { FsError, WORKSPACE_ROOT, type VirtualFs } from "./fs.js";
import { expandGlob, hasWildcard, unescapeGlob } from "./glob.js";
import { parseScript, ShellSyntaxError, type SimpleCommand, type Word } from "./shell-syntax.js";

export const DEFAULT_OUTPUT_LIMIT = 8192;
export const TRUNCATION_MARK = "\n... [truncated]";
/** How deep `$(...)` may nest: a guard against pathological input, far above what a model writes. */
const MAX_SUBSTITUTION_DEPTH = 8;

export type ShellResult = CommandResult;

/** Runs a command line on the tree (changing it in place). */
export function runShell(fs: VirtualFs, command: string): ShellResult {
  return new Shell(fs, 0).run(command);
}

/**
 * The derived library's observation of one command (§6.2): `[exit=N]\n{stdout}`, then `\n[stderr]\n{stderr}` when
 * there is stderr, cut to `outputLimit` characters (code points, like Python's `len`) plus a truncation mark.
 */
export function formatObservation(result: ShellResult, outputLimit: number = DEFAULT_OUTPUT_LIMIT): string {
  let observation = `[exit=${result.exitCode}]\n${result.stdout}`;
  if (result.stderr) observation += `\n[stderr]\n${result.stderr}`;
  if (observation.length > outputLimit) {
    const chars = Array.from(observation);
    if (chars.length > outputLimit) observation = chars.slice(0, outputLimit).join("") + TRUNCATION_MARK;
  }
  return observation;
}

type Sink = { kind: "stdout" } | { kind: "stderr" } | { kind: "file"; abs: string; shown: string };

interface Field {
  text: string;
  /** The text with quoted wildcard characters escaped, for pathname expansion. */
  pattern: string;
  /** Holds something: a quoted part (even `""`) or non-empty text. Empty unquoted expansions vanish. */
  real: boolean;
}

class Shell {
  private status = 0;
  /** Stderr of `$(...)` runs while expanding the current command's words. */
  private expansionStderr = "";

  constructor(
    private readonly fs: VirtualFs,
    private readonly depth: number,
  ) {}

  run(source: string): ShellResult {
    let script;
    try {
      script = parseScript(source);
    } catch (e) {
      if (!(e instanceof ShellSyntaxError)) throw e;
      return { exitCode: 2, stdout: "", stderr: `sh: ${e.message}\n` };
    }
    let stdout = "";
    let stderr = "";
    for (const item of script) {
      if ((item.connector === "&&" && this.status !== 0) || (item.connector === "||" && this.status === 0)) continue;
      let input = "";
      for (const command of item.pipeline) {
        const result = this.command(command, input);
        stderr += result.stderr;
        input = result.stdout;
        this.status = result.exitCode;
      }
      stdout += input;
    }
    return { exitCode: this.status, stdout, stderr };
  }

  private command(command: SimpleCommand, stdin: string): ShellResult {
    this.expansionStderr = "";
    const argv = command.words.flatMap((word) => this.expand(word));
    const fail = (message: string): ShellResult => ({
      exitCode: 1,
      stdout: "",
      stderr: `${this.expansionStderr}sh: ${message}\n`,
    });

    const sinks: Record<number, Sink> = { 1: { kind: "stdout" }, 2: { kind: "stderr" } };
    for (const redirect of command.redirects) {
      if (redirect.op === "dup") {
        sinks[redirect.fd] = sinks[redirect.toFd]!;
        continue;
      }
      const targets = this.expand(redirect.target);
      const shown = targets[0] ?? "";
      if (targets.length !== 1) return fail(`${wordText(redirect.target)}: ambiguous redirect`);
      try {
        const abs = this.fs.resolve(shown);
        if (redirect.op === "<") {
          stdin = this.fs.readFile(abs);
          continue;
        }
        // Opening for `>` truncates before the command runs, as a real shell does (`cat f > f` empties f).
        if (redirect.op === ">") this.fs.writeFile(abs, "");
        else this.fs.appendFile(abs, "");
        sinks[redirect.fd] = { kind: "file", abs, shown };
      } catch (e) {
        if (!(e instanceof FsError)) throw e;
        return fail(`${shown}: ${e.message}`);
      }
    }
    let stderr = this.expansionStderr;
    if (argv.length === 0) return { exitCode: 0, stdout: "", stderr };

    const result = this.invoke(argv, stdin);
    let stdout = "";
    const deliver = (text: string, sink: Sink) => {
      if (!text) return;
      if (sink.kind === "stdout") stdout += text;
      else if (sink.kind === "stderr") stderr += text;
      else {
        try {
          this.fs.appendFile(sink.abs, text);
        } catch (e) {
          if (!(e instanceof FsError)) throw e;
          stderr += `sh: ${sink.shown}: ${e.message}\n`;
        }
      }
    };
    deliver(result.stdout, sinks[1]!);
    deliver(result.stderr, sinks[2]!);
    return { exitCode: result.exitCode, stdout, stderr };
  }

  private invoke(argv: string[], stdin: string): ShellResult {
    const [name, ...args] = argv as [string, ...string[]];
    const builtin = Object.prototype.hasOwnProperty.call(BUILTIN_COMMANDS, name) ? BUILTIN_COMMANDS[name] : undefined;
    if (!builtin) return { exitCode: 127, stdout: "", stderr: `${name}: command not found\n` };
    try {
      return builtin({ name, args, stdin, fs: this.fs });
    } catch (e) {
      // A file error a command did not report itself (e.g. an empty path) still reads like a shell error.
      if (!(e instanceof FsError)) throw e;
      return { exitCode: 1, stdout: "", stderr: `${name}: ${e.message}\n` };
    }
  }

  /** One word → its fields: variables and `$(...)`, field splitting of unquoted expansions, then wildcards. */
  private expand(word: Word): string[] {
    const fields: Field[] = [{ text: "", pattern: "", real: false }];
    const append = (text: string, quoted: boolean) => {
      const field = fields[fields.length - 1]!;
      field.text += text;
      field.pattern += quoted ? text.replace(/[*?[\\]/g, "\\$&") : text;
      if (quoted || text) field.real = true;
    };
    for (const part of word) {
      if (part.kind === "text") {
        append(part.text, part.quoted);
        continue;
      }
      const value = part.kind === "var" ? this.variable(part.name) : this.substitute(part.script);
      if (part.quoted) {
        append(value, true);
        continue;
      }
      value.split(/[ \t\n]+/).forEach((piece, i) => {
        if (i > 0) fields.push({ text: "", pattern: "", real: false });
        append(piece, false);
      });
    }
    return fields
      .filter((f) => f.real)
      .flatMap((f) => {
        if (!hasWildcard(f.pattern)) return [f.text];
        const matches = expandGlob(f.pattern, this.fs);
        return matches.length ? matches : [unescapeGlob(f.pattern)];
      });
  }

  private variable(name: string): string {
    const known: Record<string, string> = { HOME: WORKSPACE_ROOT, PWD: this.fs.cwd, USER: "user", SHELL: "/bin/sh" };
    if (name === "?") return String(this.status);
    // Own keys only: `$constructor` is an unset variable, not Object's constructor.
    return Object.hasOwn(known, name) ? known[name]! : "";
  }

  /** `$(...)`: runs the script in a nested shell on the same tree; its output minus trailing newlines. */
  private substitute(script: string): string {
    if (this.depth >= MAX_SUBSTITUTION_DEPTH) {
      this.expansionStderr += "sh: command substitution nested too deeply\n";
      return "";
    }
    const result = new Shell(this.fs, this.depth + 1).run(script);
    this.expansionStderr += result.stderr;
    return result.stdout.replace(/\n+$/, "");
  }
}

function wordText(word: Word): string {
  return word.map((p) => (p.kind === "text" ? p.text : p.kind === "var" ? `$${p.name}` : `$(${p.script})`)).join("");
}
