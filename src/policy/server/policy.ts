/**
 * The `server` policy: a language model behind an inference server (vLLM, SGLang, llama.cpp's server, TGI, Ollama)
 * speaking the OpenAI-compatible completions API, as the core's `GenerationInterface`.
 *
 * One request per row: the row's unpadded prompt as token ids, its `max_new_tokens` as `max_tokens`, its stop
 * strings (kept in the output, as the model policy keeps them), temperature 0 when greedy, and a seed derived per
 * (seed, sample, turn) so a sample's tokens do not depend on its batch. At most `max_concurrency` requests are in
 * flight at once, for every call together; a 429, a 5xx or a network failure is tried again (exponential backoff
 * with jitter, or the server's `Retry-After`) up to `max_retries` times; a row whose tries are used up gets its own
 * error and the other rows keep their output. Only `fetch` is used: it runs in Node and in the page's worker alike.
 */

import {
  abortError,
  isAbortError,
  outputRow,
  Rng,
  type GenerateOptions,
  type GenerationDatumSpec,
  type GenerationInterface,
  type GenerationOutputSpec,
  type TokenizerInterface,
} from "../../core/index.js";
import { readCompletion, type RowAnswer } from "./answer.js";
import { postJson, ServerRequestError } from "./http.js";
import { ConcurrencyLimit } from "./limiter.js";
import { backoffMs, DEFAULT_RETRY_TIMING, retryAfterMs, type RetryTiming } from "./retry.js";
import { completionsUrl, SERVER_DEFAULTS, type ServerPolicySettings } from "./settings.js";

export interface ServerPolicyRuntime {
  /** Tokenizes the prompts; gives the end-of-sequence id, and the text a server without token ids is re-tokenized with. */
  tokenizer: TokenizerInterface;
  /** The tokenizer's vocabulary size, when known: token ids the server answers must be below it. */
  vocabSize?: number;
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** The retries' clock and jitter (tests replace them). */
  retryTiming?: Partial<RetryTiming>;
}

/** One row's outcome: its answer, or why it failed. */
type RowOutcome = { answer: RowAnswer } | { error: string };

const cancelled = () => abortError("generation cancelled");

export class ServerPolicy implements GenerationInterface {
  readonly tokenizer: TokenizerInterface;
  readonly url: string;
  private readonly limit: ConcurrencyLimit;
  private readonly timing: RetryTiming;
  private readonly counts = { requests: 0, retries: 0, retokenized: 0, withoutLogprobs: 0 };

  constructor(
    private readonly settings: ServerPolicySettings,
    private readonly runtime: ServerPolicyRuntime,
  ) {
    this.tokenizer = runtime.tokenizer;
    this.url = completionsUrl(settings.base_url);
    this.limit = new ConcurrencyLimit(settings.max_concurrency ?? SERVER_DEFAULTS.max_concurrency);
    this.timing = { ...DEFAULT_RETRY_TIMING, ...runtime.retryTiming };
  }

  /** This policy's counters so far (the result's `lab/server_*` metrics). */
  metrics(): Record<string, number> {
    return {
      "lab/server_requests": this.counts.requests,
      "lab/server_retries": this.counts.retries,
      "lab/server_retokenized": this.counts.retokenized,
      "lab/server_rows_without_logprobs": this.counts.withoutLogprobs,
    };
  }

  async generate(data: GenerationDatumSpec, greedy: boolean, options: GenerateOptions = {}): Promise<GenerationOutputSpec> {
    const rows = data.input_lengths.map((_, row) => this.generateRow(data, row, greedy, options));
    const outcomes = await Promise.all(rows);
    if (options.signal?.aborted) throw cancelled();
    return assemble(data, outcomes, this.tokenizer.padTokenId);
  }

  /** Yields each row as its answer comes, fastest first. */
  async *generateAsync(data: GenerationDatumSpec, greedy: boolean, options: GenerateOptions = {}): AsyncIterable<[number, GenerationOutputSpec]> {
    const pending = new Map(
      data.input_lengths.map((_, row) => {
        const done = this.generateRow(data, row, greedy, options).then((outcome) => ({ row, outcome }));
        // Rows still pending when a cancellation ends the loop reject unheard of otherwise.
        done.catch(() => undefined);
        return [row, done] as const;
      }),
    );
    while (pending.size > 0) {
      const { row, outcome } = await Promise.race(pending.values());
      pending.delete(row);
      if (options.signal?.aborted) throw cancelled();
      yield [row, outputRow(assemble(data, [outcome], this.tokenizer.padTokenId, row), 0)];
    }
  }

