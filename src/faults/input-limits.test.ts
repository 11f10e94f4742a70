/**
 * Inputs built to break the parsers rather than to mean anything: values nested thousands of levels deep, `__proto__`
 * keys, bytes that are not UTF-8. Every parser of the lab's inputs (scenario text and objects, the share link's
 * scenario, suites, JSONL imports, saved runs for a replay, datasets an environment generates) refuses them with an
 * error that names the field path (or the line and byte) instead of overflowing the stack, dropping a key or
 * replacing bytes without a word. The limit is one shared constant (`MAX_JSON_DEPTH`, src/core/json-value.ts).
 */

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH, PROTO_KEY_MESSAGE } from "../core/index.js";
import { decodeScenario } from "../scenario/share-url.js";
import type { EnvironmentDefinition } from "../envs/index.js";
import { environmentLookup } from "../envs/index.js";
import { parseSuiteText, SuiteError } from "../regress/suite.js";
import { readJsonl } from "../scenario/jsonl-reader.js";
import { parseSavedRun, SavedRunError } from "../scenario/result.js";
import { runScenario } from "../scenario/run.js";
import { parseScenario, parseScenarioText, ScenarioError } from "../scenario/schema.js";

const example = readFileSync(new URL("../scenario/examples/calculator-scripted.json", import.meta.url), "utf8");
const DEEP = 5_000;
const DEEPER_MESSAGE = `nested deeper than ${MAX_JSON_DEPTH} levels`;

/** JSON text of `levels` objects `{"a": …}` inside one another (built as text: JSON.stringify itself overflows at ~5,000). */
const nestedText = (levels: number, leaf = "1") => `${'{"a":'.repeat(levels)}${leaf}${"}".repeat(levels)}`;

/** The example scenario with `extra_env_info` replaced by `text`. */
const withEnvInfo = (text: string) => {
  const from = '"extra_env_info": { "problem": "(3 + 5) * 2", "expected_final_answer": 16.0, "max_steps": 4, "current_step": 0 }';
  expect(example).toContain(from);
  return example.replace(from, `"extra_env_info": ${text}`);
};

function problems(run: () => unknown): string[] {
  try {
    run();
  } catch (e) {
    if (e instanceof ScenarioError || e instanceof SuiteError) return e.problems;
    throw e;
  }
  throw new Error("expected an error");
}

const line = (value: unknown) => JSON.stringify(value);
const sampleLine = (idx: number, metadataText = "null") =>
  `{"idx": ${idx}, "task_name": "t", "message_log": [{"role": "user", "content": "q"}], "lab/turns": [{"turn": 0, "metadata": ${metadataText}}]}`;

function streamOf(bytes: Uint8Array, chunk = 7): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at + chunk));
      at += chunk;
    },
  });
}

