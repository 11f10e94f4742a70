/**
 * Shell wildcards (`*`, `?`, `[...]`) for pathname expansion and `find -name`. A backslash escapes the next
 * character: the shell marks quoted characters that way so `'*.py'` stays literal.
 */

import { normalizePath, type VirtualFs } from "./fs.js";

export function hasWildcard(pattern: string): boolean {
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === "\\") i++;
    else if (ch === "*" || ch === "?" || ch === "[") return true;
  }
  return false;
}

/** The pattern as an anchored regular expression over one name (wildcards never match `/`). */
export function globToRegExp(pattern: string): RegExp {
  let source = "";
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === "\\" && i + 1 < pattern.length) {
      source += escapeRegExp(pattern[++i]!);
    } else if (ch === "*") {
      source += "[^/]*";
    } else if (ch === "?") {
      source += "[^/]";
    } else if (ch === "[" && pattern.indexOf("]", i + 2) > 0) {
      const end = pattern.indexOf("]", i + 2);
      let body = pattern.slice(i + 1, end);
      if (body.startsWith("!")) body = `^${body.slice(1)}`;
      source += `[${body.replace(/\\/g, "\\\\")}]`;
      i = end;
    } else {
      source += escapeRegExp(ch);
    }
  }
  return new RegExp(`^${source}$`);
}

/** Drops the escapes: the literal text of a pattern, used when nothing matches (bash keeps the word as is). */
export function unescapeGlob(pattern: string): string {
  return pattern.replace(/\\(.)/gs, "$1");
}

/**
 * Pathname expansion of one word: the matching paths, sorted, written the way the word was (relative stays
 * relative); an empty list when nothing matches. A leading `.` must be matched explicitly, as in bash.
 */
export function expandGlob(pattern: string, fs: VirtualFs): string[] {
  // Each match is a path as written so far: "" (the current directory), "/" or "a/b".
  let matches: string[] = [pattern.startsWith("/") ? "/" : ""];
  for (const segment of pattern.split("/").filter((s) => s !== "")) {
    const next: string[] = [];
    for (const base of matches) {
      if (!hasWildcard(segment)) {
        const path = join(base, unescapeGlob(segment));
        if (fs.exists(normalizePath(path, fs.cwd))) next.push(path);
        continue;
      }
      const dir = normalizePath(base || ".", fs.cwd);
      if (!fs.isDir(dir)) continue;
      const regex = globToRegExp(segment);
      const dotOk = unescapeGlob(segment).startsWith(".");
      for (const name of fs.list(dir)) {
        if ((dotOk || !name.startsWith(".")) && regex.test(name)) next.push(join(base, name));
      }
    }
    matches = next;
  }
  return matches.sort();
}

function join(base: string, name: string): string {
  if (base === "") return name;
  return base === "/" ? `/${name}` : `${base}/${name}`;
}

function escapeRegExp(ch: string): string {
  return ch.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}
