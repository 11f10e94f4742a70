/**
 * Fuzzing the parsers that take text or JSON from outside (a model's output, a user's file) with fast-check: the
 * Hermes tool-call extractor, the thinking detector, the tool-argument schema validator, the scenario and suite
 * parsers (with the JSON syntax locator behind their line/column messages) and the JSONL importer. For every input:
 * no exception but the documented one, and an answer (a hang fails the test at vitest's timeout).
 *
 * The property tests beside the code (`hermes.property.test.ts`, `thinking.property.test.ts`,
 * `schema.test.ts`) check what the results mean; these check survival, with adversarial repetitions of protocol
 * fragments (`"<tool_call>{" × 5000` …) besides random input. How long the adversarial inputs take, and whether that
 * grows linearly with their length, is `npm run bench:hostile-input`'s to measure (ratios against ordinary input of
 * the same length, in the same run): a test that asserted milliseconds would fail on a loaded machine.
 */

import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildRun, ImportError, importJsonl, readJsonl } from "../app/run/jsonl.js";
import { PROTOCOL_FRAGMENTS, repeatedFragments } from "../bench-support/hostile-text.js";
import { sampleLineSchema } from "../scenario/jsonl-reader.js";
import { detectMalformedThinking } from "../core/assessment/invalid-action.js";
import { parseHermesToolCalls } from "../core/protocol/hermes.js";
import { SchemaError, validateAgainstSchema, validateArguments } from "../core/protocol/schema.js";
import { parseSuite, parseSuiteText, SuiteError } from "../regress/suite.js";
import { jsonErrorOffset, positionAt } from "../scenario/json-text.js";
import { parseScenario, parseScenarioText, ScenarioError } from "../scenario/schema.js";

const RUNS = 200;

/** Only `allowed` may be thrown (nothing, when it is null); returns the value or the allowed error. */
function onlyThrows<T>(run: () => T, allowed: (new (...args: never[]) => Error) | null): T | Error {
  try {
    return run();
  } catch (e) {
    if (allowed && e instanceof allowed) return e;
    throw new Error(`unexpected ${(e as Error)?.name ?? typeof e}: ${(e as Error)?.message ?? String(e)}`, { cause: e });
  }
}

/** Fragments, each repeated up to `maxRepeat` times, up to a few KB in all. */
const fragmentSoup = (maxRepeat = 200) =>
  fc
    .array(fc.tuple(fc.oneof(fc.constantFrom(...PROTOCOL_FRAGMENTS), fc.string({ unit: "binary", maxLength: 6 })), fc.integer({ min: 1, max: maxRepeat })), {
      maxLength: 12,
    })
    .map((parts) => parts.map(([f, n]) => f.repeat(n)).join(""));

describe("the Hermes extractor", () => {
  it("never throws on fragment soup and arbitrary text", () => {
    fc.assert(
      fc.property(fc.oneof(fragmentSoup(), fc.string({ unit: "binary", maxLength: 2000 })), (text) => {
        onlyThrows(() => parseHermesToolCalls(text), null);
      }),
      { numRuns: RUNS },
    );
  });

  it("never throws on each protocol fragment repeated 5000 times", () => {
    for (const text of repeatedFragments(5000)) {
      onlyThrows(() => parseHermesToolCalls(text), null);
    }
  });

  // Valid JSON nested ~5000 deep overflows the Python-style dump (as Python's own json does, with a RecursionError
  // the reference does not catch): the extractor reports it as that call's decode error instead of throwing.
  it("never throws on deeply nested (valid) arguments: a decode error for that call", () => {
    const depth = 20_000;
    const text = `<tool_call>{"name": "run_shell", "arguments": {"command": ${"[".repeat(depth)}${"]".repeat(depth)}}}</tool_call>`;
    onlyThrows(() => parseHermesToolCalls(text), null);
    expect(parseHermesToolCalls(text).error).toBe("tool-call JSON decode error: maximum recursion depth exceeded while decoding a JSON object");
  });
});

