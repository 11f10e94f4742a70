/**
 * A generation backend for policies that produce text rather than tokens (scripted, oracle, replay, human):
 * each row's text is cut the way an inference engine cuts it, then tokenized.
 *
 * The cut (scenario-format.md, "Policies"): right after the stop string occurrence that ends earliest in the
 * text, among the row's stop strings (the stop string is kept); a text not cut so gets the EOS token; the tokens
 * are then cut to the row's `max_new_tokens`, which sets `truncated`. Every token's log-probability is 0.
 */

import type {
  GenerateOptions,
  GenerationDatumSpec,
  GenerationInterface,
  GenerationOutputSpec,
  TokenizerInterface,
} from "../core/index.js";

export interface TextRequest {
  /** The row's batch position and turn index. */
  sampleId: number;
  turn: number;
  /** The whole prompt, decoded with nothing skipped. */
  promptText: string;
  promptIds: number[];
  stopStrings: string[] | null;
}

/** A row's text, or an Error that fails only that row. */
export type TextResponder = (request: TextRequest, signal?: AbortSignal) => string | Error | Promise<string | Error>;

/** Cuts `text` right after the stop string occurrence that ends earliest; null when none occurs. */
export function cutAtStopStrings(text: string, stopStrings: readonly string[] | null): string | null {
  let end = Infinity;
  for (const stop of stopStrings ?? []) {
    if (!stop) continue;
    const at = text.indexOf(stop);
    if (at >= 0) end = Math.min(end, at + stop.length);
  }
  return end === Infinity ? null : text.slice(0, end);
}

export interface TextGeneration {
  ids: number[];
  truncated: boolean;
}

/** The engine-like cut of one row's text into generated token ids. */
export function textToGeneration(
  text: string,
  stopStrings: readonly string[] | null,
  maxNewTokens: number,
  tokenizer: TokenizerInterface,
): TextGeneration {
  const cut = cutAtStopStrings(text, stopStrings);
  let ids = cut !== null ? tokenizer.encode(cut) : [...tokenizer.encode(text), tokenizer.eosTokenId];
  let truncated = false;
  if (ids.length > maxNewTokens) {
    ids = ids.slice(0, maxNewTokens);
    truncated = true;
  }
  return { ids, truncated };
}

export class TextPolicy implements GenerationInterface {
  constructor(
    private readonly tokenizer: TokenizerInterface,
    private readonly respond: TextResponder,
  ) {}

  async generate(data: GenerationDatumSpec, _greedy: boolean, options: GenerateOptions = {}): Promise<GenerationOutputSpec> {
    const rows = await Promise.all(data.input_lengths.map((_, row) => this.generateRow(data, row, options)));
    return mergeRows(rows, this.tokenizer.padTokenId);
  }

  async *generateAsync(
    data: GenerationDatumSpec,
    greedy: boolean,
    options: GenerateOptions = {},
  ): AsyncIterable<[number, GenerationOutputSpec]> {
    for (let row = 0; row < data.input_lengths.length; row++) {
      const one = await this.generateRow(data, row, options);
      yield [row, mergeRows([one], this.tokenizer.padTokenId)];
    }
    void greedy;
  }

  private async generateRow(data: GenerationDatumSpec, row: number, options: GenerateOptions): Promise<RowOutput> {
    const promptIds = data.input_ids[row]!.slice(0, data.input_lengths[row]);
    const request: TextRequest = {
      sampleId: data.sample_ids?.[row] ?? row,
      turn: data.turns?.[row] ?? 0,
      promptText: this.tokenizer.decode(promptIds),
      promptIds,
      stopStrings: data.stop_strings[row] ?? null,
    };
    let text: string | Error;
    try {
      text = await this.respond(request, options.signal);
    } catch (e) {
      if (options.signal?.aborted) throw e;
      text = e instanceof Error ? e : new Error(String(e));
    }
    if (text instanceof Error) return { promptIds, ids: [], truncated: false, error: text.message };
    const { ids, truncated } = textToGeneration(text, request.stopStrings, data.max_new_tokens[row]!, this.tokenizer);
    if (options.onToken) for (const id of ids) options.onToken(row, id, this.tokenizer.decode([id]));
    return { promptIds, ids, truncated, error: null };
  }
}

interface RowOutput {
  promptIds: number[];
  ids: number[];
  truncated: boolean;
  error: string | null;
}

function mergeRows(rows: RowOutput[], padId: number): GenerationOutputSpec {
  const width = Math.max(0, ...rows.map((r) => r.promptIds.length + r.ids.length));
  const padded = (xs: number[], value: number) => [...xs, ...new Array(width - xs.length).fill(value)];
  return {
    output_ids: rows.map((r) => padded([...r.promptIds, ...r.ids], padId)),
    logprobs: rows.map((r) => padded(new Array(r.promptIds.length + r.ids.length).fill(0), 0)),
    generation_lengths: rows.map((r) => r.ids.length),
    unpadded_sequence_lengths: rows.map((r) => r.promptIds.length + r.ids.length),
    truncated: rows.map((r) => r.truncated),
    ...(rows.some((r) => r.error) ? { errors: rows.map((r) => r.error) } : {}),
  };
}
