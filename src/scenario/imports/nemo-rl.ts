/**
 * NeMo RL's per-step dumps, as `Logger.log_batched_dict_as_jsonl` writes them (NVIDIA-NeMo/RL
 * `nemo_rl/utils/logger.py`): one line per sample of a `BatchedDataDict` sliced one sample at a time
 * (`make_microbatch_iterator(1)`), tensors `.tolist()`ed, so every field is a one-element list, then `"idx": i`.
 *
 * - `train_data_step{N}.jsonl` (`nemo_rl/algorithms/grpo.py`, the training loop's "Log training data"): `content`
 *   (the flat message contents, `batched_message_log_to_flat_message(...)["content"]`: one string per message, no
 *   roles), `rewards`, `filtered_rewards` (dynamic sampling), `input_lengths`, `token_ids` (the padded input ids),
 *   `token_loss_mask`, `sample_loss_mask`, `advantages`, `generation_logprobs`, `prev_logprobs`, `agent_ref` (NeMo Gym).
 *   Older versions wrote fewer of them.
 * - `val_data_step{N}.jsonl` (`validate`): `content` (the message logs reduced to `role` and `content`), `rewards`.
 *
 * - `train_data_step{N}.jsonl` of SFT and distillation (`sft.py`, `distillation.py`): `content` and `input_lengths`
 *   alone (no rewards).
 *
 * A train line's messages get their roles and tokens from the loss mask when they line up (a run of trained tokens
 * is an assistant message; untrained runs are the prompt, then observations; a prompt of several messages, a system
 * prompt before the user's, shares the first run); else the roles alternate as a
 * multi-turn rollout's do (prompt, assistant, environment, …), said in the kept field `roles`, and the token row is
 * kept whole. Every field not mapped is kept (`imported.fields`), per-token rows cut to the sample's length.
 */

import { RecordProblem, type ConvertedSample, type DumpFormat, type RecordSource } from "./types.js";
import { isNumberRow } from "./values.js";

/** The value of a one-sample slice: its only element. */
function one(record: Record<string, unknown>, key: string): unknown {
  const v = record[key];
  return Array.isArray(v) && v.length === 1 ? v[0] : v;
}


function numberRow(record: Record<string, unknown>, key: string): number[] | null {
  if (!(key in record)) return null;
  const v = one(record, key);
  if (!isNumberRow(v)) throw new RecordProblem(key, `expected [[numbers]] (a one-sample slice of a [B, S] tensor), as log_batched_dict_as_jsonl writes ${key}`);
  return v;
}

function scalar(record: Record<string, unknown>, key: string): number | null {
  if (!(key in record)) return null;
  const v = one(record, key);
  if (typeof v !== "number") throw new RecordProblem(key, `expected [number] (a one-sample slice), got ${JSON.stringify(record[key])?.slice(0, 80)}`);
  return v;
}

/** The runs of equal mask values over the first `length` tokens: [start, end, trained]. */
function maskRuns(mask: readonly number[], length: number): [number, number, boolean][] {
  const runs: [number, number, boolean][] = [];
  for (let i = 0; i < length; i++) {
    const trained = mask[i] !== 0;
    const last = runs.at(-1);
    if (last && last[2] === trained) last[1] = i + 1;
    else runs.push([i, i + 1, trained]);
  }
  return runs;
}

/** A message's role as its rendered chat template opens it (ChatML, Llama 3), if it does. */
function templateRole(text: string): string | null {
  const header = /^<\|im_start\|>(\w+)\n/.exec(text) ?? /^(?:<\|begin_of_text\|>)?<\|start_header_id\|>(\w+)<\|end_header_id\|>/.exec(text);
  return header ? header[1]! : null;
}

/** Roles as a multi-turn rollout's message log has them: the prompt, then assistant and environment turns. */
const alternatingRole = (i: number) => (i === 0 ? "user" : i % 2 === 1 ? "assistant" : "environment");

const MAPPED = new Set(["content", "rewards", "idx", "token_ids", "generation_logprobs"]);