describe("the thinking detector", () => {
  const tagPair = fc.oneof(
    fc.constant(["<think>", "</think>"]),
    fc.tuple(fc.string({ maxLength: 4 }), fc.string({ maxLength: 4 })), // empty tags too
    fc.constantFrom(["a", "aa"], ["aa", "a"], ["<", "<<"], ["</think>", "<think>"], [".*", "(.+)+"]),
  );

  it("never throws for a pair of tags and a known style", () => {
    fc.assert(
      fc.property(fc.oneof(fragmentSoup(500), fc.string({ unit: "binary", maxLength: 2000 })), tagPair, fc.constantFrom("paired", "closing_only"), (text, tags, style) => {
        onlyThrows(() => detectMalformedThinking(text, tags, style), null);
      }),
      { numRuns: RUNS },
    );
  });

  it("throws only its documented Error, for tags that are not a pair or an unknown style", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), fc.array(fc.string({ maxLength: 3 }), { maxLength: 3 }), fc.oneof(fc.constantFrom("paired", "closing_only"), fc.string({ maxLength: 8 })), (text, tags, style) => {
        const out = onlyThrows(() => detectMalformedThinking(text, tags, style), Error);
        const bad = tags.length !== 2 || !["paired", "closing_only"].includes(style);
        expect(out instanceof Error).toBe(bad);
        if (out instanceof Error) expect(out.message).toMatch(/^thinking_tags must be an \(open, close\) pair|^style must be 'paired' or 'closing_only'/);
      }),
      { numRuns: RUNS },
    );
  });

  it("survives each fragment repeated 5000 times, with the default and with overlapping custom tags", () => {
    for (const text of repeatedFragments(5000)) {
      for (const [tags, style] of [
        [["<think>", "</think>"], "paired"],
        [["<think>", "</think>"], "closing_only"],
        [["<", "<<"], "paired"],
        [["", ""], "paired"],
      ] as const) {
        detectMalformedThinking(text, tags, style);
      }
    }
  });
});

describe("the tool-argument schema validator", () => {
  const TYPES = ["object", "array", "string", "boolean", "null", "integer", "number"];
  const { schema } = fc.letrec((tie) => ({
    schema: fc.record(
      {
        type: fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...TYPES) }, fc.constantFrom("float", "any", ""), fc.jsonValue({ maxDepth: 1 })),
        enum: fc.oneof({ weight: 4, arbitrary: fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 }) }, fc.jsonValue({ maxDepth: 1 })),
        properties: fc.oneof(
          { weight: 6, arbitrary: fc.dictionary(fc.string({ maxLength: 4 }), tie("schema"), { maxKeys: 4 }) },
          fc.jsonValue({ maxDepth: 1 }),
        ),
        required: fc.oneof({ weight: 4, arbitrary: fc.array(fc.string({ maxLength: 4 }), { maxLength: 3 }) }, fc.jsonValue({ maxDepth: 1 })),
        items: fc.oneof({ weight: 4, arbitrary: tie("schema") }, fc.constant(null), fc.jsonValue({ maxDepth: 1 })),
        description: fc.string({ maxLength: 8 }),
      },
      { requiredKeys: [] },
    ),
  }));

  /** A schema every part of `value` meets (all its keys required). */
  function schemaOf(value: unknown): Record<string, unknown> {
    if (value === null) return { type: "null" };
    if (Array.isArray(value)) return { type: "array", items: {} };
    if (typeof value === "object") {
      const obj = value as Record<string, unknown>;
      return { type: "object", properties: Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, schemaOf(v)])), required: Object.keys(obj) };
    }
    if (typeof value === "number") return { type: Number.isInteger(value) ? "integer" : "number" };
    return { type: typeof value };
  }

  it("throws nothing but SchemaError on generated schemas and values, errors are `$`-paths", () => {
    fc.assert(
      fc.property(fc.oneof(schema, fc.jsonValue({ maxDepth: 3 })), fc.jsonValue({ maxDepth: 4 }), (s, value) => {
        for (const out of [onlyThrows(() => validateArguments(value, s), SchemaError), onlyThrows(() => validateAgainstSchema(value, s), SchemaError)]) {
          if (!(out instanceof Error)) for (const message of out) expect(message).toMatch(/^\$/);
        }
      }),
      { numRuns: RUNS * 2 },
    );
  });

  it("a value meets the schema made from it, and an enum of itself", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 }), (args) => {
        expect(validateArguments(args, schemaOf(args))).toEqual([]);
        expect(validateArguments(args, { enum: [1, args] })).toEqual([]);
      }),
      { numRuns: RUNS },
    );
  });

  it("reports every error of big arguments (2,000-element arrays, 2,000-key objects, 4,000 errors) against nested schemas", () => {
    const wide = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`k${i}`, i]));
    const big = { list: Array.from({ length: 2000 }, (_, i) => ({ x: i, y: [i, "s"] })), wide };
    const s = {
      type: "object",
      required: ["list", "wide", "missing"],
      properties: {
        list: { type: "array", items: { type: "object", properties: { x: { type: "string" }, y: { type: "array", items: { enum: [1, "s"] } } } } },
        wide: { type: "object", properties: Object.fromEntries(Object.keys(wide).map((k) => [k, { type: "integer" }])) },
      },
    };
    expect(validateArguments(big, s)).toHaveLength(1 + 2 * 2000 - 1);
  });
});

