/**
 * Full-text search across a run: every message of every sample, case-insensitive words or a /regex/ (as the
 * filter's `~`). Pure (no React) so the page can run it off the keystroke and the bench can time it at 100k samples.
 */

import type { SampleView } from "./run-model.js";

export interface SearchHit {
  sample: number;
  message: number;
  /** The turn whose assistant or observation message this is; null for prompt messages. */
  turn: number | null;
  role: string;
  /** Character offsets of the first match in the message. */
  start: number;
  end: number;
}

export interface SearchResult {
  /** The first `limit` hits (one per matching message), in sample and message order. */
  hits: SearchHit[];
  /** All matching messages, counted past the limit. */
  total: number;
  samples: number;
  error: string | null;
}

export type SearchPattern = { regex: RegExp } | { needle: string };

/** "/body/flags" as a regex (global, so every match can be marked), else the lower-cased words; null when empty. */
export function parseSearch(text: string): SearchPattern | { error: string } | null {
  const trimmed = text.trim();
  if (!trimmed) return null;
  const m = /^\/(.+)\/([a-z]*)$/.exec(trimmed);
  if (m) {
    try {
      const flags = m[2]!.includes("g") ? m[2]! : m[2]! + "g";
      return { regex: new RegExp(m[1]!, flags) };
    } catch (e) {
      return { error: `not a regular expression: ${(e as Error).message}` };
    }
  }
  return { needle: trimmed.toLowerCase() };
}

/** Every match's [start, end) in a text (empty matches skipped, so a pattern such as x* cannot loop). */
export function matchRanges(text: string, pattern: SearchPattern, max = 1000): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  if ("regex" in pattern) {
    const re = pattern.regex;
    re.lastIndex = 0;
    let m: RegExpExecArray | null;
    while (ranges.length < max && (m = re.exec(text))) {
      if (m[0].length === 0) {
        re.lastIndex++;
        continue;
      }
      ranges.push([m.index, m.index + m[0].length]);
    }
    return ranges;
  }
  const lower = text.toLowerCase();
  let at = lower.indexOf(pattern.needle);
  while (at >= 0 && ranges.length < max) {
    ranges.push([at, at + pattern.needle.length]);
    at = lower.indexOf(pattern.needle, at + pattern.needle.length);
  }
  return ranges;
}

function turnOfMessage(s: SampleView, message: number): number | null {
  for (let t = 0; t < s.turns.length; t++) {
    const turn = s.turns[t];
    if (turn && (turn.assistantIndex === message || turn.observationIndex === message)) return t;
  }
  return null;
}

/** Searches every message's content; hits beyond `limit` are counted, not kept. */
export function searchRun(samples: readonly SampleView[], text: string, limit = 200): SearchResult {
  const pattern = parseSearch(text);
  if (pattern === null) return { hits: [], total: 0, samples: 0, error: null };
  if ("error" in pattern) return { hits: [], total: 0, samples: 0, error: pattern.error };
  const hits: SearchHit[] = [];
  let total = 0;
  let matchedSamples = 0;
  for (const s of samples) {
    let found = false;
    for (let i = 0; i < s.messages.length; i++) {
      const content = s.messages[i]!.content;
      if (typeof content !== "string" || !content) continue;
      const first = matchRanges(content, pattern, 1)[0];
      if (!first) continue;
      total++;
      found = true;
      if (hits.length < limit) hits.push({ sample: s.sample, message: i, turn: turnOfMessage(s, i), role: s.messages[i]!.role, start: first[0], end: first[1] });
    }
    if (found) matchedSamples++;
  }
  return { hits, total, samples: matchedSamples, error: null };
}

/** A snippet around a hit: `before`, the match, `after` (shown as text, the match in a <mark>). */
export function hitSnippet(content: string, hit: Pick<SearchHit, "start" | "end">, context = 40): { before: string; match: string; after: string } {
  const from = Math.max(0, hit.start - context);
  const to = Math.min(content.length, hit.end + context);
  return {
    before: (from > 0 ? "…" : "") + content.slice(from, hit.start).replace(/\s+/g, " "),
    match: content.slice(hit.start, hit.end),
    after: content.slice(hit.end, to).replace(/\s+/g, " ") + (to < content.length ? "…" : ""),
  };
}
