/**
 * Bad input to the JSONL importer (`readJsonl`, the streaming reader the page uses, and `importJsonl`, the strict
 * reader of a text in memory): truncated lines, wrong types, lines that are not JSON or not objects, an empty file,
 * CRLF line ends, a character split across chunks, an over-long line, and the huge files (100 MB, a million lines)
 * streamed through it as generated streams. Each case asserts what survived: the valid records, the first problems
 * with their line numbers and field paths, the counts, and (for the huge files) that the text was never held whole.
 */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createReadStream } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { beforeAll, describe, expect, it } from "vitest";
import { type RolloutEvent } from "../core/index.js";
import { buildRun, exportJsonl, formatProblem, ImportError, importJsonl, readJsonl, type JsonlReadResult } from "../app/run/jsonl.js";
import { RunModel } from "../app/run/run-model.js";
import { runScenario } from "../scenario/run.js";
import { parseScenario } from "../scenario/schema.js";
import calculator from "../scenario/examples/calculator-scripted.json";
import workspace from "../scenario/examples/workspace-structured.json";

const encoder = new TextEncoder();

/** The bytes of `text` as a stream of `chunkBytes`-byte chunks (cut anywhere, inside a character too). */
function byteStream(bytes: Uint8Array, chunkBytes: number | ((k: number) => number)): ReadableStream<Uint8Array> {
  let at = 0;
  let k = 0;
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (at >= bytes.length) return controller.close();
        const size = Math.max(1, typeof chunkBytes === "number" ? chunkBytes : chunkBytes(k++));
        controller.enqueue(bytes.slice(at, at + size));
        at += size;
      },
    },
    { highWaterMark: 0 },
  );
}

const textStream = (text: string, chunkBytes: number | ((k: number) => number) = 64 * 1024) => byteStream(encoder.encode(text), chunkBytes);

/**
 * A generated file: `lines` lines, line i being `lineAt(i)`, produced on demand in ~64 KB chunks (nothing is
 * written anywhere, and the stream never holds more than one chunk).
 */
function generatedFile(lineAt: (i: number) => string, lines: number, chunkChars = 64 * 1024): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (i >= lines) return controller.close();
        const parts: string[] = [];
        let n = 0;
        while (i < lines && n < chunkChars) {
          const line = `${lineAt(i++)}\n`;
          parts.push(line);
          n += line.length;
        }
        controller.enqueue(encoder.encode(parts.join("")));
      },
    },
    { highWaterMark: 0 },
  );
}

const sampleLine = (idx: number, content: string | number = "hi") =>
  JSON.stringify({ idx, task_name: "t", message_log: [{ role: "user", content }, { role: "assistant", content: "ok" }] });

const texts = (read: JsonlReadResult) => read.problems.map(formatProblem);

/** A real run's export (the calculator with a scripted policy; the workspace with tools, violations and forks' stop strings). */
async function exported(source: unknown): Promise<{ text: string; model: RunModel }> {
  const model = new RunModel();
  const scenario = parseScenario(source);
  await runScenario(scenario, { onEvent: (e: RolloutEvent) => model.apply(e) });
  return { text: exportJsonl(model, scenario), model };
}

const view = (model: RunModel) =>
  model.samples.map((s) => ({ messages: s.messages, turns: s.turns.map((t) => [t.reward, t.terminated, t.metadata, t.violations]), total: s.totalReward, termination: s.termination }));

let calc: { text: string; model: RunModel };
let ws: { text: string; model: RunModel };

beforeAll(async () => {
  calc = await exported(calculator);
  ws = await exported(workspace);
});

