/**
 * Where each difference between the chat template's rendering and the decoded tokens lies in the log: which
 * message's tokens it falls in (or the template's glue between two messages), and whether it touches trained tokens.
 *
 * A difference inside a trained (generated) message matters for training: the policy is trained on tokens its chat
 * template would not produce. One in the prompt, an observation or between messages leaves the trained tokens as
 * generated, but changes the context the policy sees against the template's.
 */

import { diffText, type DiffHunk } from "./diff.js";
import { joinTokenTexts, type TokenTexts } from "./tokens.js";

/** What attribution needs of each message: its token count and whether its tokens are trained. */
export interface PlacedMessage {
  tokens: number;
  trained: boolean;
}

export interface RangePlace {
  /** The log positions of the decoded side's tokens, `[start, end)` (empty for text only the template has). */
  tokens: readonly [number, number];
  /**
   * `inside`: within the tokens of `messages` (one or more, in order); `between`: at the boundary of two messages
   * (`messages` holds the one before and the one after; either may be missing at the ends of the log).
   */
  where: "inside" | "between";
  messages: readonly number[];
  /** Some trained token is in it (or, for text only the template has, it falls among a trained message's tokens). */
  trained: boolean;
  /** The hunk as placed: the diff's, or the equivalent one slid to this place (the same texts, rotated). */
  hunk: DiffHunk;
}

/** How far a one-sided hunk is slid to find its least harmful equivalent place. */
const MAX_SLIDE = 256;

/**
 * Each hunk's place on the decoded side, or null when the decoded text is not the tokens' texts joined (a tokenizer
 * whose decode differs from its tokens: nothing to map characters back to tokens with).
 *
 * A hunk with one side empty can often slide (an insertion of `\n<|im_start|>` after a `\n` is one before it): the
 * diff picks one of its equivalent places arbitrarily, so each is tried and the one touching the fewest trained
 * tokens is reported (between messages before inside one).
 */
export function placeHunks(
  messages: readonly PlacedMessage[],
  ids: ArrayLike<number>,
  tokenizer: Pick<TokenTexts, "tokenText">,
  template: string,
  decoded: string,
  hunks: readonly DiffHunk[],
): RangePlace[] | null {
  const { text, starts } = joinTokenTexts(ids, tokenizer);
  if (text !== decoded) return null;
  const firstToken: number[] = [];
  let total = 0;
  for (const m of messages) {
    firstToken.push(total);
    total += m.tokens;
  }
  if (total !== ids.length) return null;
  const messageOf = (token: number) => upperBound(firstToken, token) - 1;
  // The token whose text holds character `c` (the last of those starting at or before it: empty spans are skipped).
  const tokenAtChar = (c: number) => upperBound(starts, c, ids.length) - 1;

  const place = (h: DiffHunk): RangePlace => {
    if (h.bStart < h.bEnd) {
      const t0 = tokenAtChar(h.bStart);
      const t1 = tokenAtChar(h.bEnd - 1);
      const m0 = messageOf(t0);
      const m1 = messageOf(t1);
      const touched = range(m0, m1 + 1);
      return { tokens: [t0, t1 + 1], where: "inside", messages: touched, trained: touched.some((m) => messages[m]!.trained), hunk: h };
    }
    // Text only the template has, at character p of the decoded text: between two tokens, or inside one.
    const p = h.bStart;
    const after = p < decoded.length ? tokenAtChar(p) : ids.length;
    const before = p > 0 ? tokenAtChar(p - 1) : -1;
    if (before === after) {
      const m = messageOf(after);
      return { tokens: [after, after], where: "inside", messages: [m], trained: messages[m]!.trained, hunk: h };
    }
    const mb = before >= 0 ? messageOf(before) : null;
    const ma = after < ids.length ? messageOf(after) : null;
    if (mb !== null && mb === ma) return { tokens: [after, after], where: "inside", messages: [mb], trained: messages[mb]!.trained, hunk: h };
    return { tokens: [after, after], where: "between", messages: [mb, ma].filter((m): m is number => m !== null), trained: false, hunk: h };
  };

  const placeSliding = (h: DiffHunk): RangePlace => {
    let best = place(h);
    const better = (c: RangePlace) => c.trained < best.trained || (c.trained === best.trained && c.where === "between" && best.where !== "between");
    for (const slid of slides(h, template, decoded)) {
      if (!best.trained && best.where === "between") break;
      const c = place(slid);
      if (better(c)) best = c;
    }
    return best;
  };

  return hunks.map((h) => {
    // A shown hunk may be several joined for readability ("…ok…" for "ok": the equal text between them is in it):
    // each is placed on its own, so equal text is never counted as changed.
    const parts = unmerged(h, template, decoded).map(placeSliding);
    if (parts.length === 1) return parts[0]!;
    const touched = [...new Set(parts.flatMap((p) => p.messages))].sort((x, y) => x - y);
    return {
      tokens: [Math.min(...parts.map((p) => p.tokens[0])), Math.max(...parts.map((p) => p.tokens[1]))] as const,
      where: parts.every((p) => p.where === "between") ? "between" : "inside",
      messages: touched,
      trained: parts.some((p) => p.trained),
      hunk: h,
    };
  });
}