const EXAMPLES_DIR = fileURLToPath(new URL("../scenario/examples/", import.meta.url));
const EXAMPLES = readdirSync(EXAMPLES_DIR)
  .filter((f) => f.endsWith(".json"))
  .map((f) => JSON.parse(readFileSync(join(EXAMPLES_DIR, f), "utf8")) as unknown);

type Path = (string | number)[];

/** Every path to a node of a JSON value (the root excluded). */
function pathsOf(value: unknown, prefix: Path = [], out: Path[] = []): Path[] {
  const children: [string | number, unknown][] = Array.isArray(value) ? value.map((v, i) => [i, v]) : value && typeof value === "object" ? Object.entries(value) : [];
  for (const [key, child] of children) {
    out.push([...prefix, key]);
    pathsOf(child, [...prefix, key], out);
  }
  return out;
}

type Mutation = { op: "replace"; value: unknown } | { op: "delete" } | { op: "unknown-key" };

/** `value` with the node at `path` replaced or deleted, or an unknown key added to it (when it is an object). */
function mutate(value: unknown, path: Path, m: Mutation): unknown {
  const copy = structuredClone(value) as Record<string | number, unknown>;
  const parent = path.slice(0, -1).reduce<Record<string | number, unknown>>((node, key) => node[key] as Record<string | number, unknown>, copy);
  const key = path.at(-1)!;
  if (m.op === "replace") parent[key] = m.value;
  else if (m.op === "delete") {
    if (Array.isArray(parent)) parent.splice(key as number, 1);
    else delete parent[key];
  }
  else {
    const node = parent[key];
    if (node && typeof node === "object" && !Array.isArray(node)) (node as Record<string, unknown>).zz_unknown = 1;
  }
  return copy;
}

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant("replace" as const), value: fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constantFrom(-1, 0, 1.5, 1e308, "", [], {})) }),
  fc.constant({ op: "delete" as const }),
  fc.constant({ op: "unknown-key" as const }),
);

/** zod's own messages (`Invalid input: expected object, received number`): each field should say what it expects. */
const ZOD_DEFAULT = /: (?:Invalid (?:input|option|key|element|union|string|number|type)|Too (?:small|big)|Expected |Unrecognized key)/;

/** `a.b[0].c` as the parsers print paths. */
const pathText = (path: Path) => path.reduce<string>((s, p) => (typeof p === "number" ? `${s}[${p}]` : `${s}${s ? "." : ""}${p}`), "");

