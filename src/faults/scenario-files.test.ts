/**
 * Bad scenario and suite files, as a person writes them: a JSON syntax error names the line and column (whatever
 * the engine's own message says), a schema error names the field path in the format's own words, and a file saved
 * with a byte-order mark or CRLF line ends is read like any other.
 */

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseSuiteText, SuiteError } from "../regress/suite.js";
import { describeJsonError, locateJsonError } from "../scenario/json-text.js";
import { parseScenarioText, ScenarioError } from "../scenario/schema.js";

const example = readFileSync(new URL("../scenario/examples/calculator-scripted.json", import.meta.url), "utf8");

function problems(run: () => unknown): string[] {
  try {
    run();
  } catch (e) {
    if (e instanceof ScenarioError || e instanceof SuiteError) return e.problems;
    throw e;
  }
  throw new Error("expected an error");
}

/** The example with `from` replaced by `to` (once). */
function edited(from: string, to: string): string {
  expect(example).toContain(from);
  return example.replace(from, to);
}

/** The 1-based line and column of the first occurrence of `needle` in `text`. */
function where(text: string, needle: string): string {
  const at = text.indexOf(needle);
  const before = text.slice(0, at).split("\n");
  return `line ${before.length}, column ${before.at(-1)!.length + 1}`;
}

describe("scenario files with JSON syntax errors", () => {
  it("a missing comma, a doubled or trailing comma, a comment, single quotes: the line and column of the offending character", () => {
    // [what is replaced, by what, the text at the offending character, and how far into that text it is]
    const cases: [string, string, string, number][] = [
      ['"max_seq_len": 1024,', '"max_seq_len": 1024', '"max_rollout_turns"', 0],
      ['"max_rollout_turns": 6,', '"max_rollout_turns": 6,,', ",,", 1],
      ['"16"]]', '"16",]]', ",]]", 1],
      ['"envs": {', '"envs": { // the environments\n', "// the", 0],
      ['"mode": "sync"', "'mode': \"sync\"", "'mode'", 0],
    ];
    for (const [from, to, needle, delta] of cases) {
      const text = edited(from, to);
      const [problem] = problems(() => parseScenarioText(text, "calc.json"));
      const before = text.slice(0, text.indexOf(needle) + delta).split("\n");
      expect(problem).toMatch(new RegExp(`^calc\\.json: not valid JSON at line ${before.length}, column ${before.at(-1)!.length + 1}: \\S`));
    }
  });

  it("a file cut short says where it ends", () => {
    const text = example.slice(0, example.indexOf('"policy"') + 12);
    const [problem] = problems(() => parseScenarioText(text, "calc.json"));
    const lines = text.split("\n");
    expect(problem).toMatch(new RegExp(`^calc\\.json: not valid JSON at line ${lines.length}, column ${lines.at(-1)!.length + 1} \\(the text ends early\\): `));
  });

  it("an empty file and a file of spaces", () => {
    expect(problems(() => parseScenarioText("", "e.json"))).toEqual([expect.stringMatching(/^e\.json: not valid JSON at line 1, column 1 \(the text ends early\): /)]);
    expect(problems(() => parseScenarioText("\n\n  ", "e.json"))).toEqual([expect.stringMatching(/^e\.json: not valid JSON at line 3, column 3 \(the text ends early\): /)]);
  });

  it("CRLF line ends count lines the same", () => {
    const text = edited('"max_seq_len": 1024,', '"max_seq_len": 1024').replaceAll("\n", "\r\n");
    const [problem] = problems(() => parseScenarioText(text, "calc.json"));
    expect(problem).toContain(`at ${where(text, '"max_rollout_turns"')}`);
  });

  it("a byte-order mark is no error; a valid file with CRLF line ends parses", () => {
    expect(parseScenarioText(`\ufeff${example}`).mode).toBe("sync");
    expect(parseScenarioText(example.replaceAll("\n", "\r\n")).mode).toBe("sync");
  });

  it("the engine's own message is kept without its position or its copy of the text", () => {
    const e = (() => {
      try {
        JSON.parse('{"a": [1, 2,]}');
      } catch (err) {
        return err;
      }
    })();
    expect(describeJsonError('{"a": [1, 2,]}', e)).toMatch(/^not valid JSON at line 1, column 13: [^"]*$/);
    expect(locateJsonError('{"a": [1, 2,]}')).toEqual({ offset: 12, line: 1, column: 13 });
    expect(locateJsonError('{"a": [1, 2]}')).toBeNull();
  });
});

describe("scenario files with schema errors", () => {
  it("wrong types deep inside name the field path", () => {
    expect(problems(() => parseScenarioText(edited('"stop_strings": ["<call: calculator>"]', '"stop_strings": [1], "x": 1'), "c.json"))).toEqual([
      "samples[0].stop_strings[0]: expected a string",
      "samples[0].x: unknown key (expected one of: task_name, idx, message_log, messages, tools, extra_env_info, stop_strings, loss_multiplier)",
    ]);
    expect(problems(() => parseScenarioText(edited('"role": "user"', '"role": ["user"]')))).toEqual(["samples[0].message_log[0].role: expected a string"]);
    expect(problems(() => parseScenarioText(edited('"responses": [', '"responses": [7, ')))).toEqual(["policy.responses[0]: expected a list of strings"]);
  });

  it("a value of the wrong kind where an object belongs says what belongs there (no schema library's default words)", () => {
    expect(problems(() => parseScenarioText("[1, 2]"))).toEqual(["(scenario): expected a scenario object {mode, max_seq_len, …}"]);
    expect(problems(() => parseScenarioText(edited('{ "env": "calculator", "config": {} }', "null")))).toEqual(["envs.multi_step_calculator_game: expected {env, config}"]);
    expect(problems(() => parseScenarioText(edited('"samples": [', '"samples": [3, ')))).toEqual(["samples[0]: expected a datum spec {task_name, message_log, …}"]);
    expect(problems(() => parseScenarioText(edited('"mode": "sync",', '"mode": "sync", "structured": 1, "invalid_action": {"thinking_tags": "think"},')))).toEqual([
      "structured: expected an object (the structured tool-use block) or null",
      "invalid_action.thinking_tags: expected a list of strings",
    ]);
  });
});

describe("suite files", () => {
  it("a syntax error names the line and column; a schema error the field path; a byte-order mark is fine", () => {
    const text = '{\n  "scenarios": [\n    "a.json",\n  ]\n}\n';
    expect(problems(() => parseSuiteText(text, "suite.json"))).toEqual([expect.stringMatching(/^suite\.json: not valid JSON at line 4, column 3: /)]);
    expect(problems(() => parseSuiteText('{"scenarios": ["a.json", 3]}'))).toEqual(["scenarios[1]: expected a scenario file path"]);
    expect(problems(() => parseSuiteText('"a.json"'))).toEqual(["(suite): expected a suite object {scenarios, tolerances}"]);
    expect(parseSuiteText('\ufeff{"scenarios": ["a.json"]}').scenarios).toEqual(["a.json"]);
  });
});
