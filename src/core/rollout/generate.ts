/**
 * `generate_responses`, `generate_responses_async` and `async_generate_response_for_sample_turn`
 * (upstream-rollouts.md §2.1, §2.2, §2.5; fork-additions.md §5.1).
 *
 * Deliberate differences from the reference:
 * - Stop strings in the generation input are kept when the batch has none (decision 2, BUG-S1), and they are
 *   always per sample.
 * - The batch is not mutated (decision 1): a new batch with the appended assistant messages is returned.
 * - A row the backend reports as failed gets no message; its error comes back in `genMetrics._row_errors`
 *   (decision 4).
 * - `async_generate_response_for_sample_turn` uses `max_seq_len` to bound the new tokens (decision 3).
 */

import { LabError } from "../errors.js";
import { BatchedDataDict } from "../batch.js";
import { ContextRows } from "./context-rows.js";
import { structuredDecodeSkipSpecial, type StructuredToolUseConfig } from "../protocol/structured.js";
import type {
  GenerateOptions,
  GenerationDatumSpec,
  GenerationInterface,
  GenerationOutputSpec,
  Message,
  MessageLog,
  TokenIds,
  TokenizerInterface,
} from "../types.js";

export interface GenerationMetrics {
  mean_generation_length: number;
  total_generated_tokens: number;
  gen_leader_worker_idx?: number;
  /** Private, popped by the rollouts: the engine's response-truncation flag per row. */
  _response_truncated?: boolean[];
  /** Private, popped by the rollouts: per-row generation failures. */
  _row_errors?: (string | null)[];
}

/** A batch with `message_log` and, optionally, `stop_strings`. */
type LogBatch = BatchedDataDict;

export interface GenerateResponsesArgs {
  policyGeneration: GenerationInterface;
  generationInputData: GenerationDatumSpec;
  batch: LogBatch;
  tokenizer: TokenizerInterface;
  inputLengths: number[];
  includeLogprobs?: boolean;
  greedy?: boolean;
  structuredCfg?: StructuredToolUseConfig | null;
  options?: GenerateOptions;
}

export type GenerateResponsesResult = [LogBatch, TokenIds[], GenerationMetrics];

function withStopStrings(data: GenerationDatumSpec, batch: LogBatch): GenerationDatumSpec {
  const n = data.input_lengths.length;
  const stops = (batch.has("stop_strings") ? batch.get("stop_strings") : (data.stop_strings ?? new Array(n).fill(null))) as (string[] | null)[];
  return { ...data, stop_strings: stops.map((s) => (s ? [...s] : null)) };
}

function appendResponses(
  out: GenerationOutputSpec,
  args: GenerateResponsesArgs,
): GenerateResponsesResult {
  const { batch, tokenizer, inputLengths, includeLogprobs = true, structuredCfg = null } = args;
  const skipSpecialTokens = structuredDecodeSkipSpecial(structuredCfg, tokenizer);
  const logs = batch.get("message_log") as MessageLog[];
  const genIds: TokenIds[] = [];
  const newLogs: MessageLog[] = [];
  const errors = inputLengths.map((_, i) => out.errors?.[i] ?? null);
  for (let i = 0; i < inputLengths.length; i++) {
    if (errors[i] !== null) {
      genIds.push([]);
      newLogs.push(logs[i]!);
      continue;
    }
    const message = responseMessage(out, i, inputLengths[i]!, tokenizer, skipSpecialTokens, includeLogprobs);
    genIds.push(message.token_ids);
    newLogs.push([...logs[i]!, message]);
  }
  const lengths = out.generation_lengths.filter((_, i) => errors[i] === null);
  const metrics: GenerationMetrics = {
    mean_generation_length: lengths.length ? lengths.reduce((a, b) => a + b, 0) / lengths.length : 0,
    total_generated_tokens: lengths.reduce((a, b) => a + b, 0),
  };
  if (out.truncated) metrics._response_truncated = out.truncated.map((t, i) => errors[i] === null && Boolean(t));
  if (errors.some((e) => e !== null)) metrics._row_errors = errors;
  const newBatch = new BatchedDataDict({ ...batch.data, message_log: newLogs });
  return [newBatch, genIds, metrics];
}

/** Row `i`'s response as an assistant message: `gen_ids[i] = output_ids[i, input_len:unpadded_len]`, as plain arrays. */
function responseMessage(
  out: GenerationOutputSpec,
  i: number,
  inputLength: number,
  tokenizer: TokenizerInterface,
  skipSpecialTokens: boolean,
  includeLogprobs: boolean,
): Message {
  const ids = plainSlice(out.output_ids[i]!, inputLength, out.unpadded_sequence_lengths[i]!);
  const message: Message = { role: "assistant", content: tokenizer.decode(ids, { skipSpecialTokens }), token_ids: ids };
  if (includeLogprobs && out.logprobs) message.generation_logprobs = plainSlice(out.logprobs[i]!, inputLength, out.unpadded_sequence_lengths[i]!);
  return message;
}