describe("the scenario parser", () => {
  it("on mutated example scenarios: only ScenarioError, each problem a field path near the mutation", () => {
    fc.assert(
      fc.property(fc.nat({ max: EXAMPLES.length - 1 }), fc.nat(), mutation, (which, at, m) => {
        const source = EXAMPLES[which]!;
        const paths = pathsOf(source);
        const path = paths[at % paths.length]!;
        const value = mutate(source, path, m);
        const out = onlyThrows(() => parseScenario(value), ScenarioError);
        if (!(out instanceof ScenarioError)) return;
        expect(out.problems.length).toBeGreaterThan(0);
        for (const problem of out.problems.flatMap((p) => p.split("\n"))) {
          // Near the mutation: under the same top-level key; or a check across keys (task names, samples/dataset).
          expect([String(path[0]), "samples", "dataset"].some((top) => problem.startsWith(`${top}.`) || problem.startsWith(`${top}[`) || problem.startsWith(`${top}:`)), problem).toBe(true);
          // In the scenario's own words, never a schema library's default message.
          expect(problem).not.toMatch(ZOD_DEFAULT);
        }
      }),
      { numRuns: RUNS * 2 },
    );
  });

  it("names the exact path of a wrong type inside samples and policy", () => {
    const calc = EXAMPLES.find((e) => (e as { samples?: unknown }).samples) as Record<string, unknown>;
    const problems = (v: unknown) => (onlyThrows(() => parseScenario(v), ScenarioError) as ScenarioError).problems;
    expect(problems(mutate(calc, ["samples", 0, "message_log", 0, "content"], { op: "replace", value: 7 }))).toEqual([
      "samples[0].message_log[0].content: expected a string",
    ]);
    expect(problems(mutate(calc, ["samples", 0, "stop_strings", 0], { op: "replace", value: null }))).toEqual(["samples[0].stop_strings[0]: expected a string"]);
    expect(problems(mutate(calc, ["policy", "responses", 0, 1], { op: "replace", value: {} }))).toEqual(["policy.responses[0][1]: expected a string"]);
  });

  it("on text cut anywhere: a ScenarioError naming the line and column where the text ends", () => {
    fc.assert(
      fc.property(fc.nat({ max: EXAMPLES.length - 1 }), fc.nat(), fc.boolean(), (which, at, crlf) => {
        let text = JSON.stringify(EXAMPLES[which], null, 2);
        if (crlf) text = text.replaceAll("\n", "\r\n");
        const cut = text.slice(0, at % text.length);
        const out = onlyThrows(() => parseScenarioText(cut, "s.json"), ScenarioError);
        expect(out).toBeInstanceOf(ScenarioError);
        const { line, column } = positionAt(cut, cut.length);
        expect((out as ScenarioError).message).toMatch(new RegExp(`^s\\.json: not valid JSON at line ${line}, column ${column} \\(the text ends early\\): `));
      }),
      { numRuns: RUNS },
    );
  });

  it("on text with a character put in: either valid, or an error at or after that place", () => {
    fc.assert(
      fc.property(fc.nat({ max: EXAMPLES.length - 1 }), fc.nat(), fc.constantFrom(",", "}", "]", "{", '"', ":", "x", "\\", "\u0001", " ", "0"), (which, at, ch) => {
        const text = JSON.stringify(EXAMPLES[which], null, 2);
        const k = at % (text.length + 1);
        const changed = text.slice(0, k) + ch + text.slice(k);
        const out = onlyThrows(() => parseScenarioText(changed), ScenarioError);
        if (!(out instanceof ScenarioError) || !out.message.includes("not valid JSON")) return;
        const m = /at line (\d+), column (\d+)/.exec(out.message);
        expect(m, out.message).not.toBeNull();
        const before = positionAt(changed, k);
        const [line, column] = [Number(m![1]), Number(m![2])];
        expect(line > before.line || (line === before.line && column >= before.column), `${out.message} (inserted at ${before.line}:${before.column})`).toBe(true);
      }),
      { numRuns: RUNS },
    );
  });

  it("the JSON error locator agrees with JSON.parse on what is valid", () => {
    const jsonish = fc
      .array(fc.oneof(fc.constantFrom("{", "}", "[", "]", ",", ":", '"', '"a"', "1", "-", "0", ".", "e", "1e5", "true", "fals", "null", " ", "\n", "\\", "\\u12", "\\n", "é"), fc.string({ maxLength: 3 })), { maxLength: 30 })
      .map((p) => p.join(""));
    const nearlyJson = fc.tuple(fc.jsonValue({ maxDepth: 4 }), fc.nat(), fc.nat({ max: 3 }), fc.string({ maxLength: 2 })).map(([v, at, del, ins]) => {
      const t = JSON.stringify(v);
      const k = at % (t.length + 1);
      return t.slice(0, k) + ins + t.slice(k + del);
    });
    fc.assert(
      fc.property(fc.oneof(jsonish, nearlyJson, fc.string({ unit: "binary", maxLength: 200 }), fc.jsonValue().map((v) => JSON.stringify(v, null, 1))), (text) => {
        let valid = true;
        try {
          JSON.parse(text);
        } catch {
          valid = false;
        }
        const offset = jsonErrorOffset(text);
        expect(offset === null, text).toBe(valid);
        if (offset !== null) expect(offset).toBeLessThanOrEqual(text.length);
      }),
      { numRuns: RUNS * 3 },
    );
    // 200 KB of nesting (JSON.parse alone takes tens of ms on it here): no stack overflow, no blowup.
    for (const deep of ["[".repeat(200_000), `${"[".repeat(100_000)}${"]".repeat(100_000)}`, '{"a":'.repeat(50_000), '"'.repeat(100_001)]) {
      onlyThrows(() => parseScenarioText(deep), ScenarioError);
    }
  });
});

