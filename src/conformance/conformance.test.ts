import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import {
  ADAPTER_AREAS,
  compareValues,
  parseCaseFile,
  runCase,
  runCases,
  type ConformanceCase,
} from "./adapter.js";

const FIXTURE = fileURLToPath(new URL("./fixtures/conformance-cases.json", import.meta.url));
const CASES_FILE = process.env.CONFORMANCE_CASES ? resolve(process.cwd(), process.env.CONFORMANCE_CASES) : FIXTURE;

const REQUIRED_AREAS = [
  "hermes_parse",
  "envelope",
  "structured_config",
  "registry",
  "schema_validate_arguments",
  "schema_validate_against_schema",
  "classify_schema_failure",
  "detect_malformed_thinking",
  "detect_invalid_tool_call",
  "assess_tool_calls",
  "assess_assistant_turn",
  "pop_env_flags",
  "severity_locus_defaults",
  "penalty_step_scale",
  "violations_at_locus",
  "sample_locus_penalty",
  "apply_invalid_action_penalty",
  "violation_rate_metrics",
];

describe(`conformance cases (${CASES_FILE})`, () => {
  const cases = parseCaseFile(readFileSync(CASES_FILE, "utf8"));
  const summary = runCases(cases);

  it("every case of the adapter's areas passes", () => {
    const listing = summary.failures.map((f) => `${f.id}: ${f.reason}`).join("\n");
    expect(summary.failed, `failed cases:\n${listing}`).toBe(0);
    expect(summary.passed).toBeGreaterThan(0);
  });

  it("counts every case once: passed + failed + reference-only = all", () => {
    expect(summary.passed + summary.failed + summary.referenceOnly).toBe(cases.length);
  });

  it("runs every required area, and only reference-only cases or other areas are left out", () => {
    expect([...ADAPTER_AREAS].sort()).toEqual([...REQUIRED_AREAS].sort());
    for (const c of cases) {
      const leftOut = runCase(c).status === "reference_only";
      expect(leftOut, `${c.area}/${c.name}`).toBe("reference_only" in c || !REQUIRED_AREAS.includes(c.area));
    }
  });
});

