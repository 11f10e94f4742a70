/**
 * The workspace's in-memory file tree. Its state is plain JSON (`FsState`) because it lives in a sample's
 * `extra_env_info`, which the rollout deep-clones between turns; `VirtualFs` is the working form of one step.
 *
 * Paths are absolute or relative to the current directory (which starts at `/workspace`); `.`, `..` and repeated
 * slashes are normalised away, and `..` at the root stays at the root, as in POSIX.
 */

import { LabError } from "../../core/index.js";

export const WORKSPACE_ROOT = "/workspace";
/** The one device file: reads as empty, swallows writes (so `2>/dev/null` works). */
export const DEV_NULL = "/dev/null";
/** Why a cap: a model can grow a file without bound (`cat f f >> f`), and the state travels every turn. */
export const MAX_FILE_CHARS = 1_000_000;

export interface FsState {
  cwd: string;
  /** Absolute path → contents. */
  files: Record<string, string>;
  /** Every directory, absolute, sorted; `/` and each file's ancestors are always present. */
  dirs: string[];
}

export type FsErrorCode = "ENOENT" | "EISDIR" | "ENOTDIR" | "EEXIST" | "ENOTEMPTY" | "EINVAL" | "EFBIG";

const ERROR_TEXT: Record<FsErrorCode, string> = {
  ENOENT: "No such file or directory",
  EISDIR: "Is a directory",
  ENOTDIR: "Not a directory",
  EEXIST: "File exists",
  ENOTEMPTY: "Directory not empty",
  EINVAL: "Invalid argument",
  EFBIG: "File too large",
};

/** A failed file operation; its message is the POSIX error text commands print (`No such file or directory`). */
export class FsError extends LabError {
  override name = "FsError";
  constructor(override readonly code: FsErrorCode) {
    super(ERROR_TEXT[code]);
  }
}

export function normalizePath(path: string, cwd: string = WORKSPACE_ROOT): string {
  const absolute = path.startsWith("/") ? path : `${cwd}/${path}`;
  const parts: string[] = [];
  for (const segment of absolute.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") parts.pop();
    else parts.push(segment);
  }
  return `/${parts.join("/")}`;
}

export function parentOf(path: string): string {
  const cut = path.lastIndexOf("/");
  return cut <= 0 ? "/" : path.slice(0, cut);
}

export function baseName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

/** `child` is `dir` itself or lies under it. */
export function isWithin(child: string, dir: string): boolean {
  return child === dir || child.startsWith(dir === "/" ? "/" : `${dir}/`);
}

export function utf8Length(text: string): number {
  return new TextEncoder().encode(text).length;
}

export class VirtualFs {
  private readonly files = new Map<string, string>();
  private readonly dirs = new Set<string>(["/"]);
  cwd: string = WORKSPACE_ROOT;

  /** A fresh tree holding `/workspace` (the starting directory) and the given files (paths as `normalizePath`). */
  static withFiles(files: Record<string, string>): VirtualFs {
    const fs = new VirtualFs();
    fs.mkdir(WORKSPACE_ROOT, true);
    for (const [path, content] of Object.entries(files)) {
      const abs = normalizePath(path);
      fs.mkdir(parentOf(abs), true);
      fs.writeFile(abs, content);
    }
    return fs;
  }

  /** Copies the state in; checks its shape, since it comes from metadata that anything could have edited. */
  static fromJSON(state: unknown): VirtualFs {
    const s = state as Partial<FsState> | null;
    if (!s || typeof s !== "object" || typeof s.cwd !== "string" || !s.files || typeof s.files !== "object") {
      throw new Error("workspace file system state is missing or malformed");
    }
    const fs = new VirtualFs();
    for (const dir of Array.isArray(s.dirs) ? s.dirs : []) {
      if (typeof dir === "string") fs.addDirChain(normalizePath(dir, "/"));
    }
    for (const [path, content] of Object.entries(s.files)) {
      if (typeof content !== "string") throw new Error(`workspace file ${path} has no text contents`);
      const abs = normalizePath(path, "/");
      fs.addDirChain(parentOf(abs));
      fs.files.set(abs, content);
    }
    fs.cwd = fs.isDir(normalizePath(s.cwd, "/")) ? normalizePath(s.cwd, "/") : WORKSPACE_ROOT;
    fs.addDirChain(WORKSPACE_ROOT);
    return fs;
  }

  /** Sorted keys, so equal trees serialise to equal JSON. */
  toJSON(): FsState {
    const files: Record<string, string> = {};
    for (const path of [...this.files.keys()].sort()) files[path] = this.files.get(path)!;
    return { cwd: this.cwd, files, dirs: [...this.dirs].sort() };
  }

  resolve(path: string): string {
    if (path === "") throw new FsError("ENOENT");
    return normalizePath(path, this.cwd);
  }