describe("deep nesting: every parser names the path where the limit was passed", () => {
  const deepPath = "samples[0].extra_env_info.a.a.a.a.a.a.a…";

  it("a scenario file: 5,000 levels in extra_env_info", () => {
    expect(problems(() => parseScenarioText(withEnvInfo(nestedText(DEEP)), "calc.json"))).toEqual([`${deepPath}: ${DEEPER_MESSAGE}`]);
  });

  it("the limit counts from the file's top: extra_env_info (level 4) may hold 97 levels, not 98", () => {
    expect(parseScenarioText(withEnvInfo(nestedText(MAX_JSON_DEPTH - 3))).samples).toHaveLength(1);
    expect(problems(() => parseScenarioText(withEnvInfo(nestedText(MAX_JSON_DEPTH - 2))))).toEqual([`${deepPath}: ${DEEPER_MESSAGE}`]);
  });

  it("a scenario object (the lab's form, the worker) and a share link's scenario", () => {
    const text = withEnvInfo(nestedText(DEEP));
    expect(problems(() => parseScenario(JSON.parse(text)))).toEqual([`${deepPath}: ${DEEPER_MESSAGE}`]);
    // The link's hash is base64url of the JSON text; what it decodes to goes through parseScenario.
    const link = Buffer.from(text).toString("base64url");
    expect(problems(() => parseScenario(decodeScenario(link)))).toEqual([`${deepPath}: ${DEEPER_MESSAGE}`]);
  });

  it("a whole file of brackets: 200,000 levels at the top", () => {
    const text = `${"[".repeat(200_000)}${"]".repeat(200_000)}`;
    expect(problems(() => parseScenarioText(text))).toEqual([`[0][0][0][0][0][0][0][0][0][0]…: ${DEEPER_MESSAGE}`]);
    expect(problems(() => parseSuiteText(text))).toEqual([`[0][0][0][0][0][0][0][0][0][0]…: ${DEEPER_MESSAGE}`]);
  });

  it("a suite file", () => {
    const suite = `{"scenarios": ["a.json"], "tolerances": {"x": ${nestedText(DEEP)}}}`;
    expect(problems(() => parseSuiteText(suite, "suite.json"))).toEqual([`tolerances.x.a.a.a.a.a.a.a.a…: ${DEEPER_MESSAGE}`]);
  });

  it("a JSONL import: the deep line is a problem with its line and path; the other lines are imported", async () => {
    const text = [sampleLine(0), sampleLine(1, nestedText(DEEP)), sampleLine(2)].join("\n");
    const read = await readJsonl(streamOf(new TextEncoder().encode(text), 4096));
    expect(read.samples.map((s) => s.idx)).toEqual([0, 2]);
    expect(read.problems).toEqual([{ line: 2, path: "lab/turns[0].metadata.a.a.a.a.a.a.a…", message: DEEPER_MESSAGE }]);
  });

  it("a saved run for a replay, as JSONL and as a result JSON", () => {
    const jsonl = [sampleLine(0), sampleLine(1, nestedText(DEEP))].join("\n");
    expect(() => parseSavedRun(jsonl)).toThrow(SavedRunError);
    expect(() => parseSavedRun(jsonl)).toThrow(`line 2: lab/turns[0].metadata.a.a.a.a.a.a.a…: ${DEEPER_MESSAGE}`);
    const result = `{"samples": [{"idx": 0, "message_log": [], "extra_env_info": ${nestedText(DEEP)}}],\n"metrics": {}}`;
    expect(() => parseSavedRun(result)).toThrow(`samples[0].extra_env_info.a.a.a.a.a.a.a…: ${DEEPER_MESSAGE}`);
  });

  it("a dataset an environment generates (a user module, a remote server)", async () => {
    const deepInfo = JSON.parse(nestedText(DEEP));
    const env: EnvironmentDefinition = {
      name: "deep_data",
      title: "",
      description: "",
      defaultTaskName: "deep",
      create: () => ({ step: () => ({ observations: [], metadata: [], next_stop_strings: null, rewards: [], terminateds: [], answers: null }) }),
      generateDataset: () => [{ task_name: "deep", message_log: [{ role: "user", content: "q" }], extra_env_info: deepInfo, stop_strings: null }],
    };
    const scenario = parseScenario({
      mode: "sync",
      max_seq_len: 64,
      max_rollout_turns: 1,
      envs: { deep: { env: "deep_data", config: {} } },
      dataset: { task_name: "deep", size: 1, seed: 0 },
      policy: { kind: "scripted", responses: [["a"]] },
    });
    await expect(runScenario(scenario, { environments: environmentLookup([env]) })).rejects.toThrow(
      `dataset (generated by 'deep_data')[0].extra_env_info.a.a.a.a.a.a.a…: ${DEEPER_MESSAGE}`,
    );
  });
});

