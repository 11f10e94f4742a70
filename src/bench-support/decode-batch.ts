/**
 * Decode throughput at a batch size (benchmark 8's part `decode`, issue 20 (d): batch 32 against batch 1): one call
 * of `batch` rows to the model policy on its decode engine, each row a distinct prompt of `promptTokens` tokens,
 * greedy, generating exactly `newTokens` tokens (through EOS). The figure is generated tokens per second of the
 * engine's decode passes alone (its `decodeMs`), so the prefill of the prompts, which grows with the batch, does not
 * enter it; the call's wall time is reported beside it.
 */

import { buildGenerationInput, type MessageLog } from "../core/index.js";
import { ModelPolicy } from "../policy/llm/model-policy.js";
import type { LoadedModel } from "./model-rollout.js";
import { round } from "./common.js";

export interface DecodeBatchRecord {
  batch: number;
  round: number;
  prompt_tokens: number;
  new_tokens: number;
  /** Milliseconds in decode passes (the engine's `decodeMs`), and of the whole call. */
  decode_ms: number;
  wall_ms: number;
  /** Tokens the decode passes generated (each row's first token comes from its prefill) ÷ decode seconds. */
  decode_tokens_per_s: number;
  decode_steps: number;
}

const FILLER = "Slide the tile next to the blank square; the board reads 1 2 3 / 4 _ 6 / 7 5 8 and the goal is 1 2 3 / 4 5 6 / 7 8 _. ";

/** Row `i`'s prompt: its own opening, then the filler, cut to exactly `length` tokens. */
function promptIds(policy: ModelPolicy, i: number, length: number): number[] {
  const ids = policy.tokenizer.encode(`Sample ${i}. `);
  const filler = policy.tokenizer.encode(FILLER);
  while (ids.length < length) ids.push(...filler);
  return ids.slice(0, length);
}

export async function measureDecodeBatch(
  loaded: LoadedModel,
  batch: number,
  promptTokens: number,
  newTokens: number,
  roundIndex = 0,
): Promise<DecodeBatchRecord> {
  const policy = new ModelPolicy(loaded.runtime, loaded.model, loaded.tokenizer, { ignoreEos: true });
  try {
    const logs: MessageLog[] = Array.from({ length: batch }, (_, i) => {
      const ids = promptIds(policy, i, promptTokens);
      return [{ role: "user", content: policy.tokenizer.decode(ids), token_ids: ids }];
    });
    const data = buildGenerationInput(
      logs,
      logs.map(() => null),
      { padTokenId: policy.tokenizer.padTokenId, maxSeqLen: promptTokens + newTokens, maxNewTokens: newTokens },
    );
    if (!policy.engineStats) throw new Error("the decode benchmark needs the decode engine, which cannot drive this model");
    const before = { ...policy.engineStats };
    const started = performance.now();
    const out = await policy.generate(data, true);
    const wall = performance.now() - started;
    const after = policy.engineStats!;
    const generated = out.unpadded_sequence_lengths.reduce((sum, n, row) => sum + n - data.input_lengths[row]!, 0);
    if (generated !== batch * newTokens) throw new Error(`decode batch ${batch}: generated ${generated} tokens, expected ${batch * newTokens}`);
    const decodeMs = after.decodeMs - before.decodeMs;
    return {
      batch,
      round: roundIndex,
      prompt_tokens: promptTokens,
      new_tokens: newTokens,
      decode_ms: round(decodeMs, 1),
      wall_ms: round(wall, 1),
      decode_tokens_per_s: round((after.stepRows - before.stepRows) / (decodeMs / 1000), 1),
      decode_steps: after.decodeSteps - before.decodeSteps,
    };
  } finally {
    await policy.dispose();
  }
}
