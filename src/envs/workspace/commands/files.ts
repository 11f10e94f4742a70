/** Built-ins that look at or change the tree: ls, cat, mkdir, touch, rm, mv, cp, find, pwd, cd, dirname, basename. */

import { baseName, utf8Length, WORKSPACE_ROOT, type VirtualFs } from "../fs.js";
import { globToRegExp } from "../glob.js";
import { type Command, errorText, parseArgs, readInput, splitLinesKeepEnds, UsageError, withUsage } from "./common.js";

/** Joins a path as the user wrote it with a child name (`.` + `a` → `./a`, `/` + `a` → `/a`). */
function joinShown(base: string, name: string): string {
  return base.endsWith("/") ? `${base}${name}` : `${base}/${name}`;
}

function longLine(fs: VirtualFs, abs: string, shown: string, width: number): string {
  const dir = fs.isDir(abs);
  const size = dir ? 4096 : utf8Length(fs.readFile(abs));
  return `${dir ? "drwxr-xr-x" : "-rw-r--r--"} 1 user user ${String(size).padStart(width)} Jan  1 00:00 ${shown}`;
}

const ls = withUsage((io, out) => {
  const { flags, operands } = parseArgs("ls", io.args, { flags: "alAh1" });
  const all = flags.has("a");
  const long = flags.has("l");
  const targets = operands.length ? operands : ["."];
  const files: { abs: string; shown: string }[] = [];
  const dirs: { abs: string; shown: string }[] = [];
  for (const shown of targets) {
    const abs = io.fs.resolve(shown);
    if (io.fs.isDir(abs)) dirs.push({ abs, shown });
    else if (io.fs.isFile(abs)) files.push({ abs, shown });
    else out.fail(`ls: cannot access '${shown}': No such file or directory`, 2);
  }
  const block = (entries: { abs: string; shown: string }[]) => {
    const width = long ? Math.max(1, ...entries.map((e) => String(io.fs.isDir(e.abs) ? 4096 : utf8Length(io.fs.readFile(e.abs))).length)) : 0;
    return entries.map((e) => (long ? longLine(io.fs, e.abs, e.shown, width) : e.shown)).join("\n");
  };
  const sections: string[] = [];
  if (files.length) sections.push(`${block(files.sort((a, b) => cmp(a.shown, b.shown)))}\n`);
  for (const dir of dirs.sort((a, b) => cmp(a.shown, b.shown))) {
    const names = io.fs.list(dir.abs).filter((n) => all || !n.startsWith("."));
    const entries = [...(all ? [".", ".."] : []), ...names].map((name) => ({
      abs: io.fs.resolve(joinShown(dir.abs, name)),
      shown: name,
    }));
    const body = entries.length ? `${block(entries)}\n` : "";
    sections.push(targets.length > 1 ? `${dir.shown}:\n${body}` : body);
  }
  out.write(sections.join("\n"));
});

const cat = withUsage((io, out) => {
  const { flags, operands } = parseArgs("cat", io.args, { flags: "n" });
  let text = "";
  for (const operand of operands.length ? operands : ["-"]) {
    try {
      text += readInput(io, operand);
    } catch (e) {
      out.fail(`cat: ${operand}: ${errorText(e)}`);
    }
  }
  if (flags.has("n")) {
    text = splitLinesKeepEnds(text)
      .map((line, i) => `${String(i + 1).padStart(6)}\t${line}`)
      .join("");
  }
  out.write(text);
});

const mkdir = withUsage((io, out) => {
  const { flags, operands } = parseArgs("mkdir", io.args, { flags: "pv", long: { parents: "p" } });
  if (!operands.length) throw new UsageError("mkdir: missing operand", 1);
  for (const operand of operands) {
    try {
      io.fs.mkdir(io.fs.resolve(operand), flags.has("p"));
    } catch (e) {
      out.fail(`mkdir: cannot create directory '${operand}': ${errorText(e)}`);
    }
  }
});

const touch = withUsage((io, out) => {
  const { operands } = parseArgs("touch", io.args, {});
  if (!operands.length) throw new UsageError("touch: missing file operand", 1);
  for (const operand of operands) {
    try {
      const abs = io.fs.resolve(operand);
      if (!io.fs.exists(abs)) io.fs.writeFile(abs, "");
    } catch (e) {
      out.fail(`touch: cannot touch '${operand}': ${errorText(e)}`);
    }
  }
});

const rm = withUsage((io, out) => {
  const { flags, operands } = parseArgs("rm", io.args, { flags: "rRfv", long: { recursive: "r", force: "f" } });
  const recursive = flags.has("r") || flags.has("R");
  const force = flags.has("f");
  if (!operands.length && !force) throw new UsageError("rm: missing operand", 1);
  for (const operand of operands) {
    const abs = io.fs.resolve(operand);
    if (!io.fs.exists(abs)) {
      if (!force) out.fail(`rm: cannot remove '${operand}': No such file or directory`);
    } else if (io.fs.isDir(abs) && !recursive) {
      out.fail(`rm: cannot remove '${operand}': Is a directory`);
    } else if (abs === "/") {
      out.fail("rm: it is dangerous to operate recursively on '/'");
    } else {
      io.fs.remove(abs, true);
    }
  }
});

