/** Built-ins that filter or produce text: grep, wc, head, tail, sort, uniq, echo, printf, base64, tee, true, false. */

import { base64ToUtf8, utf8ToBase64 } from "../base64.js";
import { utf8Length } from "../fs.js";
import {
  type Command,
  type CommandIO,
  errorText,
  type Output,
  parseArgs,
  parseCount,
  readInput,
  splitLines,
  splitLinesKeepEnds,
  UsageError,
  withUsage,
} from "./common.js";

/**
 * A grep pattern as a JavaScript regular expression. Basic syntax (the default) swaps the meaning of escaped and
 * bare `+ ? | ( ) { }` (in BRE `\+` is the operator and `+` a literal); `-E` takes the pattern as it is; a pattern
 * JavaScript rejects is matched as plain text, so a model's `grep "foo("` still works.
 */
export function grepRegExp(pattern: string, options: { extended: boolean; fixed: boolean; ignoreCase: boolean; word: boolean }): RegExp {
  const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  let source = options.fixed ? literal(pattern) : options.extended ? pattern : basicToExtended(pattern);
  if (options.word) source = `(?<![\\w])(?:${source})(?![\\w])`;
  const flags = options.ignoreCase ? "i" : "";
  try {
    return new RegExp(source, flags);
  } catch {
    return new RegExp(literal(pattern), flags);
  }
}

function basicToExtended(pattern: string): string {
  let out = "";
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === "\\" && i + 1 < pattern.length) {
      const next = pattern[++i]!;
      out += "+?|(){}".includes(next) ? next : `\\${next}`;
    } else {
      out += "+?|(){}".includes(ch) ? `\\${ch}` : ch;
    }
  }
  return out;
}

const grep = withUsage((io, out) => {
  const { flags, values, operands } = parseArgs("grep", io.args, {
    flags: "nicrRvlhHFEwqs",
    valued: "e",
    long: { recursive: "r", count: "c", "ignore-case": "i", "line-number": "n", "files-with-matches": "l", "invert-match": "v" },
  });
  const pattern = values.get("e") ?? operands.shift();
  if (pattern === undefined) throw new UsageError("Usage: grep [OPTION]... PATTERNS [FILE]...");
  const regex = grepRegExp(pattern, {
    extended: flags.has("E"),
    fixed: flags.has("F"),
    ignoreCase: flags.has("i"),
    word: flags.has("w"),
  });
  const recursive = flags.has("r") || flags.has("R");
  // What to read: [label, text | error]; with -r and no operand grep searches `.` but labels paths without `./`.
  const inputs: { label: string; read: () => string }[] = [];
  const targets = operands.length ? operands : recursive ? [null] : ["-"];
  for (const target of targets) {
    const abs = io.fs.resolve(target ?? ".");
    if (target !== "-" && io.fs.isDir(abs)) {
      if (!recursive) {
        out.fail(`grep: ${target}: Is a directory`, 2);
        continue;
      }
      const prefix = abs === "/" ? 1 : abs.length + 1;
      for (const path of io.fs.walk(abs).filter((p) => io.fs.isFile(p))) {
        const rel = path.slice(prefix);
        const label = target === null ? rel : target.endsWith("/") ? `${target}${rel}` : `${target}/${rel}`;
        inputs.push({ label, read: () => io.fs.readFile(path) });
      }
    } else {
      inputs.push({ label: target === "-" ? "(standard input)" : target!, read: () => readInput(io, target!) });
    }
  }
  const showNames = flags.has("H") || (!flags.has("h") && (recursive || inputs.length > 1));
  let selected = false;
  for (const input of inputs) {
    let text: string;
    try {
      text = input.read();
    } catch (e) {
      if (!flags.has("s")) out.fail(`grep: ${input.label}: ${errorText(e)}`, 2);
      else out.exitCode = 2;
      continue;
    }
    const prefix = showNames ? `${input.label}:` : "";
    const hits = splitLines(text)
      .map((line, i) => ({ line, number: i + 1 }))
      .filter(({ line }) => regex.test(line) !== flags.has("v"));
    if (hits.length) selected = true;
    if (flags.has("q")) continue;
    if (flags.has("l")) {
      if (hits.length) out.write(`${input.label}\n`);
    } else if (flags.has("c")) {
      out.write(`${prefix}${hits.length}\n`);
    } else {
      for (const hit of hits) out.write(`${prefix}${flags.has("n") ? `${hit.number}:` : ""}${hit.line}\n`);
    }
  }
  if (flags.has("q") && selected) out.exitCode = 0;
  else if (out.exitCode !== 2) out.exitCode = selected ? 0 : 1;
});

