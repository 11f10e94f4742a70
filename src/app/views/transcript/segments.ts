/**
 * Splits an assistant's text into what the transcript draws: plain text, think blocks, tool calls (with their
 * parsed JSON, parse verdict and schema errors) and special markers. Pure; the text is data and is only ever
 * sliced, never interpreted as markup.
 *
 * Tool-call regions are exactly the Hermes parser's (`parseHermesToolCalls().regions`), so the view shows what the
 * rollout saw. Thinking tags inside a tool call's body belong to the call; thinking tags elsewhere pair up into
 * think blocks, which may contain tool calls and markers of their own.
 */

import {
  DEFAULT_THINKING_TAGS,
  detectMalformedThinking,
  jsonTypeName,
  parseHermesToolCalls,
  SESSION_TOOLS,
  validateArguments,
  type ThinkingStyle,
  type ToolRegistry,
} from "../../../core/index.js";

export type ToolCallVerdict =
  | { status: "parsed" }
  | { status: "json_error"; message: string }
  | { status: "missing_name_or_arguments"; message: string };

/** `known: false` when no schema is known for the called name (then `errors` is empty). */
export interface ToolCallSchema {
  known: boolean;
  errors: string[];
}

interface Span {
  /** Offsets into the analysed text: `text.slice(start, end)` is the segment's source. */
  start: number;
  end: number;
}

export interface TextSegment extends Span {
  kind: "text";
  text: string;
}

export interface MarkerSegment extends Span {
  kind: "marker";
  text: string;
  /** Why the marker is out of place (a stray closing tag, an unpaired thinking tag), or null. */
  note: string | null;
}

export interface ToolCallSegment extends Span {
  kind: "tool_call";
  /** The call's position among the text's calls. */
  index: number;
  /** The whole region, tags included. */
  raw: string;
  body: string;
  /** False when the text ended before `</tool_call>`. */
  closed: boolean;
  verdict: ToolCallVerdict;
  name: unknown;
  arguments: unknown;
  /** The decoded JSON, pretty-printed (null when the body is not JSON). */
  pretty: string | null;
  /** Null when the call did not parse. */
  schema: ToolCallSchema | null;
}

export type InlineSegment = TextSegment | MarkerSegment | ToolCallSegment;

export interface ThinkSegment extends Span {
  kind: "think";
  /** Null for the implicit opening of the `closing_only` style (the prompt's prefill opened the block). */
  openTag: string | null;
  /** Null when the text ended inside the block. */
  closeTag: string | null;
  contentStart: number;
  contentEnd: number;
  children: InlineSegment[];
}

export type Segment = InlineSegment | ThinkSegment;

export interface AssistantAnalysis {
  segments: Segment[];
  toolCalls: ToolCallSegment[];
  /** The Hermes parser's turn-level error (one bad call discards all of the turn's calls), or null. */
  toolCallError: string | null;
  malformedThinking: boolean;
}

export interface AnalyzeOptions {
  thinkingStyle?: ThinkingStyle;
  thinkingTags?: readonly [string, string];
  /** The tools whose schemas calls are checked against (default: the session tools). */
  registry?: ToolRegistry;
}

const KNOWN_TAGS = ["<tool_call>", "</tool_call>", "<think>", "</think>", "<tool_response>", "</tool_response>"];
const CHATML_MARKER = /<\|[A-Za-z0-9_.:-]{1,48}\|>/g;

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** ChatML markers (`<|im_end|>` …) and the protocol's tags, as one pattern. */
function markerPattern(extraTags: readonly string[]): RegExp {
  const tags = [...new Set([...KNOWN_TAGS, ...extraTags])].filter((t) => t !== "").sort((a, b) => b.length - a.length);
  return new RegExp(`${CHATML_MARKER.source}|${tags.map(escapeRegExp).join("|")}`, "g");
}

function markerNote(tag: string): string | null {
  if (tag === "</tool_call>") return "closing tag without an opening one";
  return null;
}

