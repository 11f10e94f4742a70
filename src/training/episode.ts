/**
 * One training episode from one rollout sample: the whole final context as token ids (the messages' `token_ids`
 * concatenated, which is what the model policy is given each turn with the byte-level tokenizer) and a loss mask
 * with 1 on the tokens the policy generated. The oracle's mistakes stay in the context, so the model learns what
 * follows one (the environment's answer, then a recovery), but are masked out: it should learn to recover, not to err.
 */

import type { ResultSample } from "../scenario/result.js";
import type { Split } from "./plan.js";

export interface TrainingEpisode {
  env: string;
  split: Split;
  dataset_seed: number;
  idx: number;
  total_reward: number;
  termination: string;
  /** Assistant turns, and those of them that were mistakes (masked out). */
  turns: number;
  mistakes: number[];
  ids: number[];
  /** One character per token: "1" where the loss applies, "0" elsewhere (the prompt, observations, mistakes). */
  mask: string;
}

export function episodeFromSample(
  sample: ResultSample,
  mistakes: ReadonlySet<number>,
  where: Pick<TrainingEpisode, "env" | "split" | "dataset_seed">,
): TrainingEpisode {
  const ids: number[] = [];
  let mask = "";
  let turn = 0;
  for (const message of sample.message_log) {
    const learned = message.role === "assistant" && !mistakes.has(turn);
    if (message.role === "assistant") turn++;
    for (const id of message.token_ids) ids.push(id);
    mask += (learned ? "1" : "0").repeat(message.token_ids.length);
  }
  return {
    ...where,
    idx: sample.idx,
    total_reward: sample.total_reward,
    termination: sample.termination,
    turns: turn,
    mistakes: [...mistakes].sort((a, b) => a - b),
    ids,
    mask,
  };
}
