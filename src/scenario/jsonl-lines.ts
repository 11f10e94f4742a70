/**
 * The one place a JSONL input is split into numbered lines (1-based; a last line without a newline is a line, the
 * empty text after a final newline is none):
 *
 * - `jsonlLines`: a text held in memory, as a list of lines (the regression goldens and transcripts: src/regress/);
 * - `JsonlLineSplitter`: text or bytes fed in pieces, each finished line handed on with its number, holding only the
 *   line not finished yet (at most `maxLineLength` characters of it: a longer one is reported, not held); bytes are
 *   counted and decoded as strict UTF-8 (./utf8.ts `StrictUtf8Decoder`): bytes that are not UTF-8 fail their line;
 * - `readJsonlStream`: a byte stream read chunk by chunk into a splitter.
 *
 * What a line means (JSON, a sample, the metrics line) is the reader's (./jsonl-reader.ts `JsonlAccumulator`).
 */

import { StrictUtf8Decoder } from "./utf8.js";

/** The lines of a JSONL text: split at each `\n`, the last line kept without one, nothing after a final newline. */
export function jsonlLines(text: string): string[] {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

/** What a splitter counts (a read's result holds them: ./jsonl-reader.ts `JsonlReadResult`). */
export interface JsonlLineCounts {
  /** Lines finished so far, blank ones included. */
  linesRead: number;
  /** Bytes handed to `pushBytes` so far. */
  bytesRead: number;
  /** The most characters of text held at once (a piece plus the line being read): what "streaming" means here. */
  maxBufferedChars: number;
}

export interface JsonlLineSink {
  /** A finished line: its text (without the `\n`; a `\r` before it is kept), its number, and whether the input ended in it (no newline after it). */
  line(text: string, lineNo: number, atEnd: boolean): void;
  /** A finished line that cannot be read (too long, or bytes that are not UTF-8): why, in words. */
  badLine(lineNo: number, message: string): void;
}

/**
 * Splits text fed in pieces (`push`, or bytes: `pushBytes`) into lines, told when the input ends (`end`). It holds
 * only the pieces of the line not finished yet, and of those at most `maxLineLength` characters (a longer line is a
 * bad line: `longer than 16777216 characters (16777300); skipped`). A line with bytes that are not UTF-8 is a bad line
 * too (`not valid UTF-8 at byte 5123`, the offset in the stream), whatever else it holds.
 */
export class JsonlLineSplitter {
  private pending: string[] = [];
  private pendingLength = 0;
  private overlong = false;
  /** Why the line being read is bad already (its bytes were not UTF-8), or null. */
  private lineProblem: string | null = null;
  private ended = false;
  private decoder: StrictUtf8Decoder | null = null;

  constructor(
    private readonly sink: JsonlLineSink,
    private readonly maxLineLength: number,
    /** Where the counts are kept (updated in place). */
    readonly counts: JsonlLineCounts = { linesRead: 0, bytesRead: 0, maxBufferedChars: 0 },
  ) {}

  /** More text. */
  push(text: string): void {
    if (this.ended) throw new Error("JsonlLineSplitter: push after end");
    this.counts.maxBufferedChars = Math.max(this.counts.maxBufferedChars, (this.overlong ? 0 : this.pendingLength) + text.length);
    let start = 0;
    for (;;) {
      const nl = text.indexOf("\n", start);
      if (nl === -1) break;
      this.finishLine(text.slice(start, nl), false);
      start = nl + 1;
    }
    if (start < text.length) this.hold(start === 0 ? text : text.slice(start));
  }

  /** More bytes of UTF-8 text (a character cut by the chunk's end is whole with the next chunk; a byte-order mark at the start is dropped). */
  pushBytes(chunk: Uint8Array): void {
    this.counts.bytesRead += chunk.byteLength;
    this.decoder ??= new StrictUtf8Decoder(
      (text) => this.push(text),
      (offset) => (this.lineProblem ??= `not valid UTF-8 at byte ${offset}`),
    );
    this.decoder.decode(chunk);
  }

  /** The input ended: the line it ends in (if any) is finished. */
  end(): void {
    if (this.ended) return;
    this.decoder?.end();
    this.ended = true;
    if (this.pendingLength > 0 || this.overlong) this.finishLine("", true);
  }

  private hold(piece: string): void {
    this.pendingLength += piece.length;
    if (this.overlong) return;
    if (this.pendingLength > this.maxLineLength) {
      this.overlong = true;
      this.pending = [];
      return;
    }
    this.pending.push(piece);
  }

  private finishLine(last: string, atEnd: boolean): void {
    const lineNo = ++this.counts.linesRead;
    const length = this.pendingLength + last.length;
    const overlong = this.overlong || length > this.maxLineLength;
    const line = this.lineProblem !== null || overlong ? null : this.pending.length ? this.pending.join("") + last : last;
    const problem = this.lineProblem;
    this.pending = [];
    this.pendingLength = 0;
    this.overlong = false;
    this.lineProblem = null;
    if (problem !== null) this.sink.badLine(lineNo, problem);
    else if (line === null) this.sink.badLine(lineNo, `longer than ${this.maxLineLength} characters (${length}); skipped`);
    else this.sink.line(line, lineNo, atEnd);
  }
}

export interface JsonlStreamOptions {
  /** Checked before each read: an aborted read throws its reason. */
  signal?: AbortSignal;
  /** Awaited before each read (a reader that is far enough ahead of its consumer waits there). */
  beforeRead?: () => Promise<void> | void;
  /** Called after each chunk is split. */
  afterChunk?: () => void;
}

/**
 * Reads `stream` chunk by chunk into `lines` and ends it; throws only for an abort or a failing stream (the stream is
 * cancelled then).
 */
export async function readJsonlStream(stream: ReadableStream<Uint8Array>, lines: JsonlLineSplitter, options: JsonlStreamOptions = {}): Promise<void> {
  const reader = stream.getReader();
  try {
    for (;;) {
      if (options.signal?.aborted) throw options.signal.reason ?? new DOMException("The import was cancelled", "AbortError");
      await options.beforeRead?.();
      const { done, value } = await reader.read();
      if (done) break;
      lines.pushBytes(value);
      options.afterChunk?.();
    }
    lines.end();
  } catch (e) {
    void reader.cancel(e).catch(() => undefined);
    throw e;
  } finally {
    try {
      reader.releaseLock();
    } catch {
      // a cancelled reader may refuse; nothing holds it any more
    }
  }
}
