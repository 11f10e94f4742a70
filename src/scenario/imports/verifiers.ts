/**
 * verifiers / prime-rl rollout files, two generations of them:
 *
 * - `traces.jsonl`, one `Episode` a line (PrimeIntellect-ai/verifiers `verifiers/v1/episode.py`): written by the
 *   verifiers v1 eval CLI (`verifiers/v1/cli/output.py` `write_episode`: the episode's `dump_json(exclude_none=True)`)
 *   and by prime-rl's file monitor (PrimeIntellect-ai/prime-rl `src/prime_rl/monitors/file.py`
 *   `FileMonitor.log_episodes`, `rollouts/step_{N}/{kind}/{subset}/traces.jsonl`: `Episode.to_record()`, the same
 *   without the nodes' tensor fields). An episode: `id`, `env` {id, name}, `task` {type, data, key, hash}, `group`,
 *   `run`, `ok`, `errors` [{type, message, status_code, traceback}], `traces`. A trace (`verifiers/v1/trace.py`
 *   `Trace`): `version`, `id`, `verifiers`, `task`, `agent`, `tools`, `nodes` (the message graph: `MessageNode`,
 *   `verifiers/v1/graph.py`: `parent`, `message` {role, content, reasoning_content, tool_calls, tool_call_id, …},
 *   `sampled`, `timestamp`, `token_ids` (the message's share of the token sequence), `mask` (its sampled tokens),
 *   `is_content`, `logprobs` (one per sampled token), `advantages`, `reference_logprobs`, `loss_weights`), `calls`
 *   (model calls: `node`, `model`, `finish_reason`, `usage`, `time`, `error`, …), `rewards` {name: {score, weight}},
 *   `metrics`, `info`, `extra_usage`, `is_completed`, `ok`, `stop_condition`, `errors`, `timing`.
 *   The sample is the episode's first trace along its last branch (the root-to-leaf path of the graph's last leaf,
 *   what `Trace.messages` reads): each node a message, its token ids the node's, its logprobs spread onto the sampled
 *   tokens (0 on the others, as `Branch.logprobs` does). The reward is the trace's (`Trace.reward`: the sum of
 *   score × weight); the termination `error` when the episode is not ok and has errors (the last one the sample's
 *   `error`), else the trace's `stop_condition`, else its last call's `finish_reason`. Kept: the episode without
 *   `traces`, `trace` (the first trace, its `nodes` each without what was mapped; a node off the branch whole),
 *   `branch` (the node indices mapped), `other_traces` (the other agents' traces, whole).
 * - `results.jsonl`, one `RolloutOutput` a line (verifiers `verifiers/legacy/utils/save_utils.py` `state_to_output`,
 *   `save_outputs`; `verifiers/legacy/types.py`): `example_id`, `prompt` and `completion` (chat messages, or strings),
 *   `answer`, `info`, `reward`, `error` ({error, message, error_chain_repr, error_chain_str}, with `error_chain` and
 *   `long_error_chain`), `timing`, `is_completed`, `is_truncated`, `stop_condition`, `metrics` (and each metric again
 *   at the top), `tool_defs`, `token_usage`, and the state columns asked for: `trajectory` (steps: `prompt`,
 *   `completion`, `response`, `tokens` {prompt_ids, prompt_mask, completion_ids, completion_mask,
 *   completion_logprobs, overlong_prompt, is_truncated}, `reward`, `advantage`, `is_truncated`, `trajectory_id`,
 *   `extras`), … The prompt then the completion are the messages; where the trajectory's steps each completed one
 *   assistant message and they line up with the completion's assistant messages, those get the step's
 *   `completion_ids` and `completion_logprobs`. The termination is `error` with an error, else `length` when
 *   truncated, else the stop condition. Kept: every field but `prompt`, `completion`, `reward` (the trajectory whole),
 *   and each message's keys besides role and content (`prompt_extras` / `completion_extras`).
 *
 * Task name: the episode's env (`env.name`, else `env.id`), a results line's `task` when it has one, else `verifiers`.
 * The idx is the line's position (an `example_id` repeats across an example's rollouts; it is kept).
 */