const wc = withUsage((io, out) => {
  const { flags, operands } = parseArgs("wc", io.args, { flags: "lwcm", long: { lines: "l", words: "w", bytes: "c", chars: "m" } });
  const columns = ["l", "w", "m", "c"].filter((f) => flags.has(f));
  if (!columns.length) columns.push("l", "w", "c");
  const count = (text: string): Record<string, number> => ({
    l: (text.match(/\n/g) ?? []).length,
    w: text.split(/\s+/).filter(Boolean).length,
    m: [...text].length,
    c: utf8Length(text),
  });
  const rows: { counts: Record<string, number>; label: string | null }[] = [];
  for (const operand of operands.length ? operands : ["-"]) {
    try {
      rows.push({ counts: count(readInput(io, operand)), label: operand === "-" && !operands.length ? null : operand });
    } catch (e) {
      out.fail(`wc: ${operand}: ${errorText(e)}`);
    }
  }
  if (rows.length > 1) {
    const total: Record<string, number> = {};
    for (const c of columns) total[c] = rows.reduce((sum, r) => sum + r.counts[c]!, 0);
    rows.push({ counts: total, label: "total" });
  }
  // GNU pads every column to one width: 7 for standard input, else the widest number shown.
  const fromStdin = rows.some((r) => r.label === null);
  const widest = Math.max(1, ...rows.flatMap((r) => columns.map((c) => String(r.counts[c]).length)));
  const width = fromStdin ? (columns.length === 1 ? 1 : 7) : widest;
  for (const row of rows) {
    const numbers = columns.map((c) => String(row.counts[c]).padStart(width)).join(" ");
    out.write(`${numbers}${row.label === null ? "" : ` ${row.label}`}\n`);
  }
});

/** `head`/`tail`: `-n N` (or `-N`) lines of each input, with `==> name <==` headers for several files. */
function lineWindow(name: "head" | "tail"): Command {
  return withUsage((io, out) => {
    const { values, operands } = parseArgs(name, io.args, { valued: "n", numeric: "n", long: { lines: "n" } });
    const raw = values.get("n");
    const n = parseCount(name, raw, 10);
    const fromLine = name === "tail" && raw?.startsWith("+") ? n : null;
    const targets = operands.length ? operands : ["-"];
    targets.forEach((operand, index) => {
      let text: string;
      try {
        text = readInput(io, operand);
      } catch (e) {
        out.fail(`${name}: cannot open '${operand}' for reading: ${errorText(e)}`);
        return;
      }
      if (targets.length > 1) out.write(`${index ? "\n" : ""}==> ${operand === "-" ? "standard input" : operand} <==\n`);
      const lines = splitLinesKeepEnds(text);
      const picked =
        name === "head" ? lines.slice(0, n) : fromLine !== null ? lines.slice(Math.max(0, fromLine - 1)) : n === 0 ? [] : lines.slice(-n);
      out.write(picked.join(""));
    });
  });
}

/** Reads every operand (or standard input) as one stream of lines, reporting unreadable ones. */
function readAllLines(io: CommandIO, out: Output, operands: string[]): string[] {
  let text = "";
  for (const operand of operands.length ? operands : ["-"]) {
    try {
      const part = readInput(io, operand);
      text += part && !part.endsWith("\n") ? `${part}\n` : part;
    } catch (e) {
      out.fail(`${io.name}: cannot read: ${operand}: ${errorText(e)}`, 2);
    }
  }
  return splitLines(text);
}

/** Leading number of a line, as `sort -n` reads it (none counts as 0). */
function leadingNumber(line: string): number {
  const match = /^\s*[-+]?(\d+\.?\d*|\.\d+)/.exec(line);
  return match ? Number(match[0]) : 0;
}

/** `sort [-r] [-n] [-u] [-f]`, in byte order (the C locale, so the result does not depend on a locale). */
const sort = withUsage((io, out) => {
  const { flags, operands } = parseArgs("sort", io.args, { flags: "rnuf" });
  const key = (line: string) => (flags.has("f") ? line.toUpperCase() : line);
  const byText = (a: string, b: string) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);
  const compare = flags.has("n") ? (a: string, b: string) => leadingNumber(a) - leadingNumber(b) || byText(a, b) : byText;
  let lines = readAllLines(io, out, operands).sort(compare);
  if (flags.has("r")) lines.reverse();
  if (flags.has("u")) lines = lines.filter((line, i) => i === 0 || compare(lines[i - 1]!, line) !== 0);
  out.write(lines.map((line) => `${line}\n`).join(""));
});

const uniq = withUsage((io, out) => {
  const { flags, operands } = parseArgs("uniq", io.args, { flags: "cdu" });
  const groups: { line: string; count: number }[] = [];
  for (const line of readAllLines(io, out, operands.slice(0, 1))) {
    const last = groups[groups.length - 1];
    if (last && last.line === line) last.count++;
    else groups.push({ line, count: 1 });
  }
  for (const g of groups) {
    if ((flags.has("d") && g.count < 2) || (flags.has("u") && g.count > 1)) continue;
    out.write(flags.has("c") ? `${String(g.count).padStart(7)} ${g.line}\n` : `${g.line}\n`);
  }
});

