/**
 * NeMo Gym's rollout collection output (NVIDIA-NeMo/Gym `nemo_gym/rollout_collection.py`,
 * `RolloutCollectionHelper.run_from_config`): `<output>.jsonl` (rollouts.jsonl) holds one line per finished rollout,
 * `<output>_failures.jsonl` (`failures_path_for`, `nemo_gym/path_utils.py`) one line per failed attempt. A line is
 * the agent server's `/run` result, `orjson.dumps`ed, with the row's `_ng_task_index`, `_ng_rollout_index` and
 * `agent_ref` (and `_ng_attempt_index`, a rollout id, `skills_ref` when the row has them) set on it:
 *
 * - `responses_create_params`: the request (`NeMoGymResponseCreateParamsNonStreaming`, `nemo_gym/openai_utils.py`):
 *   `input` (a string, or Responses-API input items: `message` {role, content: string or parts}, `function_call`,
 *   `function_call_output`, `reasoning`), `tools`, `temperature`, … ;
 * - `response`: the Responses-API object (`NeMoGymResponse`): `output` items (`message` with `output_text` parts,
 *   `function_call` {name, arguments, call_id}, `function_call_output` {call_id, output}, `reasoning` {summary}), with
 *   `incomplete_details` ({reason: "max_output_tokens"} when the model hit its length, `nemo_gym/responses_converter.py`
 *   `chat_completion_to_response`), `usage`, `id`, `model`, … When the model server returns token information
 *   (`return_token_id_information`), the last output item of each model call carries `prompt_token_ids`,
 *   `generation_token_ids`, `generation_log_probs` (`TokenIDLogProbMixin`; `postprocess_chat_response`);
 * - `reward`, and whatever else the resources server's verify response adds (`verifier_type`, `extracted_answer`, …).
 *
 * A failure line is the same result with `_ng_failure_class` set (`judge_failed`, `transient`, `remote_agent_failed`,
 * …; `_ng_failure_terminal` when it is not to be retried), `reward` 0, and the error text under a key its agent
 * chooses: `error` (remote_agent), `error_message` (stirrup_agent, conversational_tool_use), `_ng_failure_judge_error`
 * (`nemo_gym/judge.py` `judge_failsafe`). It becomes a sample with termination `error` and that text as its `error`
 * (the failure class when no text is there).
 *
 * Each input and output item is one message: a message's role as written (`user`, `system`, `developer`,
 * `assistant`) and its text parts joined (other parts as `[type]`), a function call an `assistant` message
 * `name(arguments)`, its output a `tool` message, reasoning an `assistant` message of its summary texts. An item's
 * `generation_token_ids` / `generation_log_probs` are its message's tokens and logprobs (a model call's tokens cover
 * all its items: they sit on the call's last item, the others have none). What each item holds besides is kept in
 * `fields.input_items` / `fields.output_items` (one entry per item: `type`, `id`, `status`, `call_id`,
 * `prompt_token_ids`, the parts without their text, …); the request without `input` and the response without `output`
 * are kept as `responses_create_params` and `response`; every other field as written (the group ids
 * `_ng_task_index` / `_ng_rollout_index` among them). The sample's idx is its position (a task's index repeats
 * across its rollouts); its task name the agent's (`agent_ref.name`).
 */

import { RecordProblem, type ConvertedSample, type DumpFormat, type RecordSource } from "./types.js";
import { isNumberRow, isObj, isTokenRow, omit, type Obj } from "./values.js";

type LabMessage = ConvertedSample["message_log"][number];

/** The text of a content: a string, or parts whose texts are joined (another part reads `[type]`). */
function contentText(content: unknown, path: string): { text: string; rest: unknown } {
  if (typeof content === "string") return { text: content, rest: undefined };
  if (!Array.isArray(content)) throw new RecordProblem(path, "expected a string or a list of content parts, as the Responses API has them");
  const texts = content.map((p, i) => {
    if (!isObj(p)) throw new RecordProblem(`${path}[${i}]`, "expected a content part {type, …}");
    if (typeof p.text === "string") return p.text;
    if (typeof p.refusal === "string") return p.refusal;
    return `[${typeof p.type === "string" ? p.type : "part"}]`;
  });
  // The parts without the text they gave (their types, annotations, logprobs, images, …).
  const rest = content.map((p) => omit(p as Obj, typeof (p as Obj).text === "string" ? ["text"] : typeof (p as Obj).refusal === "string" ? ["refusal"] : []));
  return { text: texts.join("\n"), rest };
}