/** A hunk as the diff's unmerged hunks it is made of (itself when it is one). */
function unmerged(h: DiffHunk, a: string, b: string): DiffHunk[] {
  if (h.aStart === h.aEnd || h.bStart === h.bEnd) return [h];
  const inner = diffText(a.slice(h.aStart, h.aEnd), b.slice(h.bStart, h.bEnd), { mergeGap: 0 });
  if (inner.equal || inner.hunks.length === 0) return [h];
  return inner.hunks.map((x) => ({ aStart: h.aStart + x.aStart, aEnd: h.aStart + x.aEnd, bStart: h.bStart + x.bStart, bEnd: h.bStart + x.bEnd }));
}

/**
 * The equivalent places of a hunk with one side empty (none for a replacement): its text slid back or forth while
 * the character it gives up equals the one it takes, on both sides (so the two texts still align around it).
 */
function slides(h: DiffHunk, a: string, b: string): DiffHunk[] {
  const out: DiffHunk[] = [];
  const aOnly = h.bStart === h.bEnd && h.aStart < h.aEnd;
  const bOnly = h.aStart === h.aEnd && h.bStart < h.bEnd;
  if (!aOnly && !bOnly) return out;
  const [text, s0, e0, otherText, o0] = aOnly ? [a, h.aStart, h.aEnd, b, h.bStart] : [b, h.bStart, h.bEnd, a, h.aStart];
  const at = (k: number): DiffHunk =>
    aOnly ? { aStart: s0 + k, aEnd: e0 + k, bStart: o0 + k, bEnd: o0 + k } : { aStart: o0 + k, aEnd: o0 + k, bStart: s0 + k, bEnd: e0 + k };
  for (let k = 1; k <= MAX_SLIDE && s0 - k >= 0 && o0 - k >= 0; k++) {
    if (text[s0 - k] !== text[e0 - k] || text[s0 - k] !== otherText[o0 - k]) break;
    out.push(at(-k));
  }
  for (let k = 0; k < MAX_SLIDE && e0 + k < text.length && o0 + k < otherText.length; k++) {
    if (text[s0 + k] !== text[e0 + k] || text[e0 + k] !== otherText[o0 + k]) break;
    out.push(at(k + 1));
  }
  return out;
}

/** The first index in `sorted[0, n)` whose value is above `x`. */
function upperBound(sorted: ArrayLike<number>, x: number, n = sorted.length): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);

/** The verdict's counts: how many ranges touch trained tokens, and the trained messages they touch. */
export function trainedSummary(places: readonly RangePlace[], messages: readonly PlacedMessage[]): { touching: number; messages: number[] } {
  const touched = new Set<number>();
  let touching = 0;
  for (const p of places) {
    if (!p.trained) continue;
    touching += 1;
    for (const m of p.messages) if (messages[m]?.trained) touched.add(m);
  }
  return { touching, messages: [...touched].sort((x, y) => x - y) };
}