/** Plain text with its markers picked out (for prompts and observations). */
export function markerSegments(text: string, from = 0, to = text.length, extraTags: readonly string[] = []): (TextSegment | MarkerSegment)[] {
  const out: (TextSegment | MarkerSegment)[] = [];
  const pattern = markerPattern(extraTags);
  const slice = text.slice(from, to);
  let last = 0;
  for (const m of slice.matchAll(pattern)) {
    if (m.index > last) out.push({ kind: "text", start: from + last, end: from + m.index, text: slice.slice(last, m.index) });
    out.push({ kind: "marker", start: from + m.index, end: from + m.index + m[0].length, text: m[0], note: markerNote(m[0]) });
    last = m.index + m[0].length;
  }
  if (last < slice.length) out.push({ kind: "text", start: from + last, end: to, text: slice.slice(last) });
  return out;
}

/** Every occurrence of `needle` in `text`, left to right, not overlapping. */
function occurrences(text: string, needle: string): number[] {
  const found: number[] = [];
  if (!needle) return found;
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) found.push(i);
  return found;
}

function callVerdict(body: string): { verdict: ToolCallVerdict; decoded: unknown } {
  let decoded: unknown;
  try {
    decoded = JSON.parse(body);
  } catch (e) {
    return { verdict: { status: "json_error", message: (e as Error).message }, decoded: undefined };
  }
  if (typeof decoded !== "object" || decoded === null || Array.isArray(decoded)) {
    return { verdict: { status: "missing_name_or_arguments", message: `expected a JSON object, got ${jsonTypeName(decoded)}` }, decoded };
  }
  const missing = ["name", "arguments"].filter((k) => !Object.prototype.hasOwnProperty.call(decoded, k));
  if (missing.length) {
    return { verdict: { status: "missing_name_or_arguments", message: `no ${missing.map((k) => `"${k}"`).join(" and no ")}` }, decoded };
  }
  return { verdict: { status: "parsed" }, decoded };
}

function callSchema(name: unknown, args: unknown, registry: ToolRegistry): ToolCallSchema {
  if (!registry.has(name)) return { known: false, errors: [] };
  try {
    return { known: true, errors: validateArguments(args, registry.parameters(name) ?? {}) };
  } catch (e) {
    return { known: true, errors: [`schema error: ${(e as Error).message}`] };
  }
}

function toolCallSegment(
  text: string,
  region: { start: number; end: number; closed: boolean; body: string },
  index: number,
  registry: ToolRegistry,
): ToolCallSegment {
  const { verdict, decoded } = callVerdict(region.body);
  const parsed = verdict.status === "parsed";
  const obj = parsed ? (decoded as Record<string, unknown>) : null;
  let pretty: string | null = null;
  if (verdict.status !== "json_error") {
    try {
      pretty = JSON.stringify(decoded, null, 2) ?? null;
    } catch {
      pretty = null;
    }
  }
  return {
    kind: "tool_call",
    index,
    start: region.start,
    end: region.end,
    raw: text.slice(region.start, region.end),
    body: region.body,
    closed: region.closed,
    verdict,
    name: obj ? obj.name : undefined,
    arguments: obj ? obj.arguments : undefined,
    pretty,
    schema: obj ? callSchema(obj.name, obj.arguments, registry) : null,
  };
}

interface ThinkSpan {
  start: number;
  end: number;
  contentStart: number;
  contentEnd: number;
  openTag: string | null;
  closeTag: string | null;
}

interface Item {
  start: number;
  end: number;
  segment: InlineSegment;
}

