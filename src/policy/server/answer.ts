/**
 * Reading one completion answer (`POST <base_url>/completions`, vLLM's shape: docs/model-policy.md, "Inference
 * servers") into the row's generated tokens, their log-probabilities and whether it was cut off.
 *
 * Token ids come from `choices[0].token_ids` (vLLM's `return_token_ids`), else from `logprobs.tokens` written as
 * `token_id:<id>` (vLLM's `return_tokens_as_token_ids`) or llama.cpp's `logprobs.content[].id`; a server that gives
 * none has its text re-tokenized with the policy's tokenizer (counted: `lab/server_retokenized`). Every field read is
 * checked; a wrong one is an error naming it.
 */

import { describeType, type TokenizerInterface } from "../../core/index.js";
import { errorInBody } from "./http.js";

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
  const said = choices === undefined ? errorInBody(answer) : null;
  // An error sent with HTTP 200: what the server said, not only that `choices` is missing.
  if (said !== null) throw new ServerAnswerError(`${request.where}: the server answered with an error: ${said}`);
  if (!Array.isArray(choices) || choices.length !== 1) return wrong("choices", "a list of one choice", choices);
  const choice = choices[0];
  if (!isObject(choice)) return wrong("choices[0]", "an object", choice);
  const finish = choice.finish_reason;
  if (finish !== "stop" && finish !== "length") return wrong("choices[0].finish_reason", '"stop" or "length"', finish);
  const text = choice.text;
  if (typeof text !== "string") return wrong("choices[0].text", "a string", text);

  const logprobs = choice.logprobs;
  if (logprobs !== undefined && logprobs !== null && !isObject(logprobs)) return wrong("choices[0].logprobs", "an object {tokens, token_logprobs} or null", logprobs);
  // llama.cpp's llama-server answers in the chat API's shape, {content: [{id, token, logprob, …}]}, ids included.
  const content = logprobs && !("tokens" in logprobs) && "content" in logprobs ? contentEntries(logprobs.content, request, wrong) : null;
  const tokens = logprobs && !content ? stringList(logprobs.tokens, "choices[0].logprobs.tokens", wrong) : null;
  const tokenLogprobs = content ? content.logprobs : logprobs ? numberList(logprobs.token_logprobs, "choices[0].logprobs.token_logprobs", wrong) : null;
  if (tokens && tokenLogprobs && tokens.length !== tokenLogprobs.length) {
    wrong("choices[0].logprobs.token_logprobs", `${tokens.length} log-probabilities (one per entry of logprobs.tokens)`, tokenLogprobs.length);
  }

  let ids = choice.token_ids === undefined || choice.token_ids === null ? null : idList(choice.token_ids, "choices[0].token_ids", request, wrong);
  const listed = content ? "choices[0].logprobs.content" : "choices[0].logprobs.tokens";
  const tokenIds = content ? content.ids : tokens && tokens.every((t) => TOKEN_ID.test(t)) ? tokens.map((t) => Number(TOKEN_ID.exec(t)![1])) : null;
  if (ids && tokenIds) {
    const at = ids.findIndex((id, i) => id !== tokenIds[i]);
    if (at >= 0 || ids.length !== tokenIds.length) wrong(listed, "the same token ids as choices[0].token_ids", content ? `a list of ${tokenIds.length}` : tokens);
  }
  if (!ids && tokenIds) ids = idList(tokenIds, listed, request, wrong);
  const retokenized = ids === null;
  if (!ids) ids = request.tokenizer.encode(text);
  const idsField = choice.token_ids ? "choices[0].token_ids" : listed;
  // The server's own ids are held to the budget; re-tokenized text may split differently from what it generated.
  if (!retokenized && ids.length > request.maxTokens) wrong(idsField, `at most max_tokens = ${request.maxTokens} tokens`, ids.length);

  // One log-probability per token. The server's own ids come with one each or none; re-tokenized text keeps the
  // server's only where its tokens are exactly the lab's (else they would be pinned to other tokens).
  let values: number[] | null = null;
  if (tokenLogprobs && !retokenized) {
    if (tokenLogprobs.length !== ids.length) wrong(content ? listed : "choices[0].logprobs.token_logprobs", `${ids.length} log-probabilities (one per token of ${idsField})`, tokenLogprobs.length);
    values = tokenLogprobs;
  } else if (tokenLogprobs && tokens && tokens.length === ids.length && ids.every((id, i) => request.tokenizer.decode([id]) === tokens[i])) {
    values = tokenLogprobs;
  }

  if (finish === "stop") {
    const endToken = stopToken(choice, text, ids, request);
    if (endToken === request.tokenizer.eosTokenId && content && request.stops.length > 0 && ids.at(-1) !== endToken) {
      // llama-server keeps the end token in `content` but cuts the stop string that ended a row out of its text and
      // tokens: which one, and its tokens, are lost, and ending the row with EOS instead would change what it said.
      throw new ServerAnswerError(
        `${request.where}: the answer ended ("stop") with neither the end-of-sequence token nor a stop string: a server that cuts the stop string out of its answer (llama.cpp's llama-server does) cannot serve a scenario with stop strings`,
      );
    }
    if (endToken !== null && ids.at(-1) !== endToken) {
      // Ended by that token (the end of sequence, or a stop token id), which this server left out (vLLM keeps it): as
      // the model policy's, the row ends with it; its log-probability is not known.
      ids = [...ids, endToken];
      if (values) values = [...values, 0];
      if (!retokenized && ids.length > request.maxTokens) {
        wrong("choices[0].finish_reason", `"length" for ${request.maxTokens} tokens (max_tokens) that end neither with the end-of-sequence token nor with a stop string`, finish);
      }
    }
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
 * The token that ended a `"stop"` row, or null when a stop string did. vLLM's `stop_reason` (SGLang's
 * `matched_stop`) says which: the stop string, a stop token's id (the model's other end tokens, from its generation
 * config), or null for the end-of-sequence token; a server without either has a stop string in its text, else EOS.
 */