describe("the suite parser", () => {
  it("only SuiteError, on arbitrary JSON, mutated suites and arbitrary text", () => {
    const suite = { scenarios: ["a.json", "dir/b.json"], tolerances: { "env/reward": 1e-6 } };
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.tuple(fc.nat(), mutation).map(([at, m]) => mutate(suite, pathsOf(suite)[at % pathsOf(suite).length]!, m))), fc.string({ unit: "binary", maxLength: 200 }), (value, text) => {
        for (const out of [
          onlyThrows(() => parseSuite(value), SuiteError),
          onlyThrows(() => parseSuiteText(text, "s.json"), SuiteError),
          onlyThrows(() => parseSuiteText(JSON.stringify(value), "s.json"), SuiteError),
        ]) {
          if (out instanceof SuiteError) for (const problem of out.problems) expect(problem).not.toMatch(ZOD_DEFAULT);
        }
      }),
      { numRuns: RUNS },
    );
  });
});

/** `bytes` as a stream cut at the given sizes (cycled). */
function chunked(bytes: Uint8Array, sizes: number[]): ReadableStream<Uint8Array> {
  let at = 0;
  let k = 0;
  return new ReadableStream<Uint8Array>(
    {
      pull(c) {
        if (at >= bytes.length) return c.close();
        const size = Math.max(1, sizes.length ? sizes[k++ % sizes.length]! : bytes.length);
        c.enqueue(bytes.slice(at, at + size));
        at += size;
      },
    },
    { highWaterMark: 0 },
  );
}

const stable = (r: Awaited<ReturnType<typeof readJsonl>>) => ({ ...r, maxBufferedChars: 0 });

