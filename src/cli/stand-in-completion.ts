/**
 * The stand-in inference server's one real job (./stand-in-server.ts): a vLLM-style completion request run through
 * a `GenerationInterface` (the lab's model policy on a built-in model), answered in vLLM's shape. A stand-in for
 * tests and demos, not an inference server: one prompt per request, no streaming, no batching of its own.
 */

import type { GenerationInterface, TokenizerInterface } from "../core/index.js";

/** A request the stand-in cannot take: answered HTTP 400 (or `status`) with vLLM's error shape. */
export class CompletionRequestError extends Error {
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

/** The fields of vLLM's completion request the stand-in reads (others are ignored, as vLLM ignores unknown ones). */
export interface CompletionRequest {
  prompt: number[];
  maxTokens: number;
  stops: string[];
  greedy: boolean;
  sampling: { temperature?: number; top_k?: number; top_p?: number };
  seed: number;
  includeStopStr: boolean;
  skipSpecialTokens: boolean;
  logprobs: boolean;
  tokensAsIds: boolean;
  returnTokenIds: boolean;
}

type Json = Record<string, unknown>;

/** Checks a request body and reads it in vLLM's names and defaults (max_tokens 16, temperature 1, skip_special_tokens true). */
export function readCompletionRequest(body: unknown, servedModel: string, tokenizer: TokenizerInterface): CompletionRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new CompletionRequestError("the request body must be a JSON object");
  const b = body as Json;
  if (b.model !== undefined && b.model !== servedModel) throw new CompletionRequestError(`The model \`${String(b.model)}\` does not exist.`, 404);
  if (b.stream === true) throw new CompletionRequestError("the stand-in server does not stream (stream: true)");
  if (b.n !== undefined && b.n !== 1) throw new CompletionRequestError("the stand-in server answers one choice (n: 1)");
  const prompt = typeof b.prompt === "string" ? tokenizer.encode(b.prompt) : b.prompt;
  if (!Array.isArray(prompt) || prompt.length === 0 || !prompt.every((id) => Number.isInteger(id) && id >= 0)) {
    throw new CompletionRequestError("prompt: expected a string or a non-empty list of token ids");
  }
  const maxTokens = b.max_tokens ?? 16;
  if (!Number.isInteger(maxTokens) || (maxTokens as number) < 1) throw new CompletionRequestError("max_tokens: expected an integer ≥ 1");
  const stop = b.stop ?? [];
  const stops = typeof stop === "string" ? [stop] : stop;
  if (!Array.isArray(stops) || !stops.every((s) => typeof s === "string")) throw new CompletionRequestError("stop: expected a string or a list of strings");
  const number = (field: string): number | undefined => {
    const value = b[field];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== "number" || !Number.isFinite(value)) throw new CompletionRequestError(`${field}: expected a number`);
    return value;
  };
  const temperature = number("temperature") ?? 1;
  const topK = number("top_k");
  const seed = number("seed") ?? 0;
  if (!Number.isInteger(seed)) throw new CompletionRequestError("seed: expected an integer");
  return {
    prompt: prompt as number[],
    maxTokens: maxTokens as number,
    stops: (stops as string[]).filter((s) => s.length > 0),
    greedy: temperature === 0,
    // vLLM's "no cut" top-k is -1 (or 0); the lab's is 0.
    sampling: { temperature, ...(topK !== undefined ? { top_k: topK < 0 ? 0 : topK } : {}), ...(number("top_p") !== undefined ? { top_p: number("top_p") } : {}) },
    seed,
    includeStopStr: b.include_stop_str_in_output === true,
    skipSpecialTokens: b.skip_special_tokens !== false,
    logprobs: b.logprobs !== undefined && b.logprobs !== null && b.logprobs !== false,
    tokensAsIds: b.return_tokens_as_token_ids === true,
    returnTokenIds: b.return_token_ids === true,
  };
}

/** Generates one request's tokens with `policy` and answers as vLLM's `/v1/completions` does. */
export async function complete(request: CompletionRequest, policy: GenerationInterface, tokenizer: TokenizerInterface, servedModel: string, id: string): Promise<Json> {
  const n = request.prompt.length;
  const out = await policy.generate(
    {
      input_ids: [Int32Array.from(request.prompt)],
      input_lengths: [n],
      stop_strings: [request.stops],
      max_new_tokens: [request.maxTokens],
      // The request's seed picks the sampling generator: the same seed, the same tokens.
      sample_ids: [request.seed],
      turns: [0],
    },
    request.greedy,
  );
  if (out.errors?.[0]) throw new Error(out.errors[0]);
  const end = out.unpadded_sequence_lengths[0]!;
  const ids = Array.from(out.output_ids[0]!.subarray(n, end));
  const logprobs = Array.from(out.logprobs[0]!.subarray(n, end));
  // The model's other end tokens (its generation config's) end a completion as vLLM's stop token ids do: `stop_reason`
  // is the id; the tokenizer's EOS gives none.
  const last = ids.at(-1);
  const endIds = (tokenizer as { endTokenIds?: ReadonlySet<number> }).endTokenIds ?? new Set([tokenizer.eosTokenId]);
  const endedByToken = last !== undefined && endIds.has(last);
  const fullText = tokenizer.decode(ids);
  const stopReason: string | number | null = endedByToken
    ? last === tokenizer.eosTokenId
      ? null
      : last
    : (request.stops.find((s) => fullText.includes(s)) ?? null);
  let text = tokenizer.decode(ids, { skipSpecialTokens: request.skipSpecialTokens });
  if (typeof stopReason === "string" && !request.includeStopStr) text = text.slice(0, Math.max(0, text.indexOf(stopReason)));
  const tokenTexts = ids.map((t) => tokenizer.decode([t]));
  const tokens = request.tokensAsIds ? ids.map((t) => `token_id:${t}`) : tokenTexts;
  const offsets: number[] = [];
  tokenTexts.reduce((at, t) => (offsets.push(at), at + t.length), 0);
  return {
    id,
    object: "text_completion",
    created: Math.floor(Date.now() / 1000),
    model: servedModel,
    choices: [
      {
        index: 0,
        text,
        // The stand-in knows only the drawn token's log-probability: its "top" list is that token alone.
        logprobs: request.logprobs
          ? { text_offset: offsets, token_logprobs: logprobs, tokens, top_logprobs: tokens.map((t, i) => ({ [t]: logprobs[i]! })) }
          : null,
        finish_reason: out.truncated[0] ? "length" : "stop",
        stop_reason: stopReason,
        ...(request.returnTokenIds ? { token_ids: ids } : {}),
      },
    ],
    ...(request.returnTokenIds ? { prompt_token_ids: request.prompt } : {}),
    usage: { prompt_tokens: n, completion_tokens: ids.length, total_tokens: n + ids.length },
  };
}