function stopToken(choice: Json, text: string, ids: readonly number[], request: RowRequest): number | null {
  const eos = request.tokenizer.eosTokenId;
  for (const field of ["stop_reason", "matched_stop"]) {
    if (!(field in choice)) continue;
    const reason = choice[field];
    if (typeof reason === "string") return null;
    if (typeof reason === "number" && Number.isInteger(reason) && reason >= 0) return reason;
    if (reason === null) return eos;
  }
  if (request.stops.length === 0) return eos;
  const generated = text || request.tokenizer.decode(ids);
  return request.stops.some((s) => generated.includes(s)) ? null : eos;
}

/** llama.cpp's `logprobs.content`: each entry's token id and log-probability, checked. */
function contentEntries(value: unknown, request: RowRequest, wrong: Wrong): { ids: unknown[]; logprobs: number[] } {
  const field = "choices[0].logprobs.content";
  if (!Array.isArray(value)) return wrong(field, "a list of {id, token, logprob}", value);
  const ids: unknown[] = [];
  const logprobs: unknown[] = [];
  for (const [i, entry] of value.entries()) {
    if (!isObject(entry)) wrong(`${field}[${i}]`, "an object {id, token, logprob}", entry);
    ids.push((entry as Json).id);
    logprobs.push((entry as Json).logprob);
  }
  idList(ids, field, request, wrong, (i) => `${field}[${i}].id`);
  return { ids, logprobs: numberList(logprobs, field, wrong, (i) => `${field}[${i}].logprob`) };
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

/** Where entry `i` of a list is, for errors: `field[i]` unless the list was gathered from elsewhere. */
type EntryName = (i: number) => string;

function numberList(value: unknown, field: string, wrong: Wrong, entry: EntryName = (i) => `${field}[${i}]`): number[] {
  if (!Array.isArray(value)) return wrong(field, "a list of numbers", value);
  for (const [i, v] of value.entries()) {
    if (typeof v !== "number" || !Number.isFinite(v)) wrong(entry(i), "a finite log-probability", v);
    else if (v > 1e-6) wrong(entry(i), "a log-probability (≤ 0)", v);
  }
  return value as number[];
}

function idList(value: unknown, field: string, request: RowRequest, wrong: Wrong, entry: EntryName = (i) => `${field}[${i}]`): number[] {
  if (!Array.isArray(value)) return wrong(field, "a list of token ids", value);
  const limit = request.vocabSize ?? 2 ** 31;
  const what = request.vocabSize === undefined ? "a token id (an integer ≥ 0)" : `a token id of the tokenizer's vocabulary (an integer from 0 to ${limit - 1})`;
  for (const [i, v] of value.entries()) {
    if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v >= limit) wrong(entry(i), what, v);
  }
  return value as number[];
}