describe("the JSONL importer", () => {
  const good = {
    idx: 0,
    task_name: "t",
    message_log: [
      { role: "user", content: "hi", token_ids: [104, 105] },
      { role: "assistant", content: "<tool_call>{}</tool_call>", token_ids: [257], generation_logprobs: [-0.5], invalid_action_violations: [{ type: "x", severity: 1, locus: "reward", detail: null }] },
      { role: "environment", content: "ok", token_ids: [] },
    ],
    total_reward: 1,
    termination: "terminated",
    "lab/prompt_messages": 1,
    "lab/initial_env_info": { a: 1 },
    "lab/initial_stop_strings": null,
    "lab/turns": [{ turn: 0, reward: 1, reward_components: null, terminated: true, truncated_context: false, response_truncated: false, input_tokens: 2, gen_start: 0, gen_end: 1, env_end: 2, metadata: null }],
  };
  const footer = { "lab/format": "rollout-lab-run/1", mode: "sync", max_rollout_turns: 2, max_seq_len: 64, partial: false, metrics: {}, scenario: null };

  const line = fc.oneof(
    { weight: 3, arbitrary: fc.tuple(fc.nat(), mutation).map(([at, m]) => JSON.stringify(mutate(good, pathsOf(good)[at % pathsOf(good).length]!, m))) },
    { weight: 2, arbitrary: fc.constant(JSON.stringify(good)) },
    fc.constant(JSON.stringify(footer)),
    fc.tuple(fc.nat(), mutation).map(([at, m]) => JSON.stringify(mutate(footer, pathsOf(footer)[at % pathsOf(footer).length]!, m))),
    fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
    fragmentSoup(20).map((s) => s.replaceAll("\n", " ")),
    fc.tuple(fc.nat(), fc.constant(JSON.stringify(good))).map(([at, t]) => t.slice(0, at % t.length)), // cut short
    fc.constantFrom("", " ", "\r", "\ufeff"),
  );
  const file = fc.tuple(fc.array(line, { maxLength: 12 }), fc.constantFrom("\n", "\r\n"), fc.boolean()).map(([lines, nl, lastNewline]) => lines.join(nl) + (lastNewline && lines.length ? nl : ""));

  it("on line soup (mutated samples, metrics lines, fragments, cut lines): never fails, consistent counts", async () => {
    await fc.assert(
      fc.asyncProperty(file, fc.array(fc.integer({ min: 1, max: 64 }), { maxLength: 5 }), async (text, sizes) => {
        const bytes = new TextEncoder().encode(text);
        const read = await readJsonl(chunked(bytes, sizes));
        // Lines as the reader sees them: decoded (a leading byte-order mark dropped), a last empty piece not a line.
        const blank = new TextDecoder().decode(bytes).split("\n").filter((l, i, all) => !(i === all.length - 1 && l === "") && /^[ \t\r\ufeff]*$/.test(l)).length;
        expect(read.validLines + read.badLines + blank).toBe(read.linesRead);
        // At most 20 problems kept, at most 3 of one line, at least one of each bad line until there are 20.
        expect(read.problems.length).toBeLessThanOrEqual(Math.min(20, read.problemCount, 3 * read.badLines));
        expect(read.problems.length).toBeGreaterThanOrEqual(Math.min(20, read.badLines));
        expect(read.problemCount).toBeGreaterThanOrEqual(read.badLines);
        for (let k = 1; k < read.problems.length; k++) expect(read.problems[k]!.line).toBeGreaterThanOrEqual(read.problems[k - 1]!.line);
        for (const s of read.samples) expect(sampleLineSchema.safeParse(s).success).toBe(true);
        for (const p of read.problems) expect(`${p.path}: ${p.message}`).not.toMatch(ZOD_DEFAULT);
        // Building the run of the valid lines fails only for want of samples.
        const built = onlyThrows(() => buildRun(read), ImportError);
        if (read.samples.length) expect((built as ReturnType<typeof buildRun>).model.samples).toHaveLength(read.samples.length);
        // The strict reader agrees: it succeeds exactly when nothing is wrong and there are samples.
        const strict = onlyThrows(() => importJsonl(text), ImportError);
        expect(strict instanceof ImportError).toBe(read.problemCount > 0 || read.samples.length === 0);
      }),
      { numRuns: RUNS },
    );
  });

  it("a mutated sample line is rejected (if at all) with problems at the mutated field or around it", async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat(), mutation, async (at, m) => {
        const path = pathsOf(good)[at % pathsOf(good).length]!;
        const read = await readJsonl(new Blob([`${JSON.stringify(mutate(good, path, m))}\n`]));
        const p = pathText(path);
        for (const problem of read.problems) {
          expect(problem.line).toBe(1);
          expect(problem.path).not.toBeNull();
          // The problem's path and the mutated one: one is a prefix of the other (a deleted list item shifts the rest).
          const q = problem.path!;
          const base = (s: string) => s.replace(/\[\d+\][^[]*$/, "");
          expect(q.startsWith(p) || p.startsWith(q) || base(q).startsWith(base(p)) || base(p).startsWith(base(q)), `${q} vs mutated ${p}`).toBe(true);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("on arbitrary bytes in arbitrary chunks: never fails, the same result however it is cut", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.uint8Array({ maxLength: 3000 }), fc.string({ unit: "binary", maxLength: 1000 }).map((s) => new TextEncoder().encode(s))),
        fc.array(fc.integer({ min: 1, max: 50 }), { minLength: 1, maxLength: 6 }),
        async (bytes, sizes) => {
          const whole = await readJsonl(chunked(bytes, []));
          const cut = await readJsonl(chunked(bytes, sizes));
          expect(stable(cut)).toEqual(stable(whole));
          const decoded = new TextDecoder().decode(bytes);
          const lines = decoded.split("\n");
          if (lines.at(-1) === "") lines.pop();
          expect(whole.linesRead).toBe(lines.length);
          expect(whole.bytesRead).toBe(bytes.length);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("reads adversarial lines: deep nesting, long runs of fragments, thousands of bad fields", async () => {
    const adversarialLines = [
      "[".repeat(100_000),
      `{"idx":0,"task_name":"t","message_log":[],"x":${"[".repeat(50_000)}${"]".repeat(50_000)}}`,
      `{"idx":0,"task_name":"t","message_log":[],"lab/initial_env_info":${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}}`,
      `{"idx":0,"task_name":"t","message_log":[${Array.from({ length: 5000 }, () => '{"role":"user","content":1}').join(",")}]}`,
      ...repeatedFragments(5000).map((t) => t.replaceAll("\n", " ")),
    ];
    for (const l of adversarialLines) {
      const read = await readJsonl(new Blob([`${l}\n${l}`]));
      expect(read.linesRead).toBe(2);
      onlyThrows(() => buildRun(read), ImportError);
    }
  });
});
