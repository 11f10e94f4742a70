/**
 * A generation backend for policies that produce text rather than tokens (scripted, oracle, replay, human):
 * each row's text is cut the way an inference engine cuts it, then tokenized.
 *
 * The cut (scenario-format.md, "Policies"): right after the stop string occurrence that ends earliest in the
 * text, among the row's stop strings (the stop string is kept); a text not cut so gets the EOS token; the tokens
 * are then cut to the row's `max_new_tokens`, which sets `truncated`. Every token's log-probability is 0.
 */

import {
  plainSlice,
  type GenerateOptions,
  type GenerationDatumSpec,
  type GenerationInterface,
  type GenerationOutputSpec,
  type TokenizerInterface,
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
  /**
   * Each sample's last prompt (a copy the policy owns, in a typed array the garbage collector need not move), its
   * text and the context it came from. A turn's prompt is the last one plus the tokens since, so only those are
   * decoded (decoding the whole context every turn adds up over long rollouts). Used only when the new prompt starts
   * with the cached one (known from the context id, `GenerationDatumSpec.context_ids`, or else checked token by
   * token) and the cached one ends on a character boundary (an ASCII byte or an added marker), where decoding in two
   * parts gives the same text as decoding at once.
   */
  private readonly decoded = new Map<number, { ids: Int32Array; length: number; text: string; contextId: number | undefined }>();
  /** Each sample's output row buffer, how much of its last prompt it holds, and that prompt's context (`mergeRows`). */
  private readonly outputs = new Map<number, { ids: Int32Array; prompt: number; contextId: number | undefined }>();

  constructor(
    private readonly tokenizer: TokenizerInterface,
    private readonly respond: TextResponder,
  ) {}

  async generate(data: GenerationDatumSpec, _greedy: boolean, options: GenerateOptions = {}): Promise<GenerationOutputSpec> {
    const rows = await Promise.all(data.input_lengths.map((_, row) => this.generateRow(data, row, options)));
    return this.mergeRows(rows);
  }

  async *generateAsync(
    data: GenerationDatumSpec,
    greedy: boolean,
    options: GenerateOptions = {},
  ): AsyncIterable<[number, GenerationOutputSpec]> {
    for (let row = 0; row < data.input_lengths.length; row++) {
      const one = await this.generateRow(data, row, options);
      yield [row, this.mergeRows([one])];
    }
    void greedy;
  }

  private promptText(sampleId: number, input: Int32Array, length: number, contextId: number | undefined): string {
    let cached = this.decoded.get(sampleId);
    const extendsCached = cached && cached.length <= length && (sameContext(cached.contextId, contextId) || startsWith(input, cached.ids, cached.length));
    if (cached && extendsCached) {
      const since = input.subarray(cached.length, length);
      cached.text += this.tokenizer.decode(plainSlice(input, cached.length, length));
      if (cached.ids.length < length) {
        const grown = new Int32Array(Math.max(length, 2 * cached.ids.length));
        grown.set(cached.ids.subarray(0, cached.length));
        cached.ids = grown;
      }
      cached.ids.set(since, cached.length);
      cached.length = length;
      cached.contextId = contextId;
    } else {
      const ids = input.slice(0, length);
      cached = { ids, length, text: this.tokenizer.decode(plainSlice(ids, 0, length)), contextId };
    }
    const last = cached.ids[length - 1];
    if (length > 0 && last !== undefined && (last < 0x80 || last >= 256)) this.decoded.set(sampleId, cached);
    else this.decoded.delete(sampleId);
    return cached.text;
  }

  private async generateRow(data: GenerationDatumSpec, row: number, options: GenerateOptions): Promise<RowOutput> {
    const input = data.input_ids[row]!;
    const promptLength = data.input_lengths[row]!;
    const sampleId = data.sample_ids?.[row] ?? row;
    const contextId = data.context_ids?.[row];
    const request = new RowRequest(sampleId, data.turns?.[row] ?? 0, data.stop_strings[row] ?? null, input, promptLength, () =>
      this.promptText(sampleId, input, promptLength, contextId),
    );
    let text: string | Error;
    try {
      text = await this.respond(request, options.signal);
    } catch (e) {
      if (options.signal?.aborted) throw e;
      text = e instanceof Error ? e : new Error(String(e));
    }
    if (text instanceof Error) return { sampleId, contextId, input, promptLength, ids: [], truncated: false, error: text.message };
    const { ids, truncated } = textToGeneration(text, request.stopStrings, data.max_new_tokens[row]!, this.tokenizer);
    if (options.onToken) for (const id of ids) options.onToken(row, id, this.tokenizer.decode([id]));
    return { sampleId, contextId, input, promptLength, ids, truncated, error: null };
  }
  /**
   * The rows' output: each row is a view of a buffer kept for its sample (valid until the sample's next call, as the
   * interface allows), so a turn allocates no context-sized array per sample.
   */
  private mergeRows(rows: RowOutput[]): GenerationOutputSpec {
    const padId = this.tokenizer.padTokenId;
    let width = 0;
    for (const r of rows) width = Math.max(width, r.promptLength + r.ids.length);
    const outputRow = (r: RowOutput) => {
      let kept = this.outputs.get(r.sampleId);
      // What the kept row already holds of this prompt: its last prompt, when this one extends it (same context).
      const known = kept && sameContext(kept.contextId, r.contextId) ? Math.min(kept.prompt, r.promptLength) : 0;
      if (!kept || kept.ids.length < width) {
        const ids = new Int32Array(Math.max(width, 2 * (kept?.ids.length ?? 0), 256));
        if (kept && known) ids.set(kept.ids.subarray(0, known));
        kept = { ids, prompt: 0, contextId: undefined };
        this.outputs.set(r.sampleId, kept);
      }
      kept.ids.set(r.input.subarray(known, r.promptLength), known);
      kept.ids.set(r.ids, r.promptLength);
      kept.ids.fill(padId, r.promptLength + r.ids.length, width);
      kept.prompt = r.promptLength;
      kept.contextId = r.contextId;
      return kept.ids.subarray(0, width);
    };
    return {
      output_ids: rows.map(outputRow),
      // Every token's log-probability is 0, and so is the padding's: the rows share one (read-only) row of zeros.
      logprobs: new Array<Float64Array>(rows.length).fill(zeros(width)),
      generation_lengths: rows.map((r) => r.ids.length),
      unpadded_sequence_lengths: rows.map((r) => r.promptLength + r.ids.length),
      truncated: rows.map((r) => r.truncated),
      ...(rows.some((r) => r.error) ? { errors: rows.map((r) => r.error) } : {}),
    };
  }
}

