/** What every built-in command gets and returns, and the option parsing and error reporting they share. */

import { LabError } from "../../../core/index.js";
import { FsError, type VirtualFs } from "../fs.js";

export interface CommandIO {
  /** The command's name as invoked (for messages). */
  name: string;
  args: string[];
  stdin: string;
  fs: VirtualFs;
}

export interface CommandResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export type Command = (io: CommandIO) => CommandResult;

/** Collects a command's output; `fail` records one error line (commands go on with their other operands). */
export class Output {
  stdout = "";
  stderr = "";
  exitCode = 0;

  write(text: string): void {
    this.stdout += text;
  }

  fail(message: string, exitCode = 1): void {
    this.stderr += `${message}\n`;
    this.exitCode = exitCode;
  }

  result(): CommandResult {
    return { exitCode: this.exitCode, stdout: this.stdout, stderr: this.stderr };
  }
}

/** A bad option or a missing operand: the command prints its message and stops. */
export class UsageError extends LabError {
  override name = "UsageError";
  override readonly code = "usage";
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super(message);
  }
}

export interface ArgSpec {
  /** Single-letter switches, e.g. "alr". */
  flags?: string;
  /** Single-letter options that take a value, e.g. "n". */
  valued?: string;
  /** Long options and the letter each stands for, e.g. `{ decode: "d" }`. */
  long?: Record<string, string>;
  /** The option a bare `-N` sets (`head -5` means `-n 5`). */
  numeric?: string;
}

export interface ParsedArgs {
  flags: Set<string>;
  values: Map<string, string>;
  operands: string[];
}

/** GNU-style parsing: bundled switches (`-la`), options anywhere before `--`, `-` alone is an operand. */
export function parseArgs(name: string, args: readonly string[], spec: ArgSpec): ParsedArgs {
  const flags = new Set<string>();
  const values = new Map<string, string>();
  const operands: string[] = [];
  const takes = (letter: string) => (spec.valued ?? "").includes(letter);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") {
      operands.push(...args.slice(i + 1));
      break;
    }
    if (arg.startsWith("--")) {
      const [key, inline] = arg.slice(2).split(/=(.*)/s) as [string, string | undefined];
      // Own keys only: `--constructor` is an unknown option, not Object's constructor.
      const letter = spec.long && Object.hasOwn(spec.long, key) ? spec.long[key] : undefined;
      if (!letter) throw new UsageError(`${name}: unrecognized option '${arg}'`);
      if (takes(letter)) {
        const value = inline ?? args[++i];
        if (value === undefined) throw new UsageError(`${name}: option '--${key}' requires an argument`);
        values.set(letter, value);
      } else flags.add(letter);
      continue;
    }
    if (!arg.startsWith("-") || arg === "-") {
      operands.push(arg);
      continue;
    }
    if (spec.numeric && /^-\d+$/.test(arg)) {
      values.set(spec.numeric, arg.slice(1));
      continue;
    }
    for (let j = 1; j < arg.length; j++) {
      const letter = arg[j]!;
      if (takes(letter)) {
        const value = j + 1 < arg.length ? arg.slice(j + 1) : args[++i];
        if (value === undefined) throw new UsageError(`${name}: option requires an argument -- '${letter}'`);
        values.set(letter, value);
        break;
      }
      if (!(spec.flags ?? "").includes(letter)) throw new UsageError(`${name}: invalid option -- '${letter}'`);
      flags.add(letter);
    }
  }
  return { flags, values, operands };
}

/** Runs a command body, turning a usage error into its message and exit status. */
export function withUsage(body: (io: CommandIO, out: Output) => void): Command {
  return (io) => {
    const out = new Output();
    try {
      body(io, out);
    } catch (e) {
      if (!(e instanceof UsageError)) throw e;
      out.fail(e.message, e.exitCode);
    }
    return out.result();
  };
}

/** The POSIX error text of a failed file operation (anything else is a bug and propagates). */
export function errorText(e: unknown): string {
  if (e instanceof FsError) return e.message;
  throw e;
}

/** Reads an input operand: `-` is standard input. */
export function readInput(io: CommandIO, operand: string): string {
  return operand === "-" ? io.stdin : io.fs.readFile(io.fs.resolve(operand));
}

/** Splits text into lines, each keeping its `\n` (the last one may lack it). */
export function splitLinesKeepEnds(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/** Lines without their terminators (a final newline does not make an empty last line). */
export function splitLines(text: string): string[] {
  return splitLinesKeepEnds(text).map((line) => (line.endsWith("\n") ? line.slice(0, -1) : line));
}

export function parseCount(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^[+-]?\d+$/.test(value)) throw new UsageError(`${name}: invalid number of lines: '${value}'`, 1);
  return Math.abs(Number(value));
}
