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

/**
 * The prompt's part of a rollout's `uid` where verl's newer trainer writes its transfer-queue key,
 * `{prompt uid}_{session}_{index}` (verl/experimental/agent_loop: one per rollout, so it groups nothing); verl's
 * classic `uid` (a uuid shared by a prompt's rollouts) has no such suffix and is a group id as it is.
 */
function promptUid(uid: unknown): string | null {
  if (typeof uid !== "string") return null;
  const parts = uid.split("_");
  return parts.length >= 3 && /^\d+$/.test(parts.at(-1)!) && parts.slice(0, -2).join("_") !== "" ? parts.slice(0, -2).join("_") : null;
}

function convert(record: Record<string, unknown>, source: RecordSource): ConvertedSample {
  const { input, output, score } = record;
  if (typeof input !== "string") throw new RecordProblem("input", "expected the decoded prompt (a string), as verl's _dump_generations writes it");
  if (typeof output !== "string") throw new RecordProblem("output", "expected the decoded response (a string), as verl's _dump_generations writes it");
  if (score !== undefined && score !== null && typeof score !== "number") throw new RecordProblem("score", "expected the sample's reward (a number)");
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) if (key !== "input" && key !== "output" && key !== "score") fields[key] = value;
  const prompt = promptUid(record.uid);
  if (prompt !== null) fields.prompt_uid = prompt;
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