/**
 * A row's request. The prompt's text and ids are made only for a responder that reads them (a script, a replay do
 * not). A class rather than an object literal with getters, which is far slower to create, once per row and turn.
 */
class RowRequest implements TextRequest {
  private text: string | null = null;
  private ids: number[] | null = null;

  constructor(
    readonly sampleId: number,
    readonly turn: number,
    readonly stopStrings: string[] | null,
    private readonly input: Int32Array,
    private readonly promptLength: number,
    private readonly decodeText: () => string,
  ) {}

  get promptText(): string {
    return (this.text ??= this.decodeText());
  }

  get promptIds(): number[] {
    return (this.ids ??= plainSlice(this.input, 0, this.promptLength));
  }
}

/** Two rows come from one context, so the later one's prompt starts with the earlier one's. */
const sameContext = (a: number | undefined, b: number | undefined) => a !== undefined && a === b;

/** `ids` starts with the first `length` entries of `prefix`. */
function startsWith(ids: Int32Array, prefix: Int32Array, length: number): boolean {
  for (let i = 0; i < length; i++) if (ids[i] !== prefix[i]) return false;
  return true;
}

interface RowOutput {
  sampleId: number;
  contextId: number | undefined;
  /** The row of the generation input (the prompt, maybe right-padded), and the prompt's length. */
  input: Int32Array;
  promptLength: number;
  ids: number[];
  truncated: boolean;
  error: string | null;
}

let keptZeros = new Float64Array(1024);

/** A read-only row of `n` zeros: a view of one kept row (grown as needed), not a new allocation each turn. */
function zeros(n: number): Float64Array {
  if (keptZeros.length < n) keptZeros = new Float64Array(Math.max(n, 2 * keptZeros.length));
  return keptZeros.subarray(0, n);
}
