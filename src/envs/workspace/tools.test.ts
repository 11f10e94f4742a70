/**
 * The derived library's session-environment cases (README: the workspace takes the fork's session tool set, so
 * its own tests run `session_env_structured_parse`, `session_env_legacy_parse` and `session_env_observations`):
 * every case of those areas, from the file named by CONFORMANCE_CASES or the project's fixture copy.
 */

import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { generateTask } from "./tasks.js";
import { Rng } from "../../core/index.js";
import { VirtualFs } from "./fs.js";
import { processWorkspaceTurn, WORKSPACE_ENV_DEFAULTS, type WorkspaceMetadata } from "./env.js";
import {
  buildReadFileCommand,
  buildWriteFileCommand,
  LEGACY_NUDGE,
  parseLegacyAction,
  parseStructuredAction,
  shellQuote,
  STRUCTURED_NUDGE,
} from "./tools.js";

interface Case {
  area: string;
  name: string;
  input: Record<string, unknown>;
  expected: Record<string, unknown>;
  reference_only?: unknown;
}

const casesPath = process.env.CONFORMANCE_CASES
  ? resolve(process.env.CONFORMANCE_CASES)
  : fileURLToPath(new URL("../../conformance/fixtures/conformance-cases.json", import.meta.url));
const cases = JSON.parse(readFileSync(casesPath, "utf8")) as Case[];
const inArea = (area: string) => cases.filter((c) => c.area === area);

/** A fresh sample to step once with `text` as the assistant's turn. */
function stepOnce(text: string, structured: boolean) {
  const { task, files } = generateTask("count_errors", Rng.derive(0, "tools-test"));
  const metadata: WorkspaceMetadata = { task, fs: VirtualFs.withFiles(files).toJSON(), turn: 0 };
  return processWorkspaceTurn(
    [{ role: "assistant", content: text }],
    metadata,
    { ...WORKSPACE_ENV_DEFAULTS, structured_tools: structured },
  );
}

function runCases(area: string, check: (c: Case) => void): void {
  const all = inArea(area);
  it(`has cases for ${area}`, () => expect(all.length).toBeGreaterThan(0));
  for (const c of all) {
    // Reference-only cases are reported apart: neither passed nor failed.
    if (c.reference_only) it.skip(`${c.name} (reference only)`, () => {});
    else it(c.name, () => check(c));
  }
}

describe("session_env_structured_parse", () => {
  runCases("session_env_structured_parse", (c) => {
    const text = c.input.text as string;
    expect(parseStructuredAction(text)).toEqual(c.expected);
    // The environment stamps the same verdict on the returned metadata.
    const turn = stepOnce(text, true);
    expect((turn.metadata as WorkspaceMetadata).invalid_action).toBe(c.expected.invalid);
  });
});

describe("session_env_legacy_parse", () => {
  runCases("session_env_legacy_parse", (c) => {
    const text = c.input.text as string;
    const { command, done } = parseLegacyAction(text);
    expect({ command, done, invalid_action: !command && !done }).toEqual(c.expected);
    expect((stepOnce(text, false).metadata as WorkspaceMetadata).invalid_action).toBe(c.expected.invalid_action);
  });
});

describe("session_env_observations", () => {
  runCases("session_env_observations", (c) => {
    for (const structured of c.input.structured_tools as boolean[]) {
      const expected = c.expected[structured ? "structured" : "legacy"];
      expect(structured ? STRUCTURED_NUDGE : LEGACY_NUDGE).toBe(expected);
      // An invalid turn (prose) on a fresh sample is answered with the nudge alone.
      const turn = stepOnce("I think I should look around first.", structured);
      expect(turn.observation).toEqual({ role: "user", content: expected });
      expect(turn.terminated).toBe(false);
    }
  });
});

describe("command builders", () => {
  // `session_env_commands` does not apply to the workspace (README), but its strings are the builders' output.
  for (const c of inArea("session_env_commands")) {
    it(c.name, () => {
      const { path, content } = c.input as { path: string; content?: string };
      const command = content === undefined ? buildReadFileCommand(path) : buildWriteFileCommand(path, content);
      expect(command).toBe(c.expected.command);
    });
  }

  it("quotes single quotes as '\"'\"'", () => {
    expect(shellQuote("a'b")).toBe(`'a'"'"'b'`);
    expect(buildReadFileCommand("it's")).toBe(`cat -- 'it'"'"'s'`);
  });

  it("counts UTF-8 bytes in the write_file report", () => {
    expect(buildWriteFileCommand("/w/é.txt", "é\n")).toContain(`printf 'wrote %s bytes to %s\\n' 3 '/w/é.txt'`);
  });
});

describe("parseStructuredAction details", () => {
  const call = (name: string, args: unknown) => `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;

  it("turns read_file and write_file into the reference command strings", () => {
    expect(parseStructuredAction(call("read_file", { path: "notes/a b.md" })).command).toBe(`cat -- 'notes/a b.md'`);
    expect(parseStructuredAction(call("write_file", { path: "x", content: "" })).command).toBe(
      `mkdir -p -- "$(dirname -- 'x')" && printf %s '' | base64 -d > 'x' && printf 'wrote %s bytes to %s\\n' 0 'x'`,
    );
  });

  it("is invalid for non-object arguments, a truncated call, or two task_complete calls", () => {
    expect(parseStructuredAction(call("task_complete", "now")).invalid).toBe(true);
    // An unclosed call whose tail is valid JSON still parses (fork-additions.md §2.4 item 7).
    expect(parseStructuredAction('<tool_call>\n{"name": "run_shell", "arguments": {"command": "ls"}}').invalid).toBe(false);
    expect(parseStructuredAction('<tool_call>\n{"name": "run_shell"').invalid).toBe(true);
    expect(parseStructuredAction(call("task_complete", {}) + call("task_complete", {})).invalid).toBe(true);
  });

  it("ignores an unclosed think block (that is the rollout's assessment, not the environment's)", () => {
    expect(parseStructuredAction(`<think>\nhmm\n${call("run_shell", { command: "pwd" })}`)).toEqual({
      command: "pwd",
      done: false,
      invalid: false,
    });
  });
});

describe("parseLegacyAction details", () => {
  it("takes the first shell fence only, and accepts sh/shell/console or no language", () => {
    expect(parseLegacyAction("```sh\npwd\n```\n```bash\nls\n```").command).toBe("pwd");
    expect(parseLegacyAction("```console\nls -a\n```").command).toBe("ls -a");
    expect(parseLegacyAction("```\n  cat x  \n```").command).toBe("cat x");
    expect(parseLegacyAction("```python\nprint(1)\n```").command).toBe("");
  });

  it("needs TASK_COMPLETE on a line of its own", () => {
    expect(parseLegacyAction("  TASK_COMPLETE  \n").done).toBe(true);
    expect(parseLegacyAction("I am TASK_COMPLETE now").done).toBe(false);
  });
});