export async function generateResponses(args: GenerateResponsesArgs): Promise<GenerateResponsesResult> {
  const data = withStopStrings(args.generationInputData, args.batch);
  const out = await args.policyGeneration.generate(data, args.greedy ?? false, args.options);
  return appendResponses(out, args);
}

/** Consumes `generateAsync`, orders rows by their original index, then proceeds as `generateResponses`. */
export async function generateResponsesAsync(args: GenerateResponsesArgs): Promise<GenerateResponsesResult> {
  const policy = args.policyGeneration;
  if (!policy.generateAsync) return generateResponses(args);
  const data = withStopStrings(args.generationInputData, args.batch);
  const out = await asyncRows(policy, data, args.greedy ?? false, args.options, args.tokenizer.padTokenId);
  const [batch, genIds, metrics] = appendResponses(out, args);
  if (out.gen_leader_worker_idx?.length) metrics.gen_leader_worker_idx = Math.trunc(out.gen_leader_worker_idx[0]!);
  return [batch, genIds, metrics];
}

/** `generate_async`'s rows, ordered by their original index and merged (a single row as it is). */
async function asyncRows(
  policy: GenerationInterface,
  data: GenerationDatumSpec,
  greedy: boolean,
  options: GenerateOptions | undefined,
  padId: number,
): Promise<GenerationOutputSpec> {
  const rows: [number, GenerationOutputSpec][] = [];
  for await (const row of policy.generateAsync!(data, greedy, options)) rows.push(row);
  if (rows.length === 0) throw new Error("generate_async returned no rows");
  rows.sort((a, b) => a[0] - b[0]);
  return mergeOutputRows(rows.map((r) => r[1]), padId);
}

/** `BatchedDataDict.from_batches` for generation outputs: one-row outputs, right-padded to the longest. */
export function mergeOutputRows(rows: GenerationOutputSpec[], padId: number): GenerationOutputSpec {
  const width = Math.max(...rows.map((r) => r.output_ids[0]?.length ?? 0));
  // A row already as wide as the widest is used as it is (one sample's turn, the async path: no copy).
  const ids = (row: Int32Array) => (row.length === width ? row : widened(new Int32Array(width), row, padId));
  const logprobs = (row: Float64Array) => (row.length === width ? row : widened(new Float64Array(width), row, 0));
  const hasErrors = rows.some((r) => r.errors?.[0]);
  const hasWorker = rows.some((r) => r.gen_leader_worker_idx);
  return {
    output_ids: rows.map((r) => ids(r.output_ids[0]!)),
    logprobs: rows.map((r) => logprobs(r.logprobs[0]!)),
    generation_lengths: rows.map((r) => r.generation_lengths[0]!),
    unpadded_sequence_lengths: rows.map((r) => r.unpadded_sequence_lengths[0]!),
    truncated: rows.map((r) => Boolean(r.truncated[0])),
    ...(hasErrors ? { errors: rows.map((r) => r.errors?.[0] ?? null) } : {}),
    ...(hasWorker ? { gen_leader_worker_idx: rows.map((r) => r.gen_leader_worker_idx?.[0] ?? 0) } : {}),
  };
}

/** `row[start:end]` as a plain array (a loop: `Array.from` of a typed array goes through its iterator). */
export function plainSlice(row: Int32Array | Float64Array, start: number, end: number): number[] {
  const to = Math.min(end, row.length);
  const out = new Array<number>(Math.max(0, to - start));
  for (let i = start; i < to; i++) out[i - start] = row[i]!;
  return out;
}

/** One row of a generation output, as a one-row output (what `generateAsync` yields for it). */
export function outputRow(out: GenerationOutputSpec, row: number): GenerationOutputSpec {
  return {
    output_ids: [out.output_ids[row]!],
    logprobs: [out.logprobs[row]!],
    generation_lengths: [out.generation_lengths[row]!],
    unpadded_sequence_lengths: [out.unpadded_sequence_lengths[row]!],
    truncated: [out.truncated[row]!],
    ...(out.errors ? { errors: [out.errors[row] ?? null] } : {}),
    ...(out.gen_leader_worker_idx ? { gen_leader_worker_idx: [out.gen_leader_worker_idx[row]!] } : {}),
  };
}

/** `row` written into the start of `wide`, the rest `value`. */
function widened<T extends Int32Array | Float64Array>(wide: T, row: T, value: number): T {
  wide.set(row);
  wide.fill(value, row.length);
  return wide;
}