describe("the adapter can fail", () => {
  const hermes: ConformanceCase = {
    area: "hermes_parse",
    name: "self_test",
    input: { text: '<tool_call>\n{"name": "run_shell", "arguments": {"command": "ls"}}\n</tool_call>' },
    expected: {
      tools_called: true,
      attempted: true,
      content: null,
      error: null,
      tool_calls: [{ name: "run_shell", arguments: { command: "ls" }, arguments_json: '{"command": "ls"}' }],
    },
  };
  const withExpected = (c: ConformanceCase, expected: Record<string, unknown>): ConformanceCase => ({ ...c, expected });

  it("passes the correct case", () => {
    expect(runCase(hermes)).toEqual({ status: "passed" });
  });

  it("fails a wrong expected value, naming the key", () => {
    const r = runCase(withExpected(hermes, { ...hermes.expected, tools_called: false }));
    expect(r.status).toBe("failed");
    expect(r.reason).toContain("tools_called");
  });

  it("fails a wrong nested value and an array of the wrong length", () => {
    const wrongJson = runCase(
      withExpected(hermes, {
        tool_calls: [{ name: "run_shell", arguments: { command: "ls" }, arguments_json: '{"command":"ls"}' }],
      }),
    );
    expect(wrongJson.status).toBe("failed");
    expect(wrongJson.reason).toContain("arguments_json");
    expect(runCase(withExpected(hermes, { tool_calls: [] })).status).toBe("failed");
  });

  it("fails an expected key the table does not list", () => {
    const r = runCase(withExpected(hermes, { ...hermes.expected, bogus_key: 1 }));
    expect(r.status).toBe("failed");
    expect(r.reason).toContain("bogus_key");
  });

  it("fails an unknown fn, an unknown registry and an unknown tokenizer behaviour", () => {
    expect(runCase({ area: "envelope", name: "x", input: { fn: "nope" }, expected: {} }).status).toBe("failed");
    expect(
      runCase({ area: "registry", name: "x", input: { fn: "names", registry: "NOPE" }, expected: { names: [] } }).status,
    ).toBe("failed");
    expect(
      runCase({
        area: "structured_config",
        name: "x",
        input: { fn: "decode_skip_special", structured_cfg: { enabled: true }, tokenizer_behaviour: "nope" },
        expected: { skip_special_tokens: true },
      }).status,
    ).toBe("failed");
  });

  it("reports reference-only cases and unknown areas apart", () => {
    const summary = runCases([
      hermes,
      { ...hermes, name: "ro", reference_only: "cannot apply", expected: { tools_called: "garbage" } },
      { area: "structural_tag", name: "dormant", input: {}, expected: { json: "x" } },
      withExpected(hermes, { tools_called: false }),
    ]);
    expect(summary.passed).toBe(1);
    expect(summary.failed).toBe(1);
    expect(summary.referenceOnly).toBe(2);
    expect(summary.failures.map((f) => f.id)).toEqual(["hermes_parse/self_test"]);
    expect(summary.referenceOnlyCases.map((c) => c.id)).toEqual(["hermes_parse/ro", "structural_tag/dormant"]);
  });

  it("checks raises, message and message_contains", () => {
    const base: ConformanceCase = {
      area: "violations_at_locus",
      name: "raise",
      input: { violations: [], penalty_mode: "bogus", locus: "reward" },
      expected: { raises: "ValueError", message: "Unknown penalty_mode 'bogus'" },
    };
    expect(runCase(base).status).toBe("passed");
    expect(runCase(withExpected(base, { raises: "ValueError", message: "Unknown penalty_mode bogus" })).status).toBe(
      "failed",
    );
    expect(runCase(withExpected(base, { raises: "ValueError", message_contains: "penalty_mode" })).status).toBe("passed");
    expect(runCase(withExpected(base, { raises: "ValueError", message_contains: "schedule" })).status).toBe("failed");
    // A throw that was not expected fails; so does a missing throw.
    expect(runCase(withExpected(base, { selected_types: [] })).status).toBe("failed");
    expect(runCase(withExpected(base, { raises: null })).status).toBe("failed");
    const ok = { ...base, input: { ...base.input, penalty_mode: "auto" } };
    expect(runCase(withExpected(ok, { raises: "ValueError" })).status).toBe("failed");
    expect(runCase(withExpected(ok, { raises: null, selected_types: [] })).status).toBe("passed");
  });

  it("applies the parse-failure prefix rule wherever the expected string is", () => {
    const decodeError: ConformanceCase = {
      area: "assess_tool_calls",
      name: "prefix",
      input: { text: "<tool_call>\n{bad}\n</tool_call>", registry: "SESSION_TOOLS" },
      expected: { reason: "tool-call JSON decode error: CPython's own text, not compared" },
    };
    expect(runCase(decodeError).status).toBe("passed");
    // The other prefix does not match a decode error.
    expect(
      runCase({ ...decodeError, expected: { reason: "tool-call missing/invalid name or arguments: 'name'" } }).status,
    ).toBe("failed");
    // A string without one of the two prefixes is compared exactly.
    expect(runCase({ ...decodeError, expected: { reason: "tool-call JSON decode error" } }).status).toBe("failed");
    // Inside nested values too (a violation's detail).
    expect(
      compareValues(
        [{ detail: "tool-call missing/invalid name or arguments: list indices must be integers or slices, not str" }],
        [{ detail: "tool-call missing/invalid name or arguments: anything" }],
      ),
    ).toBeNull();
  });

  it("compares numbers with tolerance, null with undefined, and key sets exactly", () => {
    expect(compareValues(0.1 + 0.2, 0.3)).toBeNull();
    expect(compareValues(1.0000001, 1)).toBeNull();
    expect(compareValues(1.00001, 1)).not.toBeNull();
    expect(compareValues(undefined, null)).toBeNull();
    expect(compareValues({ a: 1, b: undefined }, { a: 1, b: null })).toBeNull();
    expect(compareValues({ a: 1, b: 2 }, { a: 1 })).not.toBeNull();
    expect(compareValues({ a: 1 }, { a: 1, b: 2 })).not.toBeNull();
    expect(compareValues([1, 2], [2, 1])).not.toBeNull();
    expect(compareValues("1", 1)).not.toBeNull();
    expect(compareValues(0, false)).not.toBeNull();
  });

  it("requires exactly the expected metric keys of violation_rate_metrics", () => {
    const c: ConformanceCase = {
      area: "violation_rate_metrics",
      name: "keys",
      input: { violation_counts: { unexecuted_pattern: 1 }, num_assistant_messages: 2 },
      expected: {
        num_assistant_messages: 2,
        invalid_action_msg_rate: 0.5,
        malformed_thinking_msg_rate: 0,
        "violation_rate/unexecuted_pattern": 0.5,
      },
    };
    expect(runCase(c).status).toBe("passed");
    const { ["violation_rate/unexecuted_pattern"]: _dropped, ...fewer } = c.expected!;
    expect(runCase({ ...c, expected: fewer }).status).toBe("failed");
  });

  it("builds observation_message from the byte-level tokenizer, wrapping only when structured is on", () => {
    const obs = (structured_cfg: unknown, expected: Record<string, unknown>): ConformanceCase => ({
      area: "envelope",
      name: "obs",
      input: { fn: "observation_message", structured_cfg, env_observation: { role: "user", content: "out" } },
      expected,
    });
    const wrapped = "<|im_start|>user\n<tool_response>\nout\n</tool_response><|im_end|>\n<|im_start|>assistant\n";
    const on = { role: "user", content: "out", token_text: wrapped, n_tokens: 26 };
    expect(runCase(obs({ enabled: true }, { appended_message: on, content_contains_tool_response_tag: false })).status).toBe(
      "passed",
    );
    const off = { role: "user", content: "out", token_text: "out", n_tokens: 3 };
    expect(runCase(obs(null, { appended_message: off })).status).toBe("passed");
    // Decision 8: a disabled block is off.
    expect(runCase(obs({ enabled: false }, { appended_message: off })).status).toBe("passed");
    expect(runCase(obs({ enabled: true }, { appended_message: off })).status).toBe("failed");
  });

  it("rejects a file that is not a JSON array", () => {
    expect(() => parseCaseFile("{")).toThrow(/not valid JSON/);
    expect(() => parseCaseFile("{}")).toThrow(/JSON array/);
    expect(parseCaseFile("[]")).toEqual([]);
  });

  it("rejects a case nested deeper than the lab's JSON depth limit, naming its path", () => {
    const deep = `[{"id": "x", "input": ${'{"a":'.repeat(5000)}1${"}".repeat(5000)}}]`;
    expect(() => parseCaseFile(deep)).toThrow("[0].input.a.a.a.a.a.a.a.a…: nested deeper than 100 levels");
  });
});

