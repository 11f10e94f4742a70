/**
 * The workspace's seeded tasks: each kind builds an initial file tree and an instruction from a generator, and
 * grades the final tree (solved or not, with a reason a person can read). Each task records what grading needs,
 * so a model that edits or deletes the inputs is still graded against the original question.
 *
 * The instructions are also what the oracle policy reads to find its plan: change their wording with it.
 */

import type { Rng } from "../../core/index.js";
import { normalizePath, WORKSPACE_ROOT, type VirtualFs } from "./fs.js";

export const TASK_KINDS = ["count_errors", "list_python", "fix_config", "find_secret"] as const;
export type TaskKind = (typeof TASK_KINDS)[number];

export type WorkspaceTask =
  | { kind: "count_errors"; instruction: string; log_path: string; answer_path: string; expected_count: number }
  | { kind: "list_python"; instruction: string; source_dir: string; summary_path: string; expected_names: string[] }
  | { kind: "fix_config"; instruction: string; config_path: string; original: string; debug_line: number }
  | { kind: "find_secret"; instruction: string; search_dir: string; answer_path: string; expected_path: string };

export interface GeneratedTask {
  task: WorkspaceTask;
  /** Absolute path → contents of the initial tree. */
  files: Record<string, string>;
}

export interface Grade {
  solved: boolean;
  /** Why not (empty when solved). */
  reason: string;
}

const W = WORKSPACE_ROOT;
/** The names a task's log and config file get (the oracle's look-alike mistakes swap one for another). */
export const LOG_FILE_NAMES = ["app.log", "server.log", "worker.log"] as const;
export const CONFIG_FILE_NAMES = ["config.ini", "settings.ini", "service.ini"] as const;
const ANSWER_PATH = `${W}/answer.txt`;

export function generateTask(kind: TaskKind, rng: Rng): GeneratedTask {
  switch (kind) {
    case "count_errors":
      return countErrorsTask(rng);
    case "list_python":
      return listPythonTask(rng);
    case "fix_config":
      return fixConfigTask(rng);
    case "find_secret":
      return findSecretTask(rng);
  }
}

export function gradeTask(task: WorkspaceTask, fs: VirtualFs): Grade {
  switch (task.kind) {
    case "count_errors":
      return gradeAnswer(fs, task.answer_path, String(task.expected_count), (got) =>
        `${task.answer_path} holds "${got}", which is not the number of lines of ${task.log_path} containing ERROR`,
      );
    case "list_python":
      return gradeSummary(task, fs);
    case "fix_config":
      return gradeConfig(task, fs);
    case "find_secret":
      return gradeAnswer(fs, task.answer_path, task.expected_path, (got) =>
        `${task.answer_path} holds "${got}", which is not the file with the SECRET_TOKEN= line`,
        (got) => normalizePath(got, W),
      );
  }
}

// ---- count_errors -------------------------------------------------------------------------------------------

const COMPONENTS = ["auth", "db", "api", "cache", "worker", "scheduler"];
const MESSAGES: Record<string, string[]> = {
  INFO: ["request handled in {n}ms", "user {id} logged in", "cache warmed with {n} keys", "job {id} finished"],
  DEBUG: ["query plan cached", "heartbeat ok", "retry budget is {n}"],
  // Lowercase "error" in a WARN line: a case-insensitive count is wrong.
  WARN: ["slow query took {n}ms", "retrying after transient error", "disk usage at {n}%"],
  ERROR: ["connection refused by db-{n}", "timeout after {n}ms", "failed to write checkpoint {id}", "unhandled exception in handler"],
};

function logLines(rng: Rng, count: number, errorShare: number): string[] {
  const lines: string[] = [];
  let seconds = rng.int(0, 3600 * 20);
  const day = rng.int(1, 28);
  for (let i = 0; i < count; i++) {
    seconds += rng.int(1, 90);
    const r = rng.next();
    const level = r < errorShare ? "ERROR" : r < errorShare + 0.15 ? "WARN" : r < errorShare + 0.3 ? "DEBUG" : "INFO";
    const message = rng
      .choice(MESSAGES[level]!)
      .replace("{n}", String(rng.int(2, 999)))
      .replace("{id}", String(rng.int(1000, 9999)));
    lines.push(`2024-05-${pad2(day)} ${clock(seconds)} ${level} [${rng.choice(COMPONENTS)}] ${message}`);
  }
  return lines;
}