import { RecordProblem, type ConvertedSample, type DumpFormat, type RecordSource } from "./types.js";
import { isNumberRow, isObj, isTokenRow, omit, type Obj } from "./values.js";

type LabMessage = ConvertedSample["message_log"][number];

/** A chat message's text: a string, or its text parts joined (other parts, images, read `[type]`); null content is "". */
function contentText(content: unknown, path: string): { text: string; whole: boolean } {
  if (content === null || content === undefined) return { text: "", whole: true };
  if (typeof content === "string") return { text: content, whole: true };
  if (!Array.isArray(content)) throw new RecordProblem(path, "expected a string or a list of content parts");
  let whole = true;
  const texts = content.map((p, i) => {
    if (!isObj(p)) throw new RecordProblem(`${path}[${i}]`, "expected a content part {type, …}");
    if (p.type === "text" && typeof p.text === "string" && Object.keys(p).length === 2) return p.text;
    whole = false;
    return typeof p.text === "string" ? p.text : `[${typeof p.type === "string" ? p.type : "part"}]`;
  });
  return { text: texts.join("\n"), whole };
}

/** A chat message as a lab message and its other keys (the content too when its text does not say it all). */
function chatMessage(m: unknown, path: string): { message: LabMessage; rest: Obj } {
  if (!isObj(m)) throw new RecordProblem(path, "expected a chat message {role, content}");
  if (typeof m.role !== "string") throw new RecordProblem(`${path}.role`, "expected the message's role (a string)");
  const c = contentText(m.content, `${path}.content`);
  return { message: { role: m.role, content: c.text, token_ids: [] }, rest: omit(m, c.whole ? ["role", "content"] : ["role"]) };
}

// ---- traces.jsonl (v1 episodes)

function episode(record: Obj, source: RecordSource): ConvertedSample {
  const traces = record.traces as unknown[];
  const env = isObj(record.env) ? record.env : {};
  const taskName = typeof env.name === "string" ? env.name : typeof env.id === "string" && env.id !== "" ? env.id : "verifiers";
  const fields: Obj = omit(record, ["traces"]);
  const errors = Array.isArray(record.errors) ? record.errors : [];
  const lastError = errors.at(-1);
  const failed = record.ok !== true && errors.length > 0;
  let messages: LabMessage[] = [];
  let reward: number | null = null;
  let termination: string | null = null;
  if (traces.length > 0) {
    const trace = traces[0];
    if (!isObj(trace)) throw new RecordProblem("traces[0]", "expected a trace object");
    const nodes = trace.nodes ?? [];
    if (!Array.isArray(nodes)) throw new RecordProblem("traces[0].nodes", "expected the trace's message nodes (a list)");
    const branch = lastBranch(nodes);
    const onBranch = new Set(branch);
    messages = branch.map((n) => nodeMessage(nodes[n], `traces[0].nodes[${n}]`).message);
    fields.trace = {
      ...omit(trace, ["nodes"]),
      nodes: nodes.map((node, n) => (onBranch.has(n) ? nodeMessage(node, `traces[0].nodes[${n}]`).rest : node)),
    };
    fields.branch = branch;
    if (traces.length > 1) fields.other_traces = traces.slice(1);
    reward = traceReward(trace);
    const calls = Array.isArray(trace.calls) ? trace.calls : [];
    const lastCall = calls.at(-1);
    const finish = isObj(lastCall) && typeof lastCall.finish_reason === "string" ? lastCall.finish_reason : null;
    termination = typeof trace.stop_condition === "string" ? trace.stop_condition : finish;
  }
  const sample: ConvertedSample & { error?: string } = {
    idx: source.position,
    task_name: taskName,
    message_log: messages,
    total_reward: reward,
    termination: failed ? "error" : termination,
    imported: { format: "verifiers", fields },
  };
  if (failed) sample.error = isObj(lastError) ? `${String(lastError.type)}: ${String(lastError.message)}` : String(lastError);
  return sample;
}