/** `mv` and `cp`: the last operand is the destination, a directory receives the sources by name. */
function transfer(name: "mv" | "cp"): Command {
  return withUsage((io, out) => {
    const { flags, operands } = parseArgs(name, io.args, { flags: name === "cp" ? "rRfpav" : "fiv", long: { recursive: "r", force: "f" } });
    if (operands.length < 2) throw new UsageError(`${name}: missing ${operands.length ? "destination file operand after '" + operands[0] + "'" : "file operand"}`, 1);
    const target = operands[operands.length - 1]!;
    const targetAbs = io.fs.resolve(target);
    const sources = operands.slice(0, -1);
    const intoDir = io.fs.isDir(targetAbs);
    if (sources.length > 1 && !intoDir) throw new UsageError(`${name}: target '${target}' is not a directory`, 1);
    for (const source of sources) {
      const from = io.fs.resolve(source);
      const to = intoDir ? io.fs.resolve(joinShown(targetAbs, baseName(from))) : targetAbs;
      if (!io.fs.exists(from)) {
        out.fail(`${name}: cannot stat '${source}': No such file or directory`);
      } else if (name === "cp" && io.fs.isDir(from) && !(flags.has("r") || flags.has("R") || flags.has("a"))) {
        out.fail(`cp: -r not specified; omitting directory '${source}'`);
      } else if (io.fs.isDir(from) && io.fs.isFile(to)) {
        out.fail(`${name}: cannot overwrite non-directory '${target}' with directory '${source}'`);
      } else {
        try {
          if (name === "mv") io.fs.move(from, to);
          else io.fs.copy(from, to);
        } catch (e) {
          out.fail(`${name}: cannot ${name === "mv" ? "move" : "copy"} '${source}' to '${target}': ${errorText(e)}`);
        }
      }
    }
  });
}

/** `find [path…] [-name glob] [-iname glob] [-type f|d] [-maxdepth N] [-mindepth N]`, walking in sorted order. */
const find = withUsage((io, out) => {
  const starts: string[] = [];
  let i = 0;
  for (; i < io.args.length && !io.args[i]!.startsWith("-"); i++) starts.push(io.args[i]!);
  const tests: ((path: string, depth: number) => boolean)[] = [];
  let maxDepth = Infinity;
  let minDepth = 0;
  for (; i < io.args.length; i++) {
    const predicate = io.args[i]!;
    const value = io.args[i + 1];
    if (!["-name", "-iname", "-type", "-maxdepth", "-mindepth"].includes(predicate)) {
      throw new UsageError(`find: unknown predicate '${predicate}'`, 1);
    }
    if (value === undefined) throw new UsageError(`find: missing argument to '${predicate}'`, 1);
    i++;
    if (predicate === "-name" || predicate === "-iname") {
      const source = globToRegExp(value).source;
      const regex = new RegExp(source, predicate === "-iname" ? "i" : "");
      tests.push((path) => regex.test(path === "/" ? "/" : baseName(path)));
    } else if (predicate === "-type") {
      if (value !== "f" && value !== "d") throw new UsageError(`find: Unknown argument to -type: ${value}`, 1);
      tests.push((path) => (value === "d" ? io.fs.isDir(path) : io.fs.isFile(path)));
    } else {
      if (!/^\d+$/.test(value)) throw new UsageError(`find: Expected a positive decimal integer argument to ${predicate}, but got '${value}'`, 1);
      if (predicate === "-maxdepth") maxDepth = Number(value);
      else minDepth = Number(value);
    }
  }
  for (const start of starts.length ? starts : ["."]) {
    const root = io.fs.resolve(start);
    if (!io.fs.exists(root)) {
      out.fail(`find: '${start}': No such file or directory`);
      continue;
    }
    const visit = (abs: string, shown: string, depth: number) => {
      if (depth >= minDepth && tests.every((t) => t(abs, depth))) out.write(`${shown}\n`);
    };
    visit(root, start, 0);
    if (!io.fs.isDir(root)) continue;
    const prefix = root === "/" ? 1 : root.length + 1;
    for (const abs of io.fs.walk(root)) {
      const rel = abs.slice(prefix);
      const depth = rel.split("/").length;
      if (depth <= maxDepth) visit(abs, joinShown(start, rel), depth);
    }
  }
});

const pwd = withUsage((io, out) => {
  out.write(`${io.fs.cwd}\n`);
});

const cd = withUsage((io, out) => {
  const { operands } = parseArgs("cd", io.args, {});
  if (operands.length > 1) throw new UsageError("cd: too many arguments", 1);
  const target = operands[0] ?? WORKSPACE_ROOT;
  const abs = io.fs.resolve(target);
  if (io.fs.isDir(abs)) io.fs.cwd = abs;
  else out.fail(`cd: ${target}: ${io.fs.isFile(abs) ? "Not a directory" : "No such file or directory"}`);
});

/** POSIX `dirname`: drop trailing slashes, then the last component. */
export function dirnameOf(path: string): string {
  const trimmed = path.replace(/\/+$/, "");
  if (trimmed === "") return path.startsWith("/") ? "/" : ".";
  const cut = trimmed.lastIndexOf("/");
  if (cut < 0) return ".";
  return trimmed.slice(0, cut).replace(/\/+$/, "") || "/";
}

const dirname = withUsage((io, out) => {
  const { operands } = parseArgs("dirname", io.args, {});
  if (!operands.length) throw new UsageError("dirname: missing operand", 1);
  for (const operand of operands) out.write(`${dirnameOf(operand)}\n`);
});

const basename = withUsage((io, out) => {
  const { operands } = parseArgs("basename", io.args, {});
  if (!operands.length) throw new UsageError("basename: missing operand", 1);
  const [path, suffix] = operands as [string, string | undefined];
  const trimmed = path.replace(/\/+$/, "");
  let name = trimmed === "" ? (path ? "/" : "") : baseName(trimmed);
  if (suffix && name !== suffix && name.endsWith(suffix)) name = name.slice(0, -suffix.length);
  out.write(`${name}\n`);
});

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export const FILE_COMMANDS: Record<string, Command> = {
  ls,
  cat,
  mkdir,
  touch,
  rm,
  mv: transfer("mv"),
  cp: transfer("cp"),
  find,
  pwd,
  cd,
  dirname,
  basename,
};