describe("__proto__ keys are an error, not a key dropped without a word", () => {
  it("in extra_env_info", () => {
    const text = withEnvInfo('{"problem": "1 + 1", "__proto__": {"expected_final_answer": 2}}');
    expect(problems(() => parseScenarioText(text))).toEqual([`samples[0].extra_env_info.__proto__: ${PROTO_KEY_MESSAGE}`]);
  });

  it("as a task name, and in a JSONL line", async () => {
    const text = example.replace('"envs": {', '"envs": { "__proto__": { "env": "calculator" },');
    expect(problems(() => parseScenarioText(text))).toEqual([`envs.__proto__: ${PROTO_KEY_MESSAGE}`]);
    const read = await readJsonl(streamOf(new TextEncoder().encode(sampleLine(0, '{"__proto__": 1}'))));
    expect(read.problems).toEqual([{ line: 1, path: "lab/turns[0].metadata.__proto__", message: PROTO_KEY_MESSAGE }]);
  });
});

describe("bytes that are not UTF-8", () => {
  it("a scenario file's bytes: the file, the byte and the line", () => {
    const bytes = new TextEncoder().encode(example);
    const at = bytes.indexOf(0x53); // the S of "Solve", on line 9
    bytes[at] = 0xc3; // a lead byte without its continuation
    expect(problems(() => parseScenarioText(bytes, "calc.json"))).toEqual([
      `calc.json: not valid UTF-8 at byte ${at} (line 9): the file must be UTF-8 text`,
    ]);
    // Valid bytes (with a byte-order mark) parse as the text does.
    expect(parseScenarioText(new TextEncoder().encode(`\ufeff${example}`)).mode).toBe("sync");
  });

  it("a suite file's bytes", () => {
    const bytes = Uint8Array.from([...new TextEncoder().encode('{"scenarios": ["a'), 0xff, ...new TextEncoder().encode('.json"]}')]);
    expect(problems(() => parseSuiteText(bytes, "s.json"))).toEqual(["s.json: not valid UTF-8 at byte 17 (line 1): the file must be UTF-8 text"]);
  });

  it("a JSONL import: the line with them is a problem naming the byte; every other line is imported, whatever the chunks", async () => {
    const text = [sampleLine(0), sampleLine(1), sampleLine(2)].join("\n");
    const bytes = new TextEncoder().encode(text);
    const at = bytes.indexOf(0x71, text.indexOf("\n") + 1); // the q of line 2's content
    bytes[at] = 0xe9; // Latin-1 é
    for (const chunk of [1, 3, 7, 64, 1 << 20]) {
      const read = await readJsonl(streamOf(bytes, chunk));
      expect(read.samples.map((s) => s.idx)).toEqual([0, 2]);
      expect(read.problems).toEqual([{ line: 2, path: null, message: `not valid UTF-8 at byte ${at}` }]);
    }
  });

  it("U+FFFD written as UTF-8 is text like any other", async () => {
    const read = await readJsonl(streamOf(new TextEncoder().encode(sampleLine(0).replace('"q"', '"\ufffd"'))));
    expect(read.problems).toEqual([]);
    expect(read.samples[0]!.message_log[0]!.content).toBe("\ufffd");
  });
});

describe("a replay's saved run: idx must be unique and whole", () => {
  it("two lines of one idx name both lines", () => {
    expect(() => parseSavedRun([sampleLine(0), sampleLine(1), sampleLine(0)].join("\n"))).toThrow(
      "line 3: idx: 0 is also the idx of line 1 (a replay matches samples by idx)",
    );
    const result = line({ samples: [{ idx: 4, message_log: [] }, { idx: 4, message_log: [] }], metrics: {} }).replace("],", "],\n");
    expect(() => parseSavedRun(result)).toThrow("samples[1].idx: 4 is also the idx of samples[0] (a replay matches samples by idx)");
  });

  it("a fractional idx", () => {
    expect(() => parseSavedRun(sampleLine(0).replace('"idx": 0', '"idx": 1.5'))).toThrow("line 1: idx: expected an integer");
  });
});
