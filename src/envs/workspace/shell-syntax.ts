/**
 * A tiny POSIX-ish shell grammar: words with single/double quotes and backslash escapes, `$NAME`, `${NAME}` and
 * `$(...)` (the derived library's write_file command uses `"$(dirname -- '<p>')"`), pipes, `&&`, `||`, `;` and
 * newlines, `<`, `>`, `>>`, `2>`, `2>&1`, and `#` comments. No loops, functions, here-documents or backgrounding.
 */

import { LabError } from "../../core/index.js";

export type WordPart =
  | { kind: "text"; text: string; quoted: boolean }
  | { kind: "subst"; script: string; quoted: boolean }
  | { kind: "var"; name: string; quoted: boolean };

export type Word = WordPart[];

export type Redirect =
  | { fd: number; op: "<" | ">" | ">>"; target: Word }
  | { fd: number; op: "dup"; toFd: number };

export interface SimpleCommand {
  words: Word[];
  redirects: Redirect[];
}

export interface ListItem {
  /** How this pipeline hangs on the previous one (`;` for the first). */
  connector: "&&" | "||" | ";";
  pipeline: SimpleCommand[];
}

export type Script = ListItem[];

/** A script the shell cannot parse; the message is what the shell prints after `sh: `. */
export class ShellSyntaxError extends LabError {
  override name = "ShellSyntaxError";
  override readonly code = "shell_syntax";
}

type Operator = "&&" | "||" | ";" | "|" | "\n";
type Token =
  | { type: "word"; word: Word }
  | { type: "op"; op: Operator }
  | { type: "redir"; fd: number; op: "<" | ">" | ">>" | ">&" };

const NAME_START = /[A-Za-z_]/;
const NAME_CHAR = /[A-Za-z0-9_]/;

class Tokenizer {
  private readonly tokens: Token[] = [];
  private word: Word | null = null;
  private i = 0;

  constructor(private readonly src: string) {}

  run(): Token[] {
    const src = this.src;
    while (this.i < src.length) {
      const ch = src[this.i]!;
      const next = src[this.i + 1];
      if (ch === " " || ch === "\t" || ch === "\r") {
        this.endWord();
        this.i++;
      } else if (ch === "\n") {
        this.operator("\n", 1);
      } else if (ch === "#" && this.word === null) {
        while (this.i < src.length && src[this.i] !== "\n") this.i++;
      } else if (ch === "\\") {
        if (next !== "\n") this.text(next ?? "\\", next !== undefined);
        this.i += 2;
      } else if (ch === "'") {
        const end = src.indexOf("'", this.i + 1);
        if (end < 0) throw new ShellSyntaxError("unexpected EOF while looking for matching `''");
        this.text(src.slice(this.i + 1, end), true);
        this.i = end + 1;
      } else if (ch === '"') {
        this.doubleQuoted();
      } else if (ch === "$") {
        this.dollar(false);
      } else if (ch === "&") {
        if (next !== "&") throw new ShellSyntaxError("background jobs (&) are not supported");
        this.operator("&&", 2);
      } else if (ch === "|") {
        this.operator(next === "|" ? "||" : "|", next === "|" ? 2 : 1);
      } else if (ch === ";") {
        this.operator(";", 1);
      } else if (ch === ">" || ch === "<") {
        this.redirect(ch);
      } else if (ch === "(" || ch === ")") {
        throw new ShellSyntaxError(`syntax error near unexpected token \`${ch}'`);
      } else {
        this.text(ch, false);
        this.i++;
      }
    }
    this.endWord();
    return this.tokens;
  }

  private text(text: string, quoted: boolean): void {
    this.word ??= [];
    const last = this.word[this.word.length - 1];
    if (last?.kind === "text" && last.quoted === quoted) last.text += text;
    else this.word.push({ kind: "text", text, quoted });
  }

  private endWord(): void {
    if (this.word) this.tokens.push({ type: "word", word: this.word });
    this.word = null;
  }

  private operator(op: Operator, width: number): void {
    this.endWord();
    this.tokens.push({ type: "op", op });
    this.i += width;
  }

  private redirect(ch: ">" | "<"): void {
    if (ch === "<" && this.src[this.i + 1] === "<") {
      throw new ShellSyntaxError("here-documents (<<) are not supported; write files with printf or echo and >");
    }
    let fd = ch === "<" ? 0 : 1;
    const w = this.word;
    // A lone digit written right before the operator names the descriptor (`2>file`), as in sh.
    const only = w?.length === 1 ? w[0] : undefined;
    if (only?.kind === "text" && !only.quoted && /^[0-9]$/.test(only.text)) {
      fd = Number(only.text);
      this.word = null;
    } else {
      this.endWord();
    }
    const next = this.src[this.i + 1];
    const op = ch === ">" && next === ">" ? ">>" : ch === ">" && next === "&" ? ">&" : ch;
    this.tokens.push({ type: "redir", fd, op });
    this.i += op.length;
  }