export interface GenerationInputOptions {
  padTokenId: number;
  maxSeqLen: number;
  maxNewTokens?: number;
  /** The lab's row identity (batch position, turn), passed on to the policy. */
  sampleIds?: readonly number[];
  turns?: readonly number[];
  /**
   * The rollout's kept contexts, keyed by `sampleIds`: each row is then a view of its sample's context, which costs
   * only the tokens added since its last turn. Without it the rows are built afresh.
   */
  contexts?: ContextRows;
}

/** The generation input for some logs: right-padded ids, lengths, stop strings and the new-token budget. */
export function buildGenerationInput(
  logs: readonly MessageLog[],
  stopStrings: readonly (string[] | null)[],
  options: GenerationInputOptions,
): GenerationDatumSpec {
  const { padTokenId, maxSeqLen, maxNewTokens, sampleIds, turns } = options;
  if (options.contexts && !sampleIds) throw new Error("buildGenerationInput: kept contexts need sampleIds");
  const contexts = options.contexts ?? new ContextRows(padTokenId);
  const { rows, lengths, contextIds } = contexts.rows(logs, sampleIds ?? logs.map((_, i) => i));
  return {
    input_ids: rows,
    input_lengths: lengths,
    stop_strings: stopStrings.map((s) => (s ? [...s] : null)),
    max_new_tokens: lengths.map((n) => Math.max(0, Math.min(maxNewTokens ?? maxSeqLen, maxSeqLen - n))),
    ...(sampleIds ? { sample_ids: [...sampleIds], turns: turns ? [...turns] : sampleIds.map(() => 0) } : {}),
    // Only kept contexts tell a policy anything: fresh ones are new every call.
    ...(options.contexts ? { context_ids: contextIds } : {}),
  };
}

export interface SampleTurnArgs {
  policyGeneration: GenerationInterface;
  sampleMessageLog: MessageLog;
  sampleStopStrings: string[] | null;
  tokenizer: TokenizerInterface;
  maxSeqLen: number;
  greedy?: boolean;
  structuredCfg?: StructuredToolUseConfig | null;
  maxNewTokens?: number;
  options?: GenerateOptions;
  /** The lab's row identity (batch position, turn) passed on to the policy. */
  sampleId?: number;
  turn?: number;
  /** The rollout's kept contexts (see `GenerationInputOptions.contexts`); needs `sampleId`. */
  contexts?: ContextRows;
}

/**
 * One sample's generation for one turn. Returns the extended log (the input log is left as it was).
 *
 * The reference hands `generate_responses_async` a batch of this one sample; this does what that call does for one
 * row (the same input, stop strings, rows, message and metrics) without building the one-row batches around it: the
 * async rollout makes this call once per sample and turn.
 */
export async function asyncGenerateResponseForSampleTurn(
  args: SampleTurnArgs,
): Promise<[MessageLog, TokenIds, number, GenerationMetrics]> {
  const { policyGeneration: policy, tokenizer } = args;
  const input = buildGenerationInput([args.sampleMessageLog], [args.sampleStopStrings], {
    padTokenId: tokenizer.padTokenId,
    maxSeqLen: args.maxSeqLen,
    maxNewTokens: args.maxNewTokens,
    ...(args.sampleId !== undefined ? { sampleIds: [args.sampleId], turns: [args.turn ?? 0], contexts: args.contexts } : {}),
  });
  const greedy = args.greedy ?? false;
  // `generate_responses_async`'s collection when the policy has `generate_async`, else `generate_responses`'s call.
  const viaAsync = policy.generateAsync !== undefined;
  const out = viaAsync
    ? await asyncRows(policy, input, greedy, args.options, tokenizer.padTokenId)
    : await policy.generate(input, greedy, args.options);
  const rowError = out.errors?.[0];
  if (rowError) throw new GenerationError(rowError);
  const inputLength = input.input_lengths[0]!;
  const skipSpecialTokens = structuredDecodeSkipSpecial(args.structuredCfg ?? null, tokenizer);
  const message = responseMessage(out, 0, inputLength, tokenizer, skipSpecialTokens, true);
  const generated = out.generation_lengths[0]!;
  const metrics: GenerationMetrics = { mean_generation_length: generated, total_generated_tokens: generated };
  if (out.truncated) metrics._response_truncated = [Boolean(out.truncated[0])];
  if (viaAsync && out.gen_leader_worker_idx?.length) metrics.gen_leader_worker_idx = Math.trunc(out.gen_leader_worker_idx[0]!);
  return [[...args.sampleMessageLog, message], message.token_ids, inputLength, metrics];
}

export class GenerationError extends LabError {
  override name = "GenerationError";
  override readonly code = "generation_failed";
}