/** The node indices from a root to the last leaf (the last node no other node has as its parent). */
function lastBranch(nodes: unknown[]): number[] {
  const parents = new Set<number>();
  nodes.forEach((node, n) => {
    if (!isObj(node)) throw new RecordProblem(`traces[0].nodes[${n}]`, "expected a message node {parent, message, token_ids, …}");
    const p = node.parent;
    if (p === undefined || p === null) return;
    if (!Number.isInteger(p) || (p as number) < 0 || (p as number) >= n) throw new RecordProblem(`traces[0].nodes[${n}].parent`, "expected the index of an earlier node (or null for a root)");
    parents.add(p as number);
  });
  let leaf = nodes.length - 1;
  while (leaf >= 0 && parents.has(leaf)) leaf--;
  const path: number[] = [];
  for (let n: number | null = leaf >= 0 ? leaf : null; n !== null; ) {
    path.push(n);
    const p = (nodes[n] as Obj).parent;
    n = typeof p === "number" ? p : null;
  }
  return path.reverse();
}

function nodeMessage(node: unknown, path: string): { message: LabMessage; rest: Obj } {
  const n = node as Obj;
  const { message, rest: messageRest } = chatMessage(n.message, `${path}.message`);
  const mapped = ["message"];
  if ("token_ids" in n) {
    if (!isTokenRow(n.token_ids)) throw new RecordProblem(`${path}.token_ids`, "expected the node's token ids (integers ≥ 0)");
    message.token_ids = n.token_ids;
    mapped.push("token_ids");
  }
  const logprobs = n.logprobs ?? [];
  if (!isNumberRow(logprobs)) throw new RecordProblem(`${path}.logprobs`, "expected the sampled tokens' logprobs (numbers)");
  if (logprobs.length > 0) {
    const mask = n.mask;
    if (!Array.isArray(mask) || mask.length !== message.token_ids.length || mask.filter(Boolean).length !== logprobs.length)
      throw new RecordProblem(`${path}.mask`, "expected one flag per token, as many set as there are logprobs");
    let k = 0;
    message.generation_logprobs = mask.map((sampled) => (sampled ? logprobs[k++]! : 0));
    mapped.push("logprobs");
  }
  const rest = omit(n, mapped);
  if (Object.keys(messageRest).length > 0) rest.message = messageRest;
  return { message, rest };
}

function traceReward(trace: Obj): number | null {
  const rewards = trace.rewards;
  if (rewards === undefined) return null;
  if (!isObj(rewards)) throw new RecordProblem("traces[0].rewards", "expected the named rewards {name: {score, weight}}");
  let total: number | null = null;
  for (const [name, r] of Object.entries(rewards)) {
    if (r === null) continue;
    if (!isObj(r) || typeof r.score !== "number" || (r.weight !== undefined && typeof r.weight !== "number"))
      throw new RecordProblem(`traces[0].rewards.${name}`, "expected {score, weight} (numbers) or null");
    total = (total ?? 0) + r.score * (typeof r.weight === "number" ? r.weight : 1);
  }
  return total;
}

// ---- results.jsonl (legacy RolloutOutput)

function messageList(value: unknown, key: string, role: string): { message: LabMessage; rest: Obj }[] {
  if (value === null || value === undefined) return [];
  if (typeof value === "string") return [{ message: { role, content: value, token_ids: [] }, rest: {} }];
  if (!Array.isArray(value)) throw new RecordProblem(key, "expected the chat messages (a list) or a string");
  return value.map((m, i) => chatMessage(m, `${key}[${i}]`));
}

