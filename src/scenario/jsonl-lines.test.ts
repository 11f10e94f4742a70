/**
 * The one JSONL line reader: a text in memory (`jsonlLines`) and text or bytes in pieces (`JsonlLineSplitter`) give
 * the same numbered lines, wherever the pieces are cut; a line too long or with bytes that are not UTF-8 is a bad
 * line, and the lines after it are read on.
 */

import { describe, expect, it } from "vitest";
import { JsonlLineSplitter, jsonlLines, readJsonlStream } from "./jsonl-lines.js";

function split(pieces: (string | Uint8Array)[], maxLineLength = Number.POSITIVE_INFINITY) {
  const out: string[] = [];
  const lines = new JsonlLineSplitter(
    {
      line: (text, n, atEnd) => out.push(`${n}${atEnd ? "$" : ""}: ${text}`),
      badLine: (n, message) => out.push(`${n}! ${message}`),
    },
    maxLineLength,
  );
  for (const p of pieces) if (typeof p === "string") lines.push(p);
  else lines.pushBytes(p);
  lines.end();
  return { out, counts: lines.counts };
}

describe("jsonlLines", () => {
  it("splits at newlines; a last line without one is a line, nothing after a final newline is", () => {
    expect(jsonlLines("")).toEqual([]);
    expect(jsonlLines("a\nb")).toEqual(["a", "b"]);
    expect(jsonlLines("a\nb\n")).toEqual(["a", "b"]);
    expect(jsonlLines("a\n\nb\r\n")).toEqual(["a", "", "b\r"]);
  });
});

describe("JsonlLineSplitter", () => {
  it("numbers the lines of text cut anywhere, the last one marked when the input ends in it", () => {
    const text = "one\ntwo\r\n\nthree";
    const whole = split([text]).out;
    expect(whole).toEqual(["1: one", "2: two\r", "3: ", "4$: three"]);
    for (let cut = 0; cut <= text.length; cut++) expect(split([text.slice(0, cut), text.slice(cut)]).out).toEqual(whole);
    expect(split(["a\n"]).out).toEqual(["1: a"]);
  });

  it("a line longer than the limit is reported with its length, never held", () => {
    const { out, counts } = split(["ok\n", "x".repeat(6), "x".repeat(6), "\nok"], 10);
    expect(out).toEqual(["1: ok", "2! longer than 10 characters (12); skipped", "3$: ok"]);
    expect(counts.linesRead).toBe(3);
    expect(counts.maxBufferedChars).toBeLessThanOrEqual(12);
  });

  it("bytes: counted, decoded as UTF-8 across chunks; a line with bytes that are not UTF-8 is bad, the next read on", () => {
    const bytes = new TextEncoder().encode("\ufeffé\nbad x\nok");
    bytes[bytes.indexOf(0x78)] = 0xff;
    const { out, counts } = split([bytes.subarray(0, 4), bytes.subarray(4)]);
    expect(out).toEqual(["1: é", `2! not valid UTF-8 at byte ${bytes.indexOf(0xff)}`, "3$: ok"]);
    expect(counts.bytesRead).toBe(bytes.length);
  });

  it("readJsonlStream reads a stream into it, chunk by chunk", async () => {
    const chunks = ["a\nb", "\nc\n"].map((t) => new TextEncoder().encode(t));
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        const next = chunks.shift();
        if (next) c.enqueue(next);
        else c.close();
      },
    });
    const out: string[] = [];
    let afterChunk = 0;
    const lines = new JsonlLineSplitter({ line: (t, n) => out.push(`${n}: ${t}`), badLine: () => undefined }, 100);
    await readJsonlStream(stream, lines, { afterChunk: () => afterChunk++ });
    expect(out).toEqual(["1: a", "2: b", "3: c"]);
    expect(afterChunk).toBe(2);
    expect(lines.counts.bytesRead).toBe(6);
  });
});