function convert(record: Record<string, unknown>, source: RecordSource): ConvertedSample {
  const content = one(record, "content");
  if (!Array.isArray(content)) throw new RecordProblem("content", "expected [[message contents]] or [[{role, content}]], as NeMo RL's train/val data have it");
  const idx = typeof record.idx === "number" && Number.isInteger(record.idx) ? record.idx : source.position;
  const reward = scalar(record, "rewards");
  const fields: Record<string, unknown> = {};
  const step = /(?:train|val)_data_step(\d+)\.jsonl$/.exec(source.fileName ?? "");
  if (step) fields.step = Number(step[1]);
  const agent = one(record, "agent_ref");
  const taskName = agent && typeof agent === "object" && typeof (agent as { name?: unknown }).name === "string" ? (agent as { name: string }).name : "nemo_rl";

  // val_data: the message logs with their roles.
  if (content.every((m) => m && typeof m === "object" && !Array.isArray(m))) {
    const messages = content.map((m, i) => {
      const { role, content: text } = m as { role?: unknown; content?: unknown };
      if (typeof role !== "string" || typeof text !== "string") throw new RecordProblem(`content[0][${i}]`, "expected {role, content} with two strings");
      return { role, content: text, token_ids: [] as number[] };
    });
    keepRest(record, fields, null);
    return { idx, task_name: taskName, message_log: messages, total_reward: reward, termination: null, imported: { format: "nemo-rl", fields } };
  }
  if (!content.every((m) => typeof m === "string")) throw new RecordProblem("content[0]", "expected a list of message contents (strings) or of {role, content}");

  // train_data: contents without roles, and the tokens of the whole sequence.
  const length = scalar(record, "input_lengths");
  const ids = numberRow(record, "token_ids");
  const mask = numberRow(record, "token_loss_mask");
  const logprobs = numberRow(record, "generation_logprobs");
  const n = length ?? ids?.length ?? 0;
  const runs = mask && ids ? maskRuns(mask, Math.min(n, mask.length)) : null;
  // A prompt of several messages (a system prompt before the user's, as NeMo RL's math processor writes it) is one
  // untrained run: the messages beyond the runs are the prompt's first ones.
  const extra = runs ? content.length - runs.length : -1;
  const aligned = runs !== null && extra >= 0 && runs[0]?.[2] === false && ids!.length >= n;
  const messages = (content as string[]).map((text, i) => {
    if (!aligned) return { role: alternatingRole(i), content: text, token_ids: [] as number[] };
    if (i < extra) return { role: templateRole(text) ?? "system", content: text, token_ids: [] as number[] };
    const [start, end, trained] = runs![i - extra]!;
    // A prompt of one message is the user's, whatever its rendering opens with (often the system prompt).
    const role = trained ? "assistant" : i === extra ? ((extra > 0 && templateRole(text)) || "user") : "environment";
    return {
      role,
      content: text,
      token_ids: ids!.slice(start, end),
      ...(trained && logprobs ? { generation_logprobs: logprobs.slice(start, end) } : {}),
    };
  });
  if (aligned && extra > 0) {
    fields.roles = `inferred: the prompt's untrained run holds its first ${extra + 1} messages (their tokens are on the last of them); roles from their chat-template headers, else system before user`;
  }
  if (!aligned) {
    fields.roles = "inferred: prompt, then assistant and environment turns alternating (the loss mask did not line up with the messages)";
    if (ids) fields.token_ids = ids.slice(0, n);
    if (logprobs) fields.generation_logprobs = logprobs.slice(0, n);
  }
  keepRest(record, fields, n);
  return { idx, task_name: taskName, message_log: messages, total_reward: reward, termination: null, imported: { format: "nemo-rl", fields } };
}

/** Every field not mapped, as written (one-sample slices unwrapped; per-token rows cut to the sample's length). */
function keepRest(record: Record<string, unknown>, fields: Record<string, unknown>, length: number | null): void {
  for (const key of Object.keys(record)) {
    if (MAPPED.has(key)) continue;
    const v = one(record, key);
    fields[key] = length !== null && isNumberRow(v) && v.length > length ? v.slice(0, length) : v;
  }
}

export const nemoRlFormat: DumpFormat = {
  name: "nemo-rl",
  title: "NeMo RL train_data_step{N}.jsonl / val_data_step{N}.jsonl (log_batched_dict_as_jsonl)",
  // RL and evaluation dumps carry `rewards`; SFT's and distillation's carry only `content` and `input_lengths`.
  detect: (r) => Array.isArray(r.content) && (Array.isArray(r.rewards) || (Array.isArray(r.input_lengths) && Array.isArray(r.content[0]))) && !("message_log" in r),
  convert,
};