describe("npm run conformance (src/cli/conformance.ts)", () => {
  const cli = fileURLToPath(new URL("../cli/conformance.ts", import.meta.url));
  const run = (file: string) =>
    spawnSync(process.execPath, ["--import", "tsx", cli], {
      env: { ...process.env, CONFORMANCE_CASES: file },
      encoding: "utf8",
    });
  const dir = mkdtempSync(join(tmpdir(), "conformance-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("prints failures, the reference-only count and ends with the summary line; exit 1 on a failure", () => {
    const file = join(dir, "cases.json");
    writeFileSync(
      file,
      JSON.stringify([
        { area: "classify_schema_failure", name: "ok", input: { reason: "unknown tool 'x'" }, expected: { violation_type: "schema_unknown_tool" } },
        { area: "classify_schema_failure", name: "bad", input: { reason: "unknown tool 'x'" }, expected: { violation_type: "schema_args" } },
        { area: "rollout_scenario", name: "prose", input: {}, expected: {}, reference_only: "prose harness" },
      ]),
    );
    const r = run(file);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines.at(-1)).toBe("1 passed, 1 failed");
    expect(lines).toContain("1 reference-only");
    expect(r.stdout).toContain("classify_schema_failure/bad");
    expect(r.status).toBe(1);
  });

  it("exits 0 when every case passes", () => {
    const file = join(dir, "ok.json");
    writeFileSync(file, JSON.stringify([{ area: "envelope", name: "c", input: { fn: "wrap", content: "" }, expected: { wrapped: "<|im_start|>user\n<tool_response>\n\n</tool_response><|im_end|>\n<|im_start|>assistant\n" } }]));
    const r = run(file);
    expect(r.stdout.trimEnd().split("\n").at(-1)).toBe("1 passed, 0 failed");
    expect(r.status).toBe(0);
  });

  it("exits 1 with a message naming the file when it cannot be read or parsed", () => {
    const bad = join(dir, "bad.json");
    writeFileSync(bad, "[{");
    const r = run(bad);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(bad);
    expect(r.stderr).toContain("not valid JSON");
    const missing = run(join(dir, "missing.json"));
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain("missing.json");
  });
});
