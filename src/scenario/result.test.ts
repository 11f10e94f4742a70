/**
 * `parseSavedRun`, the replay policy's reader of a saved run: every line is checked; a damaged run fails as a whole
 * (a replay of part of it would silently differ), with its first few problems named by line, field path and what was
 * expected, and how many there are.
 */

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { runScenario } from "./run.js";
import { jsonTextChunks, parseSavedRun, SAVED_RUN_MAX_PROBLEMS, SavedRunError } from "./result.js";
import { parseScenario } from "./schema.js";

const sample = (idx: number, answer = `answer ${idx}`, tokens: number[] | null = [1, 2]) =>
  JSON.stringify({
    idx,
    task_name: "t",
    message_log: [
      { role: "user", content: `question ${idx}` },
      { role: "assistant", content: answer, ...(tokens ? { token_ids: tokens } : {}) },
    ],
    total_reward: 0,
    termination: "max_turns",
  });
const footer = JSON.stringify({ "lab/format": "rollout-lab-run/1", mode: "sync", metrics: {}, scenario: null });

function failure(text: string): SavedRunError {
  try {
    parseSavedRun(text);
  } catch (e) {
    expect(e).toBeInstanceOf(SavedRunError);
    return e as SavedRunError;
  }
  throw new Error("parseSavedRun accepted a damaged run");
}

const lines = (e: SavedRunError) => e.message.split("\n");

describe("parseSavedRun", () => {
  it("reads a clean JSONL export (blank lines, CRLF, a BOM, the metrics line skipped) and a result JSON, as before", () => {
    const jsonl = `\ufeff${sample(0)}\r\n\r\n${sample(1)}\r\n${footer}\r\n`;
    expect(parseSavedRun(jsonl).map((s) => s.idx)).toEqual([0, 1]);
    const result = JSON.stringify({ samples: [JSON.parse(sample(3)), JSON.parse(sample(4))], metrics: {} }, null, 2);
    expect(parseSavedRun(result).map((s) => s.idx)).toEqual([3, 4]);
    expect(parseSavedRun(JSON.stringify({ samples: [JSON.parse(sample(5))] })).map((s) => s.idx)).toEqual([5]);
    // One sample on one line (a JSONL export without its metrics line).
    expect(parseSavedRun(sample(7)).map((s) => s.idx)).toEqual([7]);
    // A result JSON written a sample per line (each line a whole object, as JSONL's are) is still one result.
    const lined = `{"samples": [\n${sample(8)},\n${sample(9)}\n],\n"metrics": {}}\n`;
    expect(parseSavedRun(lined).map((s) => s.idx)).toEqual([8, 9]);
    expect(parseSavedRun(`{"samples": [\n${sample(10)}\n]}`).map((s) => s.idx)).toEqual([10]);
  });

  it("names each bad line with its real line number, the field path and what was expected; counts them all", () => {
    const text = [
      sample(0),
      "",
      JSON.stringify({ idx: 1, task_name: "t", message_log: [{ role: "user", content: 5 }] }),
      "this is not JSON",
      JSON.stringify({ idx: "2", message_log: [{ role: "assistant", content: "x", token_ids: [1.5] }] }),
      sample(3),
      footer,
      '{"idx": 5, "task_name": "t", "mess',
    ].join("\n");
    const e = failure(text);
    expect(e.problemCount).toBe(5);
    expect(e.badLines).toBe(4);
    expect(lines(e)).toEqual([
      "the saved run has 5 problems (4 of 8 lines); a replay needs all of it:",
      "line 3: message_log[0].content: expected a string",
      "line 4: not valid JSON at column 2 (Unexpected token 'h')",
      "line 5: idx: expected a number",
      "line 5: message_log[0].token_ids[0]: expected a token id (an integer from 0 to 2147483647)",
      "line 8: truncated: the file ends inside this line (no newline at the end, and its JSON stops at column 35)",
    ]);
    expect(e.problems[0]).toEqual({ line: 3, path: "message_log[0].content", message: "expected a string" });
  });

  it("a line cut short in the middle of the file, a missing field, a line that is not an object", () => {
    const e = failure([sample(0), '{"idx": 1, "message_log": [', JSON.stringify({ idx: 2, task_name: "t" }), "[1, 2]", ""].join("\n"));
    expect(lines(e).slice(1)).toEqual([
      "line 2: not valid JSON: the line ends before its JSON does, at column 28 (cut short?)",
      "line 3: message_log: missing (expected a list of messages)",
      "line 4: expected an object (a sample or the metrics line), got a list",
    ]);
  });

  it(`lists the first ${SAVED_RUN_MAX_PROBLEMS} problems and says how many more there are`, () => {
    const text = Array.from({ length: 40 }, (_, i) => (i % 4 === 3 ? `{"idx": ${i}, "message_log": "oops"}` : sample(i))).join("\n");
    const e = failure(text);
    expect(e.problemCount).toBe(10);
    expect(e.problems.map((p) => p.line)).toEqual([4, 8, 12, 16, 20]);
    expect(lines(e).at(-1)).toBe("… and 5 more problems");
    expect(lines(e)[1]).toBe("line 4: message_log: expected a list of messages");
  });

  it("a result JSON: problems by field path under samples[i]; a syntax error with its line and column", () => {
    const bad = JSON.stringify({ samples: [JSON.parse(sample(0)), { idx: 1, message_log: [{ role: "assistant" }] }, 7] }, null, 2);
    expect(lines(failure(bad)).slice(1)).toEqual([
      "samples[1].message_log[0].content: missing (expected a string)",
      "samples[2]: expected a sample object {idx, message_log}",
    ]);
    const truncated = JSON.stringify({ samples: [JSON.parse(sample(0))] }, null, 2).slice(0, 60);
    expect(lines(failure(truncated))[1]).toMatch(/^not valid JSON at line \d+, column \d+ \(the text ends early\)/);
    expect(lines(failure('{"metrics": {}}'))[1]).toBe("samples: missing (expected a list of samples) (a result JSON; or give the run's JSONL export)");
  });

  it("a JSONL whose second line is garbage is still read as JSONL (not as a broken result JSON)", () => {
    expect(lines(failure(`${sample(0)}\ngarbage`))[1]).toMatch(/^line 2: not valid JSON at column 1/);
  });
});