describe("the streaming importer on good input", () => {
  it("reads a clean export in chunks of any size, with the same run as the strict reader", async () => {
    for (const { text, model } of [calc, ws]) {
      for (const chunk of [1, 7, 4096, 1 << 20]) {
        const read = await readJsonl(textStream(text, chunk));
        expect(read.problemCount).toBe(0);
        expect(read.problems).toEqual([]);
        expect(read.samples).toHaveLength(model.samples.length);
        expect(read.footer).not.toBeNull();
        expect(read.linesRead).toBe(model.samples.length + 1);
        expect(read.bytesRead).toBe(encoder.encode(text).length);
        const built = buildRun(read);
        expect(view(built.model)).toEqual(view(model));
        expect(view(built.model)).toEqual(view(importJsonl(text).model));
        expect(built.model.summary.metrics).toEqual(model.summary.metrics);
      }
    }
  });

  it("reads a Blob (what the page gets) and a Node file stream (Readable.toWeb)", async () => {
    const fromBlob = await readJsonl(new Blob([calc.text]));
    expect(fromBlob.samples).toHaveLength(calc.model.samples.length);
    const dir = mkdtempSync(join(tmpdir(), "jsonl-faults-"));
    try {
      const path = join(dir, "run.jsonl");
      writeFileSync(path, calc.text);
      const stream = Readable.toWeb(createReadStream(path, { highWaterMark: 13 })) as unknown as ReadableStream<Uint8Array>;
      const fromFile = await readJsonl(stream);
      expect(fromFile).toEqual({ ...fromBlob, maxBufferedChars: fromFile.maxBufferedChars });
      expect(fromFile.maxBufferedChars).toBeLessThan(fromBlob.maxBufferedChars);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("CRLF line ends read the same as LF ones", async () => {
    const lf = await readJsonl(textStream(ws.text, 5));
    const crlf = await readJsonl(textStream(ws.text.replaceAll("\n", "\r\n"), 5));
    expect(crlf.problemCount).toBe(0);
    expect(crlf.samples).toEqual(lf.samples);
    expect(crlf.footer).toEqual(lf.footer);
    expect(view(importJsonl(ws.text.replaceAll("\n", "\r\n")).model)).toEqual(view(ws.model));
  });

  it("a multi-byte character split across chunks arrives whole (1-byte and ragged chunks)", async () => {
    const content = "é ü 中文 😀🎉 \u2028 naïve — \ud83d\ude00 end";
    const text = `${sampleLine(0, content)}\n${sampleLine(1, content.repeat(3))}\n`;
    for (const chunks of [1, 2, 3, (k: number) => (k % 5) + 1]) {
      const read = await readJsonl(textStream(text, chunks));
      expect(read.problemCount).toBe(0);
      expect(read.samples.map((s) => s.message_log[0]!.content)).toEqual([content, content.repeat(3)]);
    }
  });

  it("a byte-order mark at the start and blank lines are no problem", async () => {
    const text = `\ufeff${sampleLine(0)}\n\n   \n${sampleLine(1)}\n\n`;
    const read = await readJsonl(textStream(text, 3));
    expect(read.problemCount).toBe(0);
    expect(read.samples.map((s) => s.idx)).toEqual([0, 1]);
    expect(read.linesRead).toBe(5);
    expect(importJsonl(text).model.samples).toHaveLength(2);
  });
});

describe("the streaming importer on bad input", () => {
  it("an empty file (or only blank lines): no problem, no sample, and building a run says so", async () => {
    for (const text of ["", "\n", "\r\n\r\n", "   \n\t\n"]) {
      const read = await readJsonl(textStream(text, 1));
      expect(read).toMatchObject({ samples: [], footer: null, problemCount: 0, validLines: 0 });
      expect(() => buildRun(read)).toThrow(new ImportError("no sample lines (objects with a message_log)"));
      expect(() => importJsonl(text)).toThrow(ImportError);
    }
  });

  it("a truncated last line (no newline, JSON cut short) is reported as truncated; the lines before it survive", async () => {
    const cut = calc.text.slice(0, calc.text.length - 40); // inside the metrics line
    const read = await readJsonl(textStream(cut, 11));
    const last = calc.model.samples.length + 1;
    expect(read.samples).toHaveLength(calc.model.samples.length);
    expect(read.footer).toBeNull();
    expect(read.problemCount).toBe(1);
    expect(read.problems[0]).toMatchObject({ line: last, path: null });
    expect(formatProblem(read.problems[0]!)).toMatch(new RegExp(`^line ${last}: truncated: the file ends inside this line`));
    // The run of what survived: every sample, the default metrics.
    expect(buildRun(read).model.samples.map((s) => s.messages)).toEqual(calc.model.samples.map((s) => s.messages));
  });

  it("a line cut short in the middle of the file is reported with its line and column", async () => {
    const lines = [sampleLine(0), sampleLine(1).slice(0, 30), sampleLine(2)];
    const read = await readJsonl(textStream(`${lines.join("\n")}\n`, 4));
    expect(read.samples.map((s) => s.idx)).toEqual([0, 2]);
    expect(texts(read)).toEqual(["line 2: not valid JSON: the line ends before its JSON does, at column 31 (cut short?)"]);
  });

  it("wrong types are reported with the line and the field path; the other lines are kept", async () => {
    const good = JSON.parse(sampleLine(0)) as Record<string, unknown>;
    const lines = [
      sampleLine(0),
      JSON.stringify({ ...good, idx: "1" }),
      JSON.stringify({ ...good, message_log: [{ role: "user", content: "a" }, { role: "assistant", content: 5 }] }),
      sampleLine(3),
      JSON.stringify({ ...good, message_log: [{ role: "user", content: "a", token_ids: [1, "2", 3.5] }] }),
      JSON.stringify({ ...good, "lab/turns": [{ reward: 1 }, { reward: "high", terminated: "yes" }] }),
      JSON.stringify({ idx: 6, task_name: "t" }),
      JSON.stringify({ ...good, message_log: "hello" }),
      JSON.stringify({ ...good, "lab/initial_env_info": [1, 2] }),
      JSON.stringify({ ...good, message_log: [null] }),
      JSON.stringify({ "lab/format": "rollout-lab-run/1", mode: "both", metrics: [] }),
      sampleLine(11),
    ];
    const read = await readJsonl(textStream(`${lines.join("\n")}\n`, 17));
    expect(read.samples.map((s) => s.idx)).toEqual([0, 3, 11]);
    expect(read.footer).toBeNull();
    expect(texts(read)).toEqual([
      "line 2: idx: expected a number",
      "line 3: message_log[1].content: expected a string",
      "line 5: message_log[0].token_ids[1]: expected a token id (an integer from 0 to 2147483647)",
      "line 5: message_log[0].token_ids[2]: expected a token id (an integer from 0 to 2147483647)",
      "line 6: lab/turns[1].reward: expected a number",
      "line 6: lab/turns[1].terminated: expected true or false",
      "line 7: message_log: missing (expected a list of messages)",
      "line 8: message_log: expected a list of messages",
      "line 9: lab/initial_env_info: expected an object or null",
      "line 10: message_log[0]: expected a message object {role, content}",
      'line 11: mode: expected "sync" or "async"',
      "line 11: metrics: expected an object",
    ]);
    expect(read.badLines).toBe(9);
    expect(read.validLines).toBe(3);
    expect(read.linesRead).toBe(12);
    // The strict reader stops at the same first problem.
    expect(() => importJsonl(lines.join("\n"))).toThrow(/^line 2: idx: expected a number \(and 11 more problems\)$/);
  });

  it("lines that are not JSON, or not objects, or neither a sample nor the metrics line", async () => {
    const lines = [sampleLine(0), "hello", "{oops", "[1, 2]", "42", '"text"', "null", '{"note": "hi"}', '{"idx": 1, "task_name": "t", "message_log": []} trailing', sampleLine(9)];
    const read = await readJsonl(textStream(lines.join("\n"), 6));
    expect(read.samples.map((s) => s.idx)).toEqual([0, 9]);
    const problems = texts(read);
    expect(problems[0]).toMatch(/^line 2: not valid JSON at column 1 \(/);
    expect(problems[1]).toMatch(/^line 3: not valid JSON at column 2 \(/);
    expect(problems.slice(2, 7)).toEqual([
      "line 4: expected an object (a sample or the metrics line), got a list",
      "line 5: expected an object (a sample or the metrics line), got a number",
      "line 6: expected an object (a sample or the metrics line), got a string",
      "line 7: expected an object (a sample or the metrics line), got null",
      "line 8: expected a sample (idx, task_name, message_log) or the metrics line (lab/format, metrics, scenario)",
    ]);
    expect(problems[7]).toMatch(/^line 9: not valid JSON at column 49 \(/);
    expect(read.problemCount).toBe(8);
  });

  it("keeps the first 20 problems (and at most 3 of one line) and counts them all", async () => {
    const manyMessages = { idx: 0, task_name: "t", message_log: Array.from({ length: 1000 }, () => ({ role: "user", content: 1 })) };
    const lines = [JSON.stringify(manyMessages), ...Array.from({ length: 50 }, (_, i) => (i % 2 ? "nope" : JSON.stringify({ idx: i, task_name: 1, message_log: [] })))];
    const read = await readJsonl(textStream(lines.join("\n")));
    expect(read.problems).toHaveLength(20);
    expect(read.problems.slice(0, 3).map((p) => [p.line, p.path])).toEqual([
      [1, "message_log[0].content"],
      [1, "message_log[1].content"],
      [1, "message_log[2].content"],
    ]);
    expect(read.problems.slice(3).map((p) => p.line)).toEqual(Array.from({ length: 17 }, (_, k) => k + 2));
    expect(read.problemCount).toBe(1000 + 50);
    expect(read.badLines).toBe(51);
    const capped = await readJsonl(textStream(lines.join("\n")), { maxProblems: 5 });
    expect(capped.problems).toHaveLength(5);
    expect(capped.problemCount).toBe(1050);
  });

  it("an over-long line is skipped and reported without being held; the next lines are read", async () => {
    const long = `{"idx": 1, "task_name": "${"z".repeat(50_000)}", "message_log": []}`;
    const read = await readJsonl(textStream([sampleLine(0), long, sampleLine(2)].join("\n"), 1000), { maxLineLength: 10_000 });
    expect(read.samples.map((s) => s.idx)).toEqual([0, 2]);
    expect(texts(read)).toEqual([`line 2: longer than 10000 characters (${long.length}); skipped`]);
    expect(read.maxBufferedChars).toBeLessThan(12_000);
  });

  it("bytes that are not UTF-8 fail their line, naming the byte (never an exception, never U+FFFD without a word)", async () => {
    const head = encoder.encode('{"idx": 0, "task_name": "');
    const good = encoder.encode('{"idx": 1, "task_name": "t", "message_log": []}\n');
    const bytes = new Uint8Array([...head, 0xff, 0xc3, 0x28, 0xe2, 0x82, ...encoder.encode('", "message_log": []}\n'), ...good, 0xf0, 0x9f]);
    const read = await readJsonl(byteStream(bytes, 1));
    expect(read.samples.map((s) => s.idx)).toEqual([1]);
    expect(texts(read)).toEqual([`line 1: not valid UTF-8 at byte ${head.length}`, `line 3: not valid UTF-8 at byte ${bytes.length - 2}`]);
  });

  it("importing the valid lines of a file with problems gives a run of exactly those samples", async () => {
    const lines = ws.text.trimEnd().split("\n");
    lines.splice(1, 0, "garbage"); // a line that is not JSON between samples 0 and 1
    lines[2] = lines[2]!.replace('"task_name":"workspace"', '"task_name":7'); // sample 1 now has a wrong type
    const read = await readJsonl(textStream(lines.join("\n"), 100));
    expect(texts(read)).toEqual([expect.stringMatching(/^line 2: not valid JSON/), "line 3: task_name: expected a string"]);
    const { model, scenario } = buildRun(read);
    const kept = ws.model.samples.filter((_, i) => i !== 1);
    expect(view(model)).toEqual(view({ samples: kept } as RunModel));
    expect(scenario).toEqual(JSON.parse(lines.at(-1)!).scenario);
  });

  it("an aborted read rejects with the abort reason and stops reading", async () => {
    const controller = new AbortController();
    let pulls = 0;
    const endless = new ReadableStream<Uint8Array>({ pull: (c) => void (pulls++, c.enqueue(encoder.encode(`${sampleLine(pulls)}\n`))) }, { highWaterMark: 0 });
    const reading = readJsonl(endless, { signal: controller.signal, onProgress: (p) => p.linesRead >= 100 && controller.abort(new Error("stop")) });
    await expect(reading).rejects.toThrow("stop");
    expect(pulls).toBeLessThan(110);
  });
});

/** `gc()` (exposed at run time: the test runner does not start Node with --expose-gc). */
function exposeGc(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

describe("huge files, streamed", () => {
  const MB = 1024 * 1024;

  it(
    "a 100 MB file of mostly bad lines: every line read, the right problems and line numbers, memory bounded",
    async () => {
      const gc = exposeGc();
      const pad = "x".repeat(1000);
      // ~1.07 KB a line; every 1000th a valid sample, the others with a wrong-typed idx.
      const lineAt = (i: number) =>
        `{"idx":${i % 1000 === 0 ? i : `"${i}"`},"task_name":"t","message_log":[{"role":"user","content":"${pad}"}]}`;
      const lines = 100_000;
      gc();
      const before = process.memoryUsage().heapUsed;
      let retainedPeak = 0;
      let chunks = 0;
      const started = performance.now();
      const read = await readJsonl(generatedFile(lineAt, lines), {
        // Every ~10 MB: what the reader holds on to (after a full GC) while it streams.
        onProgress: () => {
          if (++chunks % 160 !== 0) return;
          gc();
          retainedPeak = Math.max(retainedPeak, process.memoryUsage().heapUsed - before);
        },
      });
      const seconds = (performance.now() - started) / 1000;
      gc();
      const retainedAfter = process.memoryUsage().heapUsed - before;
      expect(read.bytesRead).toBeGreaterThan(100 * MB);
      expect(read.linesRead).toBe(lines);
      expect(read.samples.map((s) => s.idx)).toEqual(Array.from({ length: 100 }, (_, k) => k * 1000));
      expect(read.problemCount).toBe(lines - 100);
      expect(read.badLines).toBe(lines - 100);
      expect(read.problems).toHaveLength(20);
      expect(read.problems.map((p) => p.line)).toEqual(Array.from({ length: 20 }, (_, k) => k + 2));
      expect(texts(read)[0]).toBe("line 2: idx: expected a number");
      // Streaming: never more than a chunk and a line of text at once, and the heap does not grow with the file.
      expect(read.maxBufferedChars).toBeLessThan(70 * 1024);
      expect(chunks).toBeGreaterThan(1000);
      expect(retainedPeak).toBeLessThan(16 * MB);
      expect(retainedAfter).toBeLessThan(16 * MB);
      console.info(`100 MB, 100,000 lines: ${seconds.toFixed(1)} s, retained heap ≤ ${(retainedPeak / MB).toFixed(1)} MB while streaming`);
    },
    120_000,
  );

  it(
    "a 100 MB file that is one line: reported as too long, never held whole",
    async () => {
      const gc = exposeGc();
      let sent = 0;
      const block = encoder.encode("y".repeat(64 * 1024));
      const oneLine = new ReadableStream<Uint8Array>(
        {
          pull(c) {
            if (sent >= 100 * MB) return c.close();
            const head = '{"idx": 0, "task_name": "';
            c.enqueue(sent === 0 ? encoder.encode(head + "y".repeat(64 * 1024 - head.length)) : block);
            sent += 64 * 1024;
          },
        },
        { highWaterMark: 0 },
      );
      gc();
      const before = process.memoryUsage().heapUsed;
      let retainedPeak = 0;
      let chunks = 0;
      const read = await readJsonl(oneLine, {
        onProgress: () => {
          if (++chunks % 160 !== 0) return;
          gc();
          retainedPeak = Math.max(retainedPeak, process.memoryUsage().heapUsed - before);
        },
      });
      expect(read.linesRead).toBe(1);
      expect(read.bytesRead).toBe(100 * MB);
      expect(texts(read)).toEqual([`line 1: longer than ${16 * MB} characters (${100 * MB}); skipped`]);
      // At most the line limit (16 Mi one-byte characters) is held before the line is given up.
      expect(retainedPeak).toBeLessThan(24 * MB);
    },
    120_000,
  );

  it(
    "a million lines of every kind: counts, first problems and line numbers right",
    async () => {
      const kinds = [
        (i: number) => sampleLine(i), // valid
        (i: number) => `{"idx":${i},"task_name":"t","message_log":[{"role":"user","content":${i}}]}`, // wrong type
        () => "not json", // not JSON
        (i: number) => `{"idx":${i},"task_name":"t","message_log":[{"role":"us`, // cut short
        () => "", // blank
        () => "[1,2,3]", // not an object
        (i: number) => sampleLine(i).replace("\n", "") + "\r", // CRLF, valid
        (i: number) => `{"idx":${i},"task_name":"t","message_log":[],"lab/turns":[{"reward":"1"}]}`, // wrong type, deeper
        (i: number) => sampleLine(i), // valid
        () => '{"lab/format":"rollout-lab-run/1","mode":"async","metrics":{"n":1}}', // metrics line
      ];
      const lines = 1_000_000;
      const started = performance.now();
      const read = await readJsonl(generatedFile((i) => kinds[i % kinds.length]!(i), lines));
      const seconds = (performance.now() - started) / 1000;
      const per = lines / kinds.length;
      expect(read.linesRead).toBe(lines);
      expect(read.samples).toHaveLength(3 * per);
      expect(read.samples.slice(0, 4).map((s) => s.idx)).toEqual([0, 6, 8, 10]);
      expect(read.footer).toMatchObject({ mode: "async" });
      expect(read.validLines).toBe(4 * per);
      expect(read.badLines).toBe(5 * per);
      expect(read.problemCount).toBe(5 * per);
      expect(texts(read).slice(0, 5)).toEqual([
        "line 2: message_log[0].content: expected a string",
        expect.stringMatching(/^line 3: not valid JSON at column 2 /),
        "line 4: not valid JSON: the line ends before its JSON does, at column 52 (cut short?)",
        "line 6: expected an object (a sample or the metrics line), got a list",
        "line 8: lab/turns[0].reward: expected a number",
      ]);
      expect(read.problems.at(-1)!.line).toBe(38); // 20 problems: 5 in each 10 lines
      expect(read.maxBufferedChars).toBeLessThan(70 * 1024);
      console.info(`1,000,000 lines (${(read.bytesRead / MB).toFixed(0)} MB): ${seconds.toFixed(1)} s`);
    },
    120_000,
  );
});
