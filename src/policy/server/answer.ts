/**
 * Reading one completion answer (`POST <base_url>/completions`, vLLM's shape: docs/model-policy.md, "Inference
 * servers") into the row's generated tokens, their log-probabilities and whether it was cut off.
 *
 * Token ids come from `choices[0].token_ids` (vLLM's `return_token_ids`), else from `logprobs.tokens` written as
 * `token_id:<id>` (vLLM's `return_tokens_as_token_ids`); a server that gives neither has its text re-tokenized with
 * the policy's tokenizer (counted: `lab/server_retokenized`). Every field read is checked; a wrong one is an error
 * naming it.
 */

import { describeType, type TokenizerInterface } from "../../core/index.js";

/** What the policy asked of this row, to check the answer against. */
export interface RowRequest {
  /** The URL and the row, for errors: `http://…/completions, row 2 (sample 5, turn 1)`. */
  where: string;
  maxTokens: number;
  stops: readonly string[];
  tokenizer: TokenizerInterface;
  /** Token ids must be below it, when the tokenizer's vocabulary size is known. */
  vocabSize?: number;
}

export interface RowAnswer {
  ids: number[];
  logprobs: number[];
  truncated: boolean;
  /** The ids came from re-tokenizing the text (the server gave none). */
  retokenized: boolean;
  /** The server gave no log-probabilities (or none that line up with the ids): they are 0. */
  withoutLogprobs: boolean;
}

export class ServerAnswerError extends Error {
  override name = "ServerAnswerError";
}

const TOKEN_ID = /^token_id:(\d+)$/;

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

export function readCompletion(answer: unknown, request: RowRequest): RowAnswer {
  const wrong = (field: string, what: string, value: unknown): never => {
    throw new ServerAnswerError(`${request.where}: the answer's ${field}: expected ${what}, got ${describeValue(value)}`);
  };
  if (!isObject(answer)) return wrong("body", "an object {choices: [...]}", answer);
  const choices = answer.choices;
  if (!Array.isArray(choices) || choices.length !== 1) return wrong("choices", "a list of one choice", choices);
  const choice = choices[0];
  if (!isObject(choice)) return wrong("choices[0]", "an object", choice);
  const finish = choice.finish_reason;
  if (finish !== "stop" && finish !== "length") return wrong("choices[0].finish_reason", '"stop" or "length"', finish);
  const text = choice.text;
  if (typeof text !== "string") return wrong("choices[0].text", "a string", text);

  const logprobs = choice.logprobs;
  if (logprobs !== undefined && logprobs !== null && !isObject(logprobs)) return wrong("choices[0].logprobs", "an object {tokens, token_logprobs} or null", logprobs);
  const tokens = logprobs ? stringList(logprobs.tokens, "choices[0].logprobs.tokens", wrong) : null;
  const tokenLogprobs = logprobs ? numberList(logprobs.token_logprobs, "choices[0].logprobs.token_logprobs", wrong) : null;
  if (tokens && tokenLogprobs && tokens.length !== tokenLogprobs.length) {
    wrong("choices[0].logprobs.token_logprobs", `${tokens.length} log-probabilities (one per entry of logprobs.tokens)`, tokenLogprobs.length);
  }

  let ids = choice.token_ids === undefined || choice.token_ids === null ? null : idList(choice.token_ids, "choices[0].token_ids", request, wrong);
  const tokenIds = tokens && tokens.every((t) => TOKEN_ID.test(t)) ? tokens.map((t) => Number(TOKEN_ID.exec(t)![1])) : null;
  if (ids && tokenIds) {
    const at = ids.findIndex((id, i) => id !== tokenIds[i]);
    if (at >= 0 || ids.length !== tokenIds.length) wrong("choices[0].logprobs.tokens", "the same token ids as choices[0].token_ids", tokens);
  }
  if (!ids && tokenIds) ids = idList(tokenIds, "choices[0].logprobs.tokens", request, wrong);
  const retokenized = ids === null;
  if (!ids) ids = request.tokenizer.encode(text);
  // The server's own ids are held to the budget; re-tokenized text may split differently from what it generated.
  if (!retokenized && ids.length > request.maxTokens) wrong(tokenIds && !choice.token_ids ? "choices[0].logprobs.tokens" : "choices[0].token_ids", `at most max_tokens = ${request.maxTokens} tokens`, ids.length);

  // Log-probabilities line up with the ids when the server gave one per id.
  let values = tokenLogprobs && tokenLogprobs.length === ids.length ? tokenLogprobs : null;
  const eos = request.tokenizer.eosTokenId;
  if (finish === "stop" && ids.at(-1) !== eos && !stoppedByString(choice, text, ids, request)) {
    // Ended by the end-of-sequence token, which this server left out (vLLM keeps it): as the model policy's, the row
    // ends with it; its log-probability is not known.
    ids = [...ids, eos];
    if (values) values = [...values, 0];
  }
  return {
    ids,
    logprobs: values ?? new Array<number>(ids.length).fill(0),
    truncated: finish === "length",
    retokenized,
    withoutLogprobs: values === null && ids.length > 0,
  };
}

/**
 * Whether a stop string ended the row. vLLM's `stop_reason` (SGLang's `matched_stop`) says so: the stop string, a
 * stop token's id, or null for the end-of-sequence token; a server without either has a stop string in its text.
 */
function stoppedByString(choice: Json, text: string, ids: readonly number[], request: RowRequest): boolean {
  for (const field of ["stop_reason", "matched_stop"]) {
    if (!(field in choice)) continue;
    const reason = choice[field];
    if (typeof reason === "string") return true;
    if (reason === null || typeof reason === "number") return false;
  }
  if (request.stops.length === 0) return false;
  const generated = text || request.tokenizer.decode(ids);
  return request.stops.some((s) => generated.includes(s));
}

function describeValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return `a list of ${value.length}`;
  return describeType(value);
}

type Wrong = (field: string, what: string, value: unknown) => never;

function stringList(value: unknown, field: string, wrong: Wrong): string[] {
  if (!Array.isArray(value)) return wrong(field, "a list of strings", value);
  for (const [i, v] of value.entries()) if (typeof v !== "string") wrong(`${field}[${i}]`, "a string", v);
  return value as string[];
}

function numberList(value: unknown, field: string, wrong: Wrong): number[] {
  if (!Array.isArray(value)) return wrong(field, "a list of numbers", value);
  for (const [i, v] of value.entries()) {
    if (typeof v !== "number" || !Number.isFinite(v)) wrong(`${field}[${i}]`, "a finite log-probability", v);
    else if (v > 1e-6) wrong(`${field}[${i}]`, "a log-probability (≤ 0)", v);
  }
  return value as number[];
}

function idList(value: unknown, field: string, request: RowRequest, wrong: Wrong): number[] {
  if (!Array.isArray(value)) return wrong(field, "a list of token ids", value);
  const limit = request.vocabSize ?? 2 ** 31;
  const what = request.vocabSize === undefined ? "a token id (an integer ≥ 0)" : `a token id of the tokenizer's vocabulary (an integer from 0 to ${limit - 1})`;
  for (const [i, v] of value.entries()) {
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v >= limit) wrong(`${field}[${i}]`, what, v);
  }
  return value as number[];
}