function countErrorsTask(rng: Rng): GeneratedTask {
  const logPath = `${W}/logs/${rng.choice(LOG_FILE_NAMES)}`;
  const lines = logLines(rng, rng.int(24, 40), 0.2);
  if (!lines.some((l) => l.includes("ERROR"))) lines[0] = lines[0]!.replace(/ (INFO|DEBUG|WARN) /, " ERROR ");
  const expected = lines.filter((l) => l.includes("ERROR")).length;
  return {
    task: {
      kind: "count_errors",
      instruction:
        `Count the lines of ${logPath} that contain the text ERROR (case-sensitive) and write that number to ` +
        `${ANSWER_PATH}.`,
      log_path: logPath,
      answer_path: ANSWER_PATH,
      expected_count: expected,
    },
    files: {
      [logPath]: lines.join("\n") + "\n",
      // Another log with errors of its own: counting every log is wrong.
      [`${W}/logs/old.log`]: logLines(rng, rng.int(6, 12), 0.4).join("\n") + "\n",
      [`${W}/README.md`]: "# Service workspace\n\nLogs are in logs/.\n",
    },
  };
}

// ---- list_python --------------------------------------------------------------------------------------------

const PACKAGES = ["core", "utils", "api", "models", "cli", "storage", "jobs"];
const MODULES = ["helpers", "config", "client", "server", "parser", "render", "schema", "tasks", "views", "loader", "cache", "errors"];

function listPythonTask(rng: Rng): GeneratedTask {
  const sourceDir = `${W}/src`;
  const summaryPath = `${W}/out/summary.md`;
  const files: Record<string, string> = {};
  const modules = shuffled(rng, MODULES);
  const names: string[] = [];
  for (const pkg of shuffled(rng, PACKAGES).slice(0, rng.int(2, 3))) {
    for (let i = rng.int(2, 3); i > 0 && modules.length; i--) {
      const mod = modules.pop()!;
      names.push(`${mod}.py`);
      files[`${sourceDir}/${pkg}/${mod}.py`] = `def ${mod}_version():\n    return ${rng.int(1, 9)}\n`;
    }
    // Look-alikes that are not .py files.
    files[`${sourceDir}/${pkg}/${rng.choice(["data.json", "notes.txt", "schema.sql"])}`] = "{}\n";
    if (rng.next() < 0.5) files[`${sourceDir}/${pkg}/__pycache__/cached.pyc`] = "binary\n";
  }
  names.push("main.py");
  files[`${sourceDir}/main.py`] = 'if __name__ == "__main__":\n    print("hello")\n';
  files[`${sourceDir}/README.md`] = "Source code.\n";
  // Python files outside src/ must not be listed.
  files[`${W}/setup.py`] = "from setuptools import setup\n\nsetup()\n";
  files[`${W}/tests/test_${modules.pop() ?? "misc"}.py`] = "def test_ok():\n    assert True\n";
  return {
    task: {
      kind: "list_python",
      instruction:
        `Create ${summaryPath} listing the file names (without directories) of all .py files under ${sourceDir}, ` +
        "including subdirectories, one per line, sorted alphabetically.",
      source_dir: sourceDir,
      summary_path: summaryPath,
      expected_names: [...names].sort(),
    },
    files,
  };
}

function gradeSummary(task: Extract<WorkspaceTask, { kind: "list_python" }>, fs: VirtualFs): Grade {
  if (!fs.isFile(task.summary_path)) return fail(`${task.summary_path} was not created`);
  // Blank lines and Markdown bullets are tolerated: the content is the list of names.
  const listed = fs
    .readFile(task.summary_path)
    .split("\n")
    .map((line) => line.trim().replace(/^[-*]\s+/, ""))
    .filter(Boolean);
  const expected = task.expected_names;
  if (listed.length === expected.length && listed.every((name, i) => name === expected[i])) return pass();
  const missing = expected.filter((n) => !listed.includes(n));
  const extra = listed.filter((n) => !expected.includes(n));
  if (!missing.length && !extra.length) return fail(`${task.summary_path} has the right names but not once each in sorted order`);
  const parts = [missing.length ? `missing ${missing.join(", ")}` : "", extra.length ? `not wanted: ${extra.join(", ")}` : ""];
  return fail(`${task.summary_path} does not list the .py files under ${task.source_dir} (${parts.filter(Boolean).join("; ")})`);
}

// ---- fix_config ---------------------------------------------------------------------------------------------

