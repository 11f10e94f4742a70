/**
 * One training episode from one rollout sample: the whole final context as token ids (the messages' `token_ids`
 * concatenated, which is what the model policy is given each turn with the byte-level tokenizer) and a loss mask
 * with 1 on the tokens the policy generated. The oracle's mistakes stay in the context, so the model learns what
 * follows one (the environment's answer, then a recovery), but are marked 2, never learned: it should learn to
 * recover, not to err. So are a learner's turns, where a model wrote the turn in the oracle's place (`learner-mix.ts`);
 * those of them the environment found malformed (`turn-verdicts.ts`) are marked 3, the learner's slips, whose
 * likelihood a training stage may lower (training/train.py's `--negative-weight`). The rest (the prompt, the
 * environment's answers) is 0: context, which training may learn at a low weight (`--context-loss-weight`).
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
  /** Assistant turns, those of them that were the oracle's mistakes, and those a learner wrote (both masked out). */
  turns: number;
  mistakes: number[];
  learner_turns?: number[];
  /** The learner's turns the environment found malformed (marked 3). */
  learner_slips?: number[];
  ids: number[];
  /** One character per token: "1" the oracle's planned turns (learned), "2" its mistakes and a learner's well-formed turns (never learned), "3" a learner's malformed turns (its slips), "0" the context (the prompt, observations). */
  mask: string;
}

export function episodeFromSample(
  sample: ResultSample,
  mistakes: ReadonlySet<number>,
  where: Pick<TrainingEpisode, "env" | "split" | "dataset_seed">,
  learnerTurns: ReadonlySet<number> = new Set(),
  learnerSlips: ReadonlySet<number> = new Set(),
): TrainingEpisode {
  const ids: number[] = [];
  let mask = "";
  let turn = 0;
  for (const message of sample.message_log) {
    const mark =
      message.role !== "assistant" ? "0" : learnerSlips.has(turn) ? "3" : mistakes.has(turn) || learnerTurns.has(turn) ? "2" : "1";
    if (message.role === "assistant") turn++;
    for (const id of message.token_ids) ids.push(id);
    mask += mark.repeat(message.token_ids.length);
  }
  return {
    ...where,
    idx: sample.idx,
    total_reward: sample.total_reward,
    termination: sample.termination,
    turns: turn,
    mistakes: [...mistakes].sort((a, b) => a - b),
    ...(learnerTurns.size > 0 ? { learner_turns: [...learnerTurns].sort((a, b) => a - b) } : {}),
    ...(learnerSlips.size > 0 ? { learner_slips: [...learnerSlips].sort((a, b) => a - b) } : {}),
    ids,
    mask,
  };
}