/** Splits an assistant's text into segments; every character of `text` is in exactly one (leaf) segment. */
export function analyzeAssistantText(text: string, options: AnalyzeOptions = {}): AssistantAnalysis {
  const style = options.thinkingStyle ?? "paired";
  const [openTag, closeTag] = options.thinkingTags ?? DEFAULT_THINKING_TAGS;
  const registry = options.registry ?? SESSION_TOOLS;
  const extraction = parseHermesToolCalls(text);
  const regions = extraction.regions;
  const toolCalls = regions.map((r, i) => toolCallSegment(text, r, i, registry));
  const insideRegion = (pos: number) => regions.some((r) => pos >= r.start && pos < r.end);

  // Thinking tags outside tool calls, in order (a close tag wins where the two would overlap).
  const closes = occurrences(text, closeTag).filter((p) => !insideRegion(p));
  const closeCovers = (p: number) => closes.some((c) => p < c + closeTag.length && c < p + openTag.length);
  const opens = occurrences(text, openTag).filter((p) => !insideRegion(p) && !closeCovers(p));
  const tags = [...opens.map((pos) => ({ pos, open: true })), ...closes.map((pos) => ({ pos, open: false }))].sort(
    (a, b) => a.pos - b.pos,
  );

  const spans: ThinkSpan[] = [];
  const items: Item[] = toolCalls.map((c) => ({ start: c.start, end: c.end, segment: c }));
  const stray = (pos: number, tag: string, note: string) =>
    items.push({ start: pos, end: pos + tag.length, segment: { kind: "marker", start: pos, end: pos + tag.length, text: tag, note } });
  let open: number | null = null;
  let seenClose = false;
  for (const tag of tags) {
    if (tag.open) {
      if (open === null) open = tag.pos;
      else stray(tag.pos, openTag, "nested opening thinking tag");
      continue;
    }
    const end = tag.pos + closeTag.length;
    const firstClose = !seenClose;
    seenClose = true;
    if (open !== null) {
      spans.push({ start: open, end, contentStart: open + openTag.length, contentEnd: tag.pos, openTag, closeTag });
      open = null;
    } else if (style === "closing_only" && firstClose && spans.length === 0) {
      // The generation prompt opened the block: everything before the first close tag is thinking.
      spans.push({ start: 0, end, contentStart: 0, contentEnd: tag.pos, openTag: null, closeTag });
    } else {
      stray(tag.pos, closeTag, "closing thinking tag without an opening one");
    }
  }
  if (open !== null) {
    spans.push({ start: open, end: text.length, contentStart: open + openTag.length, contentEnd: text.length, openTag, closeTag: null });
  }
  items.sort((a, b) => a.start - b.start);

  const inline = (from: number, to: number): InlineSegment[] => {
    const out: InlineSegment[] = [];
    let pos = from;
    for (const item of items) {
      if (item.start < from || item.start >= to) continue;
      out.push(...markerSegments(text, pos, item.start, [openTag, closeTag]));
      out.push(item.segment);
      pos = item.end;
    }
    out.push(...markerSegments(text, pos, to, [openTag, closeTag]));
    return out;
  };

  const segments: Segment[] = [];
  let pos = 0;
  for (const span of spans) {
    segments.push(...inline(pos, span.start));
    segments.push({ kind: "think", ...span, children: inline(span.contentStart, span.contentEnd) });
    pos = span.end;
  }
  segments.push(...inline(pos, text.length));

  return {
    segments,
    toolCalls,
    toolCallError: extraction.error,
    malformedThinking: detectMalformedThinking(text, [openTag, closeTag], style),
  };
}

/** The leaf segments in text order, think blocks' tags included as markers (for tests and flat renderings). */
export function leafSlices(segments: readonly Segment[], text: string): string[] {
  const out: string[] = [];
  for (const s of segments) {
    if (s.kind !== "think") {
      out.push(text.slice(s.start, s.end));
      continue;
    }
    if (s.contentStart > s.start) out.push(text.slice(s.start, s.contentStart));
    for (const c of s.children) out.push(text.slice(c.start, c.end));
    if (s.end > s.contentEnd) out.push(text.slice(s.contentEnd, s.end));
  }
  return out;
}

/**
 * The start of a long text for a collapsed view: its first `maxLines` lines, cut at `maxChars` characters too;
 * `hiddenLines` counts the lines left out (a cut line counts as hidden), `cut` says whether anything was.
 */
export function firstLines(text: string, maxLines: number, maxChars = Infinity): { head: string; hiddenLines: number; cut: boolean } {
  let end = text.length;
  let pos = -1;
  for (let i = 0; i < maxLines; i++) {
    pos = text.indexOf("\n", pos + 1);
    if (pos === -1) break;
  }
  if (pos !== -1 && pos + 1 < text.length) end = pos;
  if (end > maxChars) end = maxChars;
  if (end >= text.length) return { head: text, hiddenLines: 0, cut: false };
  const head = text.slice(0, end);
  const shownLines = head.split("\n").length - (text[end] === "\n" ? 0 : 1);
  return { head, hiddenLines: text.split("\n").length - shownLines, cut: true };
}
