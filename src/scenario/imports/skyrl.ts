/**
 * SkyRL's evaluation dumps, as `dump_per_dataset_eval_results` writes them (NovaSky-AI/SkyRL
 * `skyrl/train/utils/trainer_utils.py`, called from `skyrl/train/evaluate.py` when `trainer.dump_eval_results` is set):
 * `{export_path}/dumped_evals/global_step_{N}_evals/{data_source}.jsonl` (`eval_only/` for an evaluation alone), one
 * line per generated trajectory, `json.dumps(..., ensure_ascii=False)`:
 *
 * - `input_prompt`: the prompt's token ids decoded (`tokenizer.decode(prompt_token_ids)`: the chat template and its
 *   special tokens in the text), `output_response`: the response's token ids decoded the same way;
 * - `score`: the trajectory's reward (`GeneratorOutput.rewards[i]`: a number, or one per response token for token-level
 *   rewards, whose sum is the sample's reward);
 * - `stop_reason`: the engine's (`stop`, `length`, …; null when the generator gave none);
 * - `env_class`, `env_extras` (the dataset row's extras: `reward_spec`, …), `data_source`.
 *
 * The same folder's `aggregated_results.jsonl` holds one line of evaluation metrics, no trajectory; it is not read.
 * The prompt is one user message and the response one assistant message, without token ids (the dump has only the
 * decoded texts). The stop reason is the termination and is kept as written; every field but the two texts and the
 * score is kept (`imported.fields`; a per-token score is kept too). The task name is the env class; the idx the
 * line's position.
 */

import { RecordProblem, type ConvertedSample, type DumpFormat, type RecordSource } from "./types.js";
import { isNumberRow } from "./values.js";


function convert(record: Record<string, unknown>, source: RecordSource): ConvertedSample {
  const { input_prompt: prompt, output_response: response, score, stop_reason: stop, env_class: env } = record;
  if (typeof prompt !== "string") throw new RecordProblem("input_prompt", "expected the decoded prompt (a string), as dump_per_dataset_eval_results writes it");
  if (typeof response !== "string") throw new RecordProblem("output_response", "expected the decoded response (a string), as dump_per_dataset_eval_results writes it");
  let reward: number | null = null;
  if (typeof score === "number") reward = score;
  else if (isNumberRow(score)) reward = score.reduce((a, b) => a + b, 0);
  else if (score !== undefined && score !== null) throw new RecordProblem("score", "expected the trajectory's reward (a number, or a list of per-token rewards)");
  if (stop !== undefined && stop !== null && typeof stop !== "string") throw new RecordProblem("stop_reason", "expected the engine's stop reason (a string or null)");
  if (env !== undefined && env !== null && typeof env !== "string") throw new RecordProblem("env_class", "expected the environment's class name (a string)");
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    if (key === "input_prompt" || key === "output_response") continue;
    if (key === "score" && typeof value === "number") continue;
    fields[key] = value;
  }
  return {
    idx: source.position,
    task_name: typeof env === "string" ? env : "skyrl",
    message_log: [
      { role: "user", content: prompt, token_ids: [] },
      { role: "assistant", content: response, token_ids: [] },
    ],
    total_reward: reward,
    termination: typeof stop === "string" ? stop : null,
    imported: { format: "skyrl", fields },
  };
}

export const skyrlFormat: DumpFormat = {
  name: "skyrl",
  title: "SkyRL dumped_evals/…/{data_source}.jsonl (dump_per_dataset_eval_results)",
  detect: (r) => typeof r.input_prompt === "string" && typeof r.output_response === "string",
  convert,
};