/** Backslash escapes of `echo -e` and of printf formats. */
function unescapeBackslashes(text: string): string {
  const map: Record<string, string> = { n: "\n", t: "\t", r: "\r", "\\": "\\", a: "\x07", b: "\b", f: "\f", v: "\v", '"': '"', "'": "'" };
  return text.replace(/\\(.)/gs, (whole, ch: string) => (Object.hasOwn(map, ch) ? map[ch]! : whole));
}

const echo: Command = (io) => {
  let args = io.args;
  let newline = true;
  let escapes = false;
  while (args.length && /^-[neE]+$/.test(args[0]!)) {
    if (args[0]!.includes("n")) newline = false;
    if (args[0]!.includes("e")) escapes = true;
    if (args[0]!.includes("E")) escapes = false;
    args = args.slice(1);
  }
  const text = args.join(" ");
  return { exitCode: 0, stdout: (escapes ? unescapeBackslashes(text) : text) + (newline ? "\n" : ""), stderr: "" };
};

/**
 * `printf FORMAT [ARG…]` with `%s %b %c %d %i %x %%`, flags `-`/`0`, width and precision; the format is reused
 * while arguments remain, as POSIX says (so `printf '%s\n' a b` prints two lines).
 */
const CONVERSION = /%([-0 +#]*)(\d*)(?:\.(\d+))?([sbcdixX%])/;

const printf = withUsage((io, out) => {
  const [format, ...args] = io.args[0] === "--" ? io.args.slice(1) : io.args;
  if (format === undefined) throw new UsageError("printf: usage: printf format [arguments]");
  const pieces = format.split(new RegExp(`(${CONVERSION.source.replace(/\((?!\?)/g, "(?:")})`));
  let next = 0;
  do {
    const start = next;
    for (const piece of pieces) {
      const m = new RegExp(`^${CONVERSION.source}$`).exec(piece);
      out.write(m ? formatOne(m, args[next++] ?? "", out) : unescapeBackslashes(piece));
      if (m?.[4] === "%") next--;
    }
    if (next === start) break;
  } while (next < args.length);
});

function formatOne(m: RegExpExecArray, arg: string, out: Output): string {
  const [, flag = "", width = "", precision, conversion = "s"] = m;
  if (conversion === "%") return "%";
  let value: string;
  if (conversion === "s" || conversion === "b") {
    value = conversion === "b" ? unescapeBackslashes(arg) : arg;
    if (precision !== undefined) value = value.slice(0, Number(precision));
  } else if (conversion === "c") {
    value = arg.slice(0, 1);
  } else {
    const numeric = /^\s*([-+]?\d+)/.exec(arg);
    if (arg.trim() !== "" && !/^\s*[-+]?\d+\s*$/.test(arg)) out.fail(`printf: '${arg}': invalid number`);
    const n = numeric ? Number(numeric[1]) : 0;
    value = conversion === "d" || conversion === "i" ? String(n) : n.toString(16);
    if (conversion === "X") value = value.toUpperCase();
  }
  const w = Number(width || 0);
  if (flag.includes("-")) return value.padEnd(w);
  if (flag.includes("0") && !"sbc".includes(conversion)) {
    const sign = value.startsWith("-") ? "-" : "";
    return sign + value.slice(sign.length).padStart(w - sign.length, "0");
  }
  return value.padStart(w);
}

/** `base64 [-d] [-w COLS] [FILE]`: encodes text as UTF-8, decodes to UTF-8 text. */
const base64 = withUsage((io, out) => {
  const { flags, values, operands } = parseArgs("base64", io.args, { flags: "di", valued: "w", long: { decode: "d", wrap: "w" } });
  let input: string;
  try {
    input = readInput(io, operands[0] ?? "-");
  } catch (e) {
    out.fail(`base64: ${operands[0]}: ${errorText(e)}`);
    return;
  }
  if (flags.has("d")) {
    const decoded = base64ToUtf8(input);
    if (decoded === null) out.fail("base64: invalid input");
    else out.write(decoded);
    return;
  }
  const wrap = Number(values.get("w") ?? 76);
  const encoded = utf8ToBase64(input);
  const lines = wrap > 0 ? (encoded.match(new RegExp(`.{1,${wrap}}`, "g")) ?? []) : [encoded];
  out.write(lines.map((l) => `${l}\n`).join(""));
});

const tee = withUsage((io, out) => {
  const { flags, operands } = parseArgs("tee", io.args, { flags: "a", long: { append: "a" } });
  for (const operand of operands) {
    try {
      const abs = io.fs.resolve(operand);
      if (flags.has("a")) io.fs.appendFile(abs, io.stdin);
      else io.fs.writeFile(abs, io.stdin);
    } catch (e) {
      out.fail(`tee: ${operand}: ${errorText(e)}`);
    }
  }
  out.write(io.stdin);
});

export const TEXT_COMMANDS: Record<string, Command> = {
  grep,
  wc,
  head: lineWindow("head"),
  tail: lineWindow("tail"),
  sort,
  uniq,
  echo,
  printf,
  base64,
  tee,
  true: () => ({ exitCode: 0, stdout: "", stderr: "" }),
  false: () => ({ exitCode: 1, stdout: "", stderr: "" }),
};