  private doubleQuoted(): void {
    const src = this.src;
    this.text("", true);
    this.i++;
    while (this.i < src.length && src[this.i] !== '"') {
      const ch = src[this.i]!;
      const next = src[this.i + 1];
      if (ch === "\\" && next !== undefined && '"\\$`\n'.includes(next)) {
        if (next !== "\n") this.text(next, true);
        this.i += 2;
      } else if (ch === "$") {
        this.dollar(true);
      } else {
        this.text(ch, true);
        this.i++;
      }
    }
    if (this.i >= src.length) throw new ShellSyntaxError('unexpected EOF while looking for matching `"\'');
    this.i++;
  }

  /** `$(...)`, `${NAME}`, `$NAME`, `$?`; a `$` followed by anything else is literal. */
  private dollar(quoted: boolean): void {
    const src = this.src;
    const next = src[this.i + 1] ?? "";
    if (next === "(") {
      const end = matchingParen(src, this.i + 2);
      this.word ??= [];
      this.word.push({ kind: "subst", script: src.slice(this.i + 2, end), quoted });
      this.i = end + 1;
    } else if (next === "{") {
      const end = src.indexOf("}", this.i + 2);
      if (end < 0) throw new ShellSyntaxError("unexpected EOF while looking for matching `}'");
      this.variable(src.slice(this.i + 2, end), quoted);
      this.i = end + 1;
    } else if (next === "?" || NAME_START.test(next)) {
      let end = this.i + 2;
      if (next !== "?") while (end < src.length && NAME_CHAR.test(src[end]!)) end++;
      this.variable(src.slice(this.i + 1, end), quoted);
      this.i = end;
    } else {
      this.text("$", quoted);
      this.i++;
    }
  }

  private variable(name: string, quoted: boolean): void {
    this.word ??= [];
    this.word.push({ kind: "var", name, quoted });
  }
}

/** Index of the `)` closing a `$(` whose body starts at `start`, skipping quoted text and nested parentheses. */
function matchingParen(src: string, start: number): number {
  let depth = 1;
  for (let i = start; i < src.length; i++) {
    const ch = src[i]!;
    if (ch === "\\") i++;
    else if (ch === "'") {
      i = src.indexOf("'", i + 1);
      if (i < 0) break;
    } else if (ch === '"') {
      for (i++; i < src.length && src[i] !== '"'; i++) if (src[i] === "\\") i++;
    } else if (ch === "(") depth++;
    else if (ch === ")" && --depth === 0) return i;
  }
  throw new ShellSyntaxError("unexpected EOF while looking for matching `)'");
}

export function parseScript(source: string): Script {
  const tokens = new Tokenizer(source).run();
  const items: Script = [];
  let connector: ListItem["connector"] = ";";
  let pipeline: SimpleCommand[] = [];
  let command: SimpleCommand = { words: [], redirects: [] };
  const isEmpty = (c: SimpleCommand) => c.words.length === 0 && c.redirects.length === 0;
  const unexpected = (what: string) => new ShellSyntaxError(`syntax error near unexpected token \`${what}'`);

  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.type === "word") {
      command.words.push(token.word);
    } else if (token.type === "redir") {
      const target = tokens[i + 1];
      if (target?.type !== "word") throw unexpected(target?.type === "op" ? displayOp(target.op) : "newline");
      i++;
      if (token.op === ">&") {
        const text = literalText(target.word);
        if (text !== "1" && text !== "2") throw new ShellSyntaxError(`${text ?? "$…"}: ambiguous redirect`);
        command.redirects.push({ fd: token.fd, op: "dup", toFd: Number(text) });
      } else {
        command.redirects.push({ fd: token.fd, op: token.op, target: target.word });
      }
    } else if (token.op === "\n" && isEmpty(command)) {
      // Blank lines, and a newline after `&&`, `||` or `|`, continue the script.
    } else if (isEmpty(command)) {
      throw unexpected(displayOp(token.op));
    } else if (token.op === "|") {
      pipeline.push(command);
      command = { words: [], redirects: [] };
    } else {
      pipeline.push(command);
      items.push({ connector, pipeline });
      connector = token.op === "\n" ? ";" : token.op;
      pipeline = [];
      command = { words: [], redirects: [] };
    }
  }
  if (!isEmpty(command)) {
    pipeline.push(command);
    items.push({ connector, pipeline });
  } else if (pipeline.length || connector !== ";") {
    throw new ShellSyntaxError("syntax error: unexpected end of file");
  }
  return items;
}

function displayOp(op: Operator): string {
  return op === "\n" ? "newline" : op;
}

/** The text of a word made only of literal parts, else null. */
function literalText(word: Word): string | null {
  return word.every((p) => p.kind === "text") ? word.map((p) => (p as { text: string }).text).join("") : null;
}