/** One input or output item as a lab message, and what the item holds besides. */
function itemMessage(item: unknown, path: string): { message: LabMessage; rest: Obj } {
  if (!isObj(item)) throw new RecordProblem(path, "expected a Responses-API item object {type, …}");
  const type = typeof item.type === "string" ? item.type : typeof item.role === "string" ? "message" : null;
  let role: string;
  let text: string;
  let mapped: string[];
  let extra: Obj = {};
  switch (type) {
    case "message": {
      if (typeof item.role !== "string") throw new RecordProblem(`${path}.role`, "expected the message's role (a string)");
      role = item.role;
      const c = contentText(item.content, `${path}.content`);
      text = c.text;
      mapped = ["role", "content"];
      if (c.rest !== undefined) extra = { content: c.rest };
      break;
    }
    case "function_call": {
      if (typeof item.name !== "string") throw new RecordProblem(`${path}.name`, "expected the called function's name (a string)");
      if (typeof item.arguments !== "string") throw new RecordProblem(`${path}.arguments`, "expected the call's arguments (a JSON string)");
      role = "assistant";
      text = `${item.name}(${item.arguments})`;
      mapped = ["arguments"];
      break;
    }
    case "function_call_output": {
      const c = contentText(item.output, `${path}.output`);
      role = "tool";
      text = c.text;
      mapped = ["output"];
      if (c.rest !== undefined) extra = { output: c.rest };
      break;
    }
    case "reasoning": {
      if (!Array.isArray(item.summary)) throw new RecordProblem(`${path}.summary`, "expected the reasoning's summary parts (a list)");
      const c = contentText(item.summary, `${path}.summary`);
      role = "assistant";
      text = c.text;
      mapped = ["summary"];
      extra = { summary: c.rest };
      break;
    }
    default:
      // An item the lab has no message kind for (an MCP call, a web search, …): its JSON, kept whole as well.
      role = "assistant";
      text = JSON.stringify(item);
      mapped = [];
  }
  const message: LabMessage = { role, content: text, token_ids: [] };
  if ("generation_token_ids" in item) {
    if (!isTokenRow(item.generation_token_ids)) throw new RecordProblem(`${path}.generation_token_ids`, "expected the model call's generated token ids (integers ≥ 0)");
    message.token_ids = item.generation_token_ids;
    mapped.push("generation_token_ids");
  }
  if ("generation_log_probs" in item) {
    const lp = item.generation_log_probs;
    if (!isNumberRow(lp) || lp.length !== message.token_ids.length)
      throw new RecordProblem(`${path}.generation_log_probs`, "expected one logprob (a number) per generated token");
    message.generation_logprobs = lp;
    mapped.push("generation_log_probs");
  }
  return { message, rest: { ...omit(item, mapped), ...extra } };
}

const FAILURE_TEXT_KEYS = ["error", "error_message", "_ng_failure_judge_error"];

function convert(record: Obj, source: RecordSource): ConvertedSample {
  const params = record.responses_create_params;
  if (!isObj(params)) throw new RecordProblem("responses_create_params", "expected the rollout's request object (responses_create_params)");
  const response = record.response;
  if (!isObj(response)) throw new RecordProblem("response", "expected the rollout's Responses-API response object");
  if (!Array.isArray(response.output)) throw new RecordProblem("response.output", "expected the response's output items (a list)");
  const reward = record.reward;
  if (reward !== undefined && reward !== null && typeof reward !== "number") throw new RecordProblem("reward", "expected the rollout's reward (a number)");

  const input = params.input;
  const inputItems = typeof input === "string" ? [{ type: "message", role: "user", content: input }] : input;
  if (!Array.isArray(inputItems)) throw new RecordProblem("responses_create_params.input", "expected the request's input (a string or a list of items)");
  const inputs = inputItems.map((item, i) => itemMessage(item, `responses_create_params.input[${i}]`));
  const outputs = response.output.map((item, i) => itemMessage(item, `response.output[${i}]`));

  const fields: Obj = {};
  for (const [key, value] of Object.entries(record)) {
    if (key === "reward") continue;
    if (key === "responses_create_params") fields[key] = omit(params, ["input"]);
    else if (key === "response") fields[key] = omit(response, ["output"]);
    else fields[key] = value;
  }
  // A string input is one user message: nothing else to keep of it.
  fields.input_items = typeof input === "string" ? [] : inputs.map((m) => m.rest);
  fields.output_items = outputs.map((m) => m.rest);

  const failureClass = record._ng_failure_class;
  const failed = failureClass !== undefined && failureClass !== null;
  const incomplete = isObj(response.incomplete_details) ? response.incomplete_details.reason : undefined;
  const termination = failed ? "error" : incomplete === "max_output_tokens" ? "length" : typeof incomplete === "string" ? incomplete : null;
  const agent = record.agent_ref;
  const sample: ConvertedSample & { error?: string } = {
    idx: source.position,
    task_name: isObj(agent) && typeof agent.name === "string" ? agent.name : "nemo-gym",
    message_log: [...inputs, ...outputs].map((m) => m.message),
    total_reward: typeof reward === "number" ? reward : null,
    termination,
    imported: { format: "nemo-gym", fields },
  };
  if (failed) {
    const key = FAILURE_TEXT_KEYS.find((k) => typeof record[k] === "string" && record[k] !== "");
    sample.error = key ? (record[key] as string) : `rollout failed (${String(failureClass)})`;
  }
  return sample;
}

export const nemoGymFormat: DumpFormat = {
  name: "nemo-gym",
  title: "NeMo Gym rollouts.jsonl / *_failures.jsonl (rollout collection: responses_create_params, response, reward)",
  detect: (r) => isObj(r.responses_create_params) && isObj(r.response) && !("message_log" in r),
  convert,
};