  isFile(abs: string): boolean {
    return abs === DEV_NULL || this.files.has(abs);
  }

  isDir(abs: string): boolean {
    return this.dirs.has(abs);
  }

  exists(abs: string): boolean {
    return this.isFile(abs) || this.isDir(abs);
  }

  readFile(abs: string): string {
    if (abs === DEV_NULL) return "";
    const content = this.files.get(abs);
    if (content !== undefined) return content;
    throw new FsError(this.isDir(abs) ? "EISDIR" : this.parentProblem(abs) ?? "ENOENT");
  }

  /** Creates or replaces a file; the parent directory must exist (as with `>`), the path must not be a directory. */
  writeFile(abs: string, content: string): void {
    if (abs === DEV_NULL) return;
    if (this.isDir(abs)) throw new FsError("EISDIR");
    const problem = this.parentProblem(abs);
    if (problem) throw new FsError(problem);
    if (content.length > MAX_FILE_CHARS) throw new FsError("EFBIG");
    this.files.set(abs, content);
  }

  appendFile(abs: string, content: string): void {
    if (abs === DEV_NULL) return;
    this.writeFile(abs, (this.files.get(abs) ?? "") + content);
  }

  /** `mkdir` (parents: `mkdir -p`, which accepts an existing directory). */
  mkdir(abs: string, parents = false): void {
    if (this.isDir(abs)) {
      if (parents) return;
      throw new FsError("EEXIST");
    }
    if (this.isFile(abs)) throw new FsError(parents ? "ENOTDIR" : "EEXIST");
    if (parents) {
      this.mkdir(parentOf(abs), true);
    } else {
      const problem = this.parentProblem(abs);
      if (problem) throw new FsError(problem);
    }
    this.dirs.add(abs);
  }

  /** Child names of a directory, sorted (C locale, like `LC_ALL=C ls`). */
  list(abs: string): string[] {
    if (!this.isDir(abs)) throw new FsError(this.isFile(abs) ? "ENOTDIR" : "ENOENT");
    const prefix = abs === "/" ? "/" : `${abs}/`;
    const names = new Set<string>();
    for (const path of [...this.files.keys(), ...this.dirs]) {
      if (path !== abs && path.startsWith(prefix) && !path.slice(prefix.length).includes("/")) {
        names.add(path.slice(prefix.length));
      }
    }
    return [...names].sort();
  }

  /** Removes a file, or a directory with everything under it when `recursive` (else only an empty one). */
  remove(abs: string, recursive = false): void {
    if (this.files.delete(abs)) return;
    if (!this.isDir(abs)) throw new FsError("ENOENT");
    if (abs === "/") throw new FsError("EINVAL");
    if (!recursive && this.list(abs).length) throw new FsError("ENOTEMPTY");
    for (const path of [...this.files.keys()]) if (isWithin(path, abs)) this.files.delete(path);
    for (const dir of [...this.dirs]) if (isWithin(dir, abs)) this.dirs.delete(dir);
    if (isWithin(this.cwd, abs)) this.cwd = parentOf(abs);
  }

  /** Copies a file or (recursively) a directory to a destination path that is not there yet or is a file. */
  copy(from: string, to: string): void {
    if (this.isFile(from)) return this.writeFile(to, this.readFile(from));
    if (!this.isDir(from)) throw new FsError("ENOENT");
    if (isWithin(to, from)) throw new FsError("EINVAL");
    this.mkdir(to, false);
    for (const name of this.list(from)) this.copy(`${from === "/" ? "" : from}/${name}`, `${to}/${name}`);
  }

  /** Renames a file or directory (the destination's parent must exist). */
  move(from: string, to: string): void {
    if (from === to) return;
    if (this.isDir(from) && isWithin(to, from)) throw new FsError("EINVAL");
    this.copy(from, to);
    this.remove(from, true);
  }

  /** Every file and directory under `abs` (excluded), depth first with sorted siblings: a recursive walk. */
  walk(abs: string): string[] {
    const out: string[] = [];
    for (const name of this.list(abs)) {
      const path = abs === "/" ? `/${name}` : `${abs}/${name}`;
      out.push(path);
      if (this.isDir(path)) out.push(...this.walk(path));
    }
    return out;
  }

  /** Why `abs`'s parent cannot hold it: missing, or a file. */
  private parentProblem(abs: string): FsErrorCode | null {
    const parent = parentOf(abs);
    if (this.isDir(parent)) return null;
    let up = parent;
    while (up !== "/" && !this.exists(up)) up = parentOf(up);
    return this.isFile(up) ? "ENOTDIR" : "ENOENT";
  }

  private addDirChain(abs: string): void {
    for (let dir = abs; ; dir = parentOf(dir)) {
      this.dirs.add(dir);
      if (dir === "/") break;
    }
  }
}
