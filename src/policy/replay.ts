/**
 * The replay policy: plays back the assistant turns of a saved run, matched by the sample's `idx`. The k-th
 * generation of a sample is the content of its k-th saved assistant message, with the same engine-like cut as
 * every text policy. Asking for more turns than were saved fails that sample with a generation error.
 */

import type { TokenizerInterface } from "../core/index.js";
import { TextPolicy } from "./text-policy.js";

export interface SavedSample {
  idx: number;
  message_log: { role: string; content: string; token_ids?: number[] }[];
}

export function replayPolicy(
  saved: readonly SavedSample[],
  sampleIdxs: readonly number[],
  tokenizer: TokenizerInterface,
): TextPolicy {
  const eosText = tokenizer.decode([tokenizer.eosTokenId]);
  // The saved tokens keep markers that a skipping decode dropped from `content`; the EOS is added back by the
  // engine-like cut, so a trailing one is removed here. Only tokens of this run's tokenizer say so: a run saved with
  // another (the page's byte-level run replayed with a real tokenizer, or the other way round) decodes to other
  // text here, or not at all, and its turns are their `content`, as saved.
  const turnText = (m: SavedSample["message_log"][number]) => {
    if (!m.token_ids) return m.content;
    const text = decodedIfSame(tokenizer, m.token_ids, m.content);
    if (text === null) return m.content;
    return text.endsWith(eosText) ? text.slice(0, -eosText.length) : text;
  };
  const turnsByIdx = new Map<number, string[]>();
  for (const sample of saved) {
    turnsByIdx.set(sample.idx, sample.message_log.filter((m) => m.role === "assistant").map(turnText));
  }
  return new TextPolicy(tokenizer, ({ sampleId, turn }) => {
    const idx = sampleIdxs[sampleId];
    const turns = idx === undefined ? undefined : turnsByIdx.get(idx);
    if (!turns) return new Error(`the saved run has no sample with idx ${idx}`);
    const text = turns[turn];
    if (text === undefined) {
      return new Error(`the saved run has ${turns.length} assistant turn(s) for idx ${idx}; turn ${turn + 1} asked for another`);
    }
    return text;
  });
}

/** The full text of `ids` when they are `content`'s tokens in `tokenizer` (decoded with or without special tokens). */
function decodedIfSame(tokenizer: TokenizerInterface, ids: readonly number[], content: string): string | null {
  try {
    const full = tokenizer.decode(ids);
    return full === content || tokenizer.decode(ids, { skipSpecialTokens: true }) === content ? full : null;
  } catch {
    return null; // an id outside this vocabulary
  }
}