  /** One row, through the limit and the retries; never rejects but for cancellation. */
  private async generateRow(data: GenerationDatumSpec, row: number, greedy: boolean, options: GenerateOptions): Promise<RowOutcome> {
    const maxTokens = data.max_new_tokens[row]!;
    // Nothing to generate (the context is full): no request, as the model policy generates nothing then.
    if (maxTokens <= 0) return { answer: { ids: [], logprobs: [], truncated: false, retokenized: false, withoutLogprobs: false } };
    const sampleId = data.sample_ids?.[row] ?? row;
    const turn = data.turns?.[row] ?? 0;
    const stops = (data.stop_strings[row] ?? []).filter((s) => s.length > 0);
    const prompt = Array.from(data.input_ids[row]!.subarray(0, data.input_lengths[row]!));
    const body = this.requestBody(prompt, maxTokens, stops, greedy, sampleId, turn);
    const where = `${this.url}, row ${row} (sample ${sampleId}, turn ${turn})`;
    try {
      const json = await this.postWithRetries(body, options.signal);
      const answer = readCompletion(json, { where, maxTokens, stops, tokenizer: this.tokenizer, vocabSize: this.runtime.vocabSize });
      if (answer.retokenized) this.counts.retokenized += 1;
      if (answer.withoutLogprobs) this.counts.withoutLogprobs += 1;
      if (options.onToken) for (const id of answer.ids) options.onToken(row, id, this.tokenizer.decode([id]));
      return { answer };
    } catch (e) {
      if (isAbortError(e, options.signal)) throw cancelled();
      return { error: e instanceof Error ? e.message : String(e) };
    }
  }

  /** The completion request, in vLLM's field names (the others' servers take the same names or ignore them). */
  private requestBody(prompt: number[], maxTokens: number, stops: string[], greedy: boolean, sampleId: number, turn: number): Record<string, unknown> {
    const s = this.settings;
    const sampling = greedy
      ? { temperature: 0 }
      : {
          ...(s.temperature !== undefined ? { temperature: s.temperature } : {}),
          ...(s.top_p !== undefined ? { top_p: s.top_p } : {}),
          ...(s.top_k !== undefined ? { top_k: s.top_k === 0 ? -1 : s.top_k } : {}),
        };
    return {
      model: s.model,
      prompt,
      max_tokens: maxTokens,
      ...sampling,
      seed: rowSeed(s.seed ?? 0, sampleId, turn),
      n: 1,
      stream: false,
      ...(stops.length ? { stop: stops } : {}),
      include_stop_str_in_output: true,
      skip_special_tokens: false,
      logprobs: 1,
      return_tokens_as_token_ids: true,
      return_token_ids: true,
    };
  }

  /** Posts, trying again after retryable failures; the last failure's message says how many tries it took. */
  private async postWithRetries(body: Record<string, unknown>, signal: AbortSignal | undefined): Promise<unknown> {
    const maxRetries = this.settings.max_retries ?? SERVER_DEFAULTS.max_retries;
    const timeoutMs = this.settings.timeout_ms ?? SERVER_DEFAULTS.timeout_ms;
    for (let retry = 0; ; retry++) {
      try {
        return await this.limit.run(() => {
          this.counts.requests += 1;
          return postJson(this.url, body, { timeoutMs, signal, apiKey: this.runtime.apiKey });
        }, signal);
      } catch (e) {
        if (!(e instanceof ServerRequestError) || !e.retryable) throw e;
        if (retry >= maxRetries) throw new ServerRequestError(retry === 0 ? e.message : `${e.message} (tried ${retry + 1} times)`, false, e.status);
        const asked = retryAfterMs(e.retryAfter ?? null);
        if (asked !== null && asked > this.timing.maxRetryAfterMs) {
          throw new ServerRequestError(`${e.message} (it asked to retry after ${asked} ms, longer than the lab waits: ${this.timing.maxRetryAfterMs} ms)`, false, e.status);
        }
        this.counts.retries += 1;
        await this.timing.sleep(Math.max(asked ?? 0, backoffMs(retry, this.timing)), signal);
      }
    }
  }
}

/** The row's request seed: from (seed, sample, turn) alone, as the model policy's generator is, so batches do not matter. */
export function rowSeed(seed: number, sampleId: number, turn: number): number {
  return Math.floor(Rng.derive(seed, "model", sampleId, turn).next() * 2 ** 31);
}

/**
 * The rows' outputs in the core's shape: prompt and generated tokens, right-padded; log-probabilities 0 over the
 * prompt; a failed row keeps its prompt alone and has its error. `firstRow` is the first outcome's row in `data`.
 */
function assemble(data: GenerationDatumSpec, outcomes: RowOutcome[], padId: number, firstRow = 0): GenerationOutputSpec {
  const rows = outcomes.map((outcome, k) => {
    const row = firstRow + k;
    const prompt = data.input_ids[row]!.subarray(0, data.input_lengths[row]!);
    const answer = "answer" in outcome ? outcome.answer : null;
    return { prompt, answer, error: answer ? null : (outcome as { error: string }).error };
  });
  const width = Math.max(0, ...rows.map((r) => r.prompt.length + (r.answer?.ids.length ?? 0)));
  const errors = rows.map((r) => r.error);
  return {
    output_ids: rows.map((r) => {
      const ids = new Int32Array(width).fill(padId);
      ids.set(r.prompt);
      if (r.answer) ids.set(r.answer.ids, r.prompt.length);
      return ids;
    }),
    logprobs: rows.map((r) => {
      const values = new Float64Array(width);
      if (r.answer) values.set(r.answer.logprobs, r.prompt.length);
      return values;
    }),
    generation_lengths: rows.map((r) => r.answer?.ids.length ?? 0),
    unpadded_sequence_lengths: rows.map((r) => r.prompt.length + (r.answer?.ids.length ?? 0)),
    truncated: rows.map((r) => r.answer?.truncated ?? false),
    ...(errors.some((e) => e !== null) ? { errors } : {}),
  };
}