function rolloutOutput(record: Obj, source: RecordSource): ConvertedSample {
  const prompt = messageList(record.prompt, "prompt", "user");
  const completion = messageList(record.completion, "completion", "assistant");
  const reward = record.reward;
  if (reward !== undefined && reward !== null && typeof reward !== "number") throw new RecordProblem("reward", "expected the rollout's reward (a number)");
  // The trajectory's steps' tokens onto the completion's assistant messages, where they line up one to one.
  const trajectory = record.trajectory;
  const assistants = completion.filter((m) => m.message.role === "assistant").map((m) => m.message);
  if (Array.isArray(trajectory) && trajectory.length === assistants.length) {
    const steps = trajectory.map((step, i) => {
      if (!isObj(step)) throw new RecordProblem(`trajectory[${i}]`, "expected a trajectory step {prompt, completion, tokens, …}");
      const tokens = step.tokens;
      if (tokens === null || tokens === undefined) return null;
      if (!isObj(tokens)) throw new RecordProblem(`trajectory[${i}].tokens`, "expected the step's tokens {prompt_ids, completion_ids, completion_logprobs, …}");
      if (!isTokenRow(tokens.completion_ids)) throw new RecordProblem(`trajectory[${i}].tokens.completion_ids`, "expected the completion's token ids (integers ≥ 0)");
      const lp = tokens.completion_logprobs;
      if (lp !== undefined && !(isNumberRow(lp) && lp.length === tokens.completion_ids.length))
        throw new RecordProblem(`trajectory[${i}].tokens.completion_logprobs`, "expected one logprob (a number) per completion token");
      return { ids: tokens.completion_ids, logprobs: lp as number[] | undefined, one: Array.isArray(step.completion) && step.completion.length === 1 };
    });
    if (steps.every((s) => s !== null && s.one))
      steps.forEach((s, i) => {
        assistants[i]!.token_ids = s!.ids;
        if (s!.logprobs) assistants[i]!.generation_logprobs = s!.logprobs;
      });
  }
  const fields = omit(record, ["prompt", "completion", "reward"]);
  fields.prompt_extras = prompt.map((m) => m.rest);
  fields.completion_extras = completion.map((m) => m.rest);
  const error = record.error;
  const failed = error !== undefined && error !== null;
  const sample: ConvertedSample & { error?: string } = {
    idx: source.position,
    task_name: typeof record.task === "string" ? record.task : "verifiers",
    message_log: [...prompt, ...completion].map((m) => m.message),
    total_reward: typeof reward === "number" ? reward : null,
    termination: failed ? "error" : record.is_truncated === true ? "length" : typeof record.stop_condition === "string" ? record.stop_condition : null,
    imported: { format: "verifiers", fields },
  };
  if (failed) sample.error = isObj(error) ? `${String(error.error)}: ${String(error.message)}` : String(error);
  return sample;
}

function convert(record: Obj, source: RecordSource): ConvertedSample {
  if ("traces" in record) {
    if (!Array.isArray(record.traces)) throw new RecordProblem("traces", "expected the episode's traces (a list)");
    return episode(record, source);
  }
  if (!Number.isInteger(record.example_id)) throw new RecordProblem("example_id", "expected the rollout's example id (an integer), as state_to_output writes it");
  return rolloutOutput(record, source);
}

const isEpisode = (r: Obj) => Array.isArray(r.traces) && isObj(r.task) && "ok" in r;
const isRolloutOutput = (r: Obj) => typeof r.example_id === "number" && "prompt" in r && "completion" in r && ("timing" in r || "is_completed" in r);

export const verifiersFormat: DumpFormat = {
  name: "verifiers",
  title: "verifiers / prime-rl traces.jsonl (v1 Episode) or results.jsonl (RolloutOutput, state_to_output)",
  detect: (r) => !("message_log" in r) && (isEpisode(r) || isRolloutOutput(r)),
  convert,
};