function fixConfigTask(rng: Rng): GeneratedTask {
  const configPath = `${W}/${rng.choice(CONFIG_FILE_NAMES)}`;
  const app = rng.choice(["billing", "search", "ingest", "gateway"]);
  const sections: [string, string[]][] = [
    ["server", [`host = 0.0.0.0`, `port = ${rng.int(3000, 9000)}`, `workers = ${rng.int(2, 16)}`]],
    ["app", [`name = ${app}`, `log_level = ${rng.choice(["info", "warning"])}`, `timeout = ${rng.int(5, 60)}`]],
    // Settings that only start with "debug" must keep their values.
    ["database", [`url = postgres://db:5432/${app}`, `pool_size = ${rng.int(2, 20)}`, "debug_sql = true"]],
  ];
  const entries = sections[rng.int(0, 1)]![1];
  entries.splice(rng.int(0, entries.length), 0, "debug = true");
  const lines = [`# ${app} service settings`];
  for (const [name, entries] of sections) lines.push(...(lines.length > 1 ? [""] : []), `[${name}]`, ...entries);
  const original = lines.join("\n") + "\n";
  return {
    task: {
      kind: "fix_config",
      instruction: `The config file ${configPath} has the line "debug = true". Change it to "debug = false" and leave every other line unchanged.`,
      config_path: configPath,
      original,
      debug_line: lines.indexOf("debug = true"),
    },
    files: { [configPath]: original },
  };
}

function gradeConfig(task: Extract<WorkspaceTask, { kind: "fix_config" }>, fs: VirtualFs): Grade {
  if (!fs.isFile(task.config_path)) return fail(`${task.config_path} is missing`);
  const lines = (text: string) => text.replace(/\n+$/, "").split("\n");
  const now = lines(fs.readFile(task.config_path));
  const before = lines(task.original);
  if (now.length !== before.length) {
    return fail(`${task.config_path} has ${now.length} lines, the original had ${before.length} (only the debug line may change)`);
  }
  for (let i = 0; i < before.length; i++) {
    if (i === task.debug_line) {
      if (!/^\s*debug\s*=\s*false\s*$/.test(now[i]!)) return fail(`the debug line reads "${now[i]}", not "debug = false"`);
    } else if (now[i] !== before[i]) {
      return fail(`line ${i + 1} changed from "${before[i]}" to "${now[i]}"`);
    }
  }
  return pass();
}

// ---- find_secret --------------------------------------------------------------------------------------------

const DATA_DIRS = ["reports", "exports", "notes", "archive"];
const DATA_NAMES = ["q1", "q2", "summary", "backup", "users", "billing", "draft", "meeting", "todo", "inventory"];

function findSecretTask(rng: Rng): GeneratedTask {
  const searchDir = `${W}/data`;
  const names = shuffled(rng, DATA_NAMES);
  const paths = Array.from({ length: rng.int(6, 9) }, () => {
    const ext = rng.choice(["txt", "csv", "md", "env"]);
    return `${searchDir}/${rng.choice(DATA_DIRS)}/${names.pop()!}.${ext}`;
  });
  const files: Record<string, string> = {};
  for (const path of paths) {
    files[path] = Array.from({ length: rng.int(2, 5) }, () => `entry ${rng.int(100, 999)}: ${rng.choice(["ok", "pending", "closed", "n/a"])}`)
      .join("\n")
      .concat("\n");
  }
  const [secretAt, mentionAt, lowerAt] = shuffled(rng, paths.map((_, i) => i));
  const token = `tok_${Array.from({ length: 16 }, () => "0123456789abcdef"[rng.int(0, 15)]).join("")}`;
  const secretPath = paths[secretAt!]!;
  files[secretPath] += `SECRET_TOKEN=${token}\n`;
  // Near misses: the name without "=", and a lowercase key.
  files[paths[mentionAt!]!] += "note: SECRET_TOKEN rotation is handled by ops\n";
  files[paths[lowerAt!]!] += `secret_token=${token.replace("tok_", "old_")}\n`;
  return {
    task: {
      kind: "find_secret",
      instruction:
        `Exactly one file under ${searchDir} contains a line starting with SECRET_TOKEN=. Write the absolute path of ` +
        `that file to ${ANSWER_PATH}.`,
      search_dir: searchDir,
      answer_path: ANSWER_PATH,
      expected_path: secretPath,
    },
    files,
  };
}

// ---- shared -------------------------------------------------------------------------------------------------

/** The answer file, trimmed (and normalised by `canonical`), must equal `expected`. */
function gradeAnswer(
  fs: VirtualFs,
  path: string,
  expected: string,
  wrong: (got: string) => string,
  canonical: (got: string) => string = (got) => got,
): Grade {
  if (!fs.isFile(path)) return fail(`${path} was not written`);
  const got = fs.readFile(path).trim();
  return got !== "" && canonical(got) === expected ? pass() : fail(wrong(got));
}

const pass = (): Grade => ({ solved: true, reason: "" });
const fail = (reason: string): Grade => ({ solved: false, reason });

function shuffled<T>(rng: Rng, items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

const pad2 = (n: number) => String(n).padStart(2, "0");
const clock = (s: number) => `${pad2(Math.floor(s / 3600) % 24)}:${pad2(Math.floor(s / 60) % 60)}:${pad2(s % 60)}`;