describe("a replay of a damaged saved run", () => {
  const scenario = parseScenario({
    mode: "sync",
    max_seq_len: 512,
    max_rollout_turns: 1,
    max_new_tokens: 16,
    envs: { t: { env: "sliding_puzzle", config: {} } },
    samples: [0, 1].map((idx) => ({
      idx,
      task_name: "t",
      message_log: [{ role: "user", content: "Solve it." }],
      extra_env_info: { game_state: { size: 2, grid: [[1, 2], [0, 3]], solution: [[1, 2], [3, 0]], empty_pos: [1, 0], commands: {} }, num_moves: 0, max_moves: 5 },
    })),
    policy: { kind: "replay", file: "run.jsonl" },
  });

  it("replays a clean run", async () => {
    const result = await runScenario(scenario, { loadFile: async () => [sample(0, "first", null), sample(1, "second", null), footer].join("\n") });
    expect(result.samples.map((s) => s.message_log[1]!.content)).toEqual(["first", "second"]);
  });

  it("fails, before running anything, with the line, the field and what was expected", async () => {
    const damaged = [sample(0, "first"), JSON.stringify({ idx: 1, message_log: [{ role: "assistant", content: null }] }), footer, '{"idx": 2'].join("\n");
    const events: unknown[] = [];
    const run = runScenario(scenario, { loadFile: async () => damaged, onEvent: (e) => events.push(e) });
    await expect(run).rejects.toThrow(
      [
        "policy.file: cannot use 'run.jsonl': the saved run has 2 problems (2 of 4 lines); a replay needs all of it:",
        "line 2: message_log[0].content: expected a string",
        "line 4: truncated: the file ends inside this line (no newline at the end, and its JSON stops at column 10)",
      ].join("\n"),
    );
    expect(events).toEqual([]);
  });
});

describe("jsonTextChunks", () => {
  it("joined, the pieces are JSON.stringify(value, null, 2), for any JSON value (and undefined members)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        for (const value of [a, { samples: [a, b, undefined], metrics: b, gone: undefined }, [a, [b, []], {}], { samples: [], metrics: {} }]) {
          expect([...jsonTextChunks(value)].join("")).toBe(JSON.stringify(value, null, 2));
        }
      }),
      { numRuns: 300 },
    );
    expect([...jsonTextChunks(undefined)]).toEqual([]);
    expect([...jsonTextChunks({ d: new Date(0), s: "a\nb" }, 4)].join("")).toBe(JSON.stringify({ d: new Date(0), s: "a\nb" }, null, 4));
  });

  it("no piece is bigger than one sample: a result too big for one string can be written", () => {
    const sample = (i: number) => ({ idx: i, message_log: [{ role: "assistant", content: "x".repeat(10_000), token_ids: new Array(1000).fill(i) }] });
    const result = { samples: Array.from({ length: 300 }, (_, i) => sample(i)), metrics: { total_turns: 300 } };
    const pieces = [...jsonTextChunks(result)];
    // The biggest piece is one sample's text, indented to its place in the result.
    const biggestSample = Math.max(...result.samples.map((s) => JSON.stringify(s, null, 2).replace(/\n/g, "\n    ").length));
    expect(Math.max(...pieces.map((p) => p.length))).toBe(biggestSample);
    expect(pieces.join("")).toBe(JSON.stringify(result, null, 2));
  });
});
