/**
 * verl's rollout dumps, `{rollout_data_dir}/{global_step}.jsonl` (and the validation ones), as
 * `RayPPOTrainer._dump_generations` writes them (verl-project/verl `verl/trainer/ppo/ray_trainer.py`): one line per
 * sample, `{"input": <decoded prompt>, "output": <decoded response>, "gts": <ground truth>, "score": <reward>,
 * "step": <global step>}` plus each of the reward function's extra keys (`reward_extra_infos_dict`: `acc`, `pred`, …)
 * and, in newer versions, the sample's identities (`uid`, `request_id`). The texts are decoded with special tokens
 * skipped, so the prompt is one user message and the response one assistant message, without token ids. Every field
 * but `input`, `output` and `score` is kept (`imported.fields`).
 */

import { RecordProblem, type ConvertedSample, type DumpFormat, type RecordSource } from "./types.js";

function convert(record: Record<string, unknown>, source: RecordSource): ConvertedSample {
  const { input, output, score } = record;
  if (typeof input !== "string") throw new RecordProblem("input", "expected the decoded prompt (a string), as verl's _dump_generations writes it");
  if (typeof output !== "string") throw new RecordProblem("output", "expected the decoded response (a string), as verl's _dump_generations writes it");
  if (score !== undefined && score !== null && typeof score !== "number") throw new RecordProblem("score", "expected the sample's reward (a number)");
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) if (key !== "input" && key !== "output" && key !== "score") fields[key] = value;
  const task = typeof record.data_source === "string" ? record.data_source : "verl";
  return {
    idx: source.position,
    task_name: task,
    message_log: [
      { role: "user", content: input, token_ids: [] },
      { role: "assistant", content: output, token_ids: [] },
    ],
    total_reward: typeof score === "number" ? score : null,
    termination: null,
    imported: { format: "verl", fields },
  };
}

export const verlFormat: DumpFormat = {
  name: "verl",
  title: "verl {rollout_data_dir}/{step}.jsonl (RayPPOTrainer._dump_generations)",
  detect: (r) => typeof r.input === "string" && typeof r.output === "string" && ("score" in r || "step" in r),
  convert,
};
