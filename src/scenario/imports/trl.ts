/**
 * TRL's GRPO completion logs, as `GRPOTrainer.log` writes them when `log_completions` is set (huggingface/trl
 * `trl/trainer/grpo_trainer.py`: the table built from `self._logs`, written with pandas' `DataFrame.to_parquet`):
 * `{output_dir}/completions/completions_{global_step:05d}.parquet`, one row per completion of the latest generation
 * batch. Parquet, not JSONL: its rows are read by ./parquet.ts (hyparquet) and checked here one by one. Columns:
 *
 * - `step`: the trainer's global step (the same on every row);
 * - `prompt`: the prompt's token ids decoded (`batch_decode(prompt_ids, skip_special_tokens=True)`: the chat template's
 *   text without its special tokens); `completion`: the completion's, decoded the same way. Older TRL versions logged
 *   a conversational dataset's prompt and completion as lists of chat messages (`{role, content}`): read too;
 * - one column per reward function, named by `reward_func_names` (a function's `__name__`, a reward model's name),
 *   the function's reward for that completion (NaN / null where the function did not apply);
 * - the columns a reward function added with `log_extra` (any type), then `advantage` (the group-relative advantage).
 *
 * The file has no total reward and no reward weights: TRL's own is `nansum(rewards_per_func * reward_weights)`, so the
 * total here is a `reward` column where the file has a number there, else the plain sum of the reward columns (the
 * weights taken as 1, the default), NaN and null skipped. A reward column is any other column holding a number or
 * null: a numeric `log_extra` column cannot be told apart from one and is summed too. Every column but the two texts
 * is kept (`imported.fields`: each reward function's, `step`, `advantage`, the extras). No token ids (the file has
 * none). The task name is "trl"; the idx the row's position.
 */

import { RecordProblem, type ConvertedSample, type DumpFormat, type RecordSource } from "./types.js";
import { isObj } from "./values.js";

/** Columns that are no reward function's. pandas writes a non-default index as `__index_level_0__`. */
const NOT_REWARDS = new Set(["step", "prompt", "completion", "advantage", "reward", "image", "images", "__index_level_0__"]);

type Message = ConvertedSample["message_log"][number];

/** A column's text, or its chat messages with their roles (`defaultRole` for a plain text). */
function messages(value: unknown, column: string, defaultRole: string): Message[] {
  if (typeof value === "string") return [{ role: defaultRole, content: value, token_ids: [] }];
  if (Array.isArray(value)) {
    return value.map((m, i) => {
      if (!isObj(m) || typeof m.role !== "string") throw new RecordProblem(`${column}[${i}]`, "expected a chat message ({role, content})");
      const content = m.content ?? "";
      if (typeof content !== "string") throw new RecordProblem(`${column}[${i}].content`, "expected the message's text (a string)");
      return { role: m.role, content, token_ids: [] };
    });
  }
  throw new RecordProblem(column, `expected the decoded ${column} (a string) or a list of chat messages, as GRPOTrainer logs it`);
}

function convert(record: Record<string, unknown>, source: RecordSource): ConvertedSample {
  const { step, advantage, reward } = record;
  if (step !== undefined && step !== null && !Number.isInteger(step)) throw new RecordProblem("step", "expected the trainer's global step (an integer)");
  if (advantage !== undefined && advantage !== null && typeof advantage !== "number") throw new RecordProblem("advantage", "expected the completion's advantage (a number)");
  const prompt = messages(record.prompt, "prompt", "user");
  const completion = messages(record.completion, "completion", "assistant");
  const fields: Record<string, unknown> = {};
  let sum = 0;
  let rewardColumns = 0;
  for (const [key, value] of Object.entries(record)) {
    if (key === "prompt" || key === "completion") continue;
    fields[key] = value;
    if (NOT_REWARDS.has(key)) continue;
    if (value === null || typeof value === "number") {
      rewardColumns += 1;
      // nansum: a function that did not apply to this completion adds nothing.
      if (typeof value === "number" && !Number.isNaN(value)) sum += value;
    }
  }
  const total = typeof reward === "number" && !Number.isNaN(reward) ? reward : rewardColumns > 0 ? sum : null;
  return {
    idx: source.position,
    task_name: "trl",
    message_log: [...prompt, ...completion],
    total_reward: total,
    termination: null,
    imported: { format: "trl", fields },
  };
}

const isText = (v: unknown) => typeof v === "string" || Array.isArray(v);

export const trlFormat: DumpFormat = {
  name: "trl",
  title: "TRL completions/completions_{step}.parquet (GRPOTrainer log_completions)",
  // verifiers' RolloutOutput has prompt and completion too, with its `example_id`.
  detect: (r) => isText(r.prompt) && isText(r.completion) && "step" in r && !("example_id" in r) && !("message_log" in r),
  convert,
};
