/**
 * The training–inference mismatch of a sample whose dump has both log-probabilities of its tokens (issue 19 item 2):
 * `generation_logprobs` (the inference engine's, as it sampled) against `prev_logprobs` (the trainer's recomputation
 * of the same tokens), over the tokens that are trained (`token_loss_mask`). Per token Δ = prev − generation; the
 * sample's mean |Δ|, max |Δ|, share of tokens with |Δ| over a threshold, and the sequence-level importance ratio
 * exp(Σ Δ) = π_trainer(y) / π_inference(y), which is 1 when the two agree.
 */

import type { SampleView } from "./run-model.js";

/** |Δ| above this counts a token as mismatched (nats: e^0.5 ≈ 1.65× in probability). */
export const MISMATCH_THRESHOLD = 0.5;

export interface SampleMismatch {
  /** Trained tokens compared. */
  tokens: number;
  meanAbs: number;
  maxAbs: number;
  /** The token (index in the sample's sequence) where |Δ| is largest. */
  maxAt: number;
  /** Share of the compared tokens with |Δ| > MISMATCH_THRESHOLD. */
  overThreshold: number;
  /** exp(Σ Δ): the sequence-level importance ratio of the trainer's policy over the engine's. */
  sequenceRatio: number;
  /** Per token of the sequence: Δ where compared, null elsewhere (the per-token view). */
  deltas: (number | null)[];
}

const isNumbers = (v: unknown): v is number[] => Array.isArray(v) && v.every((x) => typeof x === "number" && Number.isFinite(x));

/** The sample's engine log-probabilities over its whole sequence: the dump's row, or its messages' (prompt tokens 0). */
function generationRow(sample: SampleView, fields: Record<string, unknown>): number[] | null {
  if (isNumbers(fields.generation_logprobs)) return fields.generation_logprobs;
  const row: number[] = [];
  let any = false;
  for (const m of sample.messages) {
    const lps = m.generation_logprobs;
    const n = m.token_ids.length;
    if (lps && lps.length === n) {
      any = true;
      for (let i = 0; i < n; i++) row.push(lps[i]!);
    } else for (let i = 0; i < n; i++) row.push(0);
  }
  return any ? row : null;
}

/** The mismatch of a sample from its imported fields (`prev_logprobs`, `token_loss_mask`), or null without them. */
export function sampleMismatch(sample: SampleView, imported: unknown): SampleMismatch | null {
  const fields = (imported as { fields?: Record<string, unknown> } | null | undefined)?.fields;
  if (!fields || !isNumbers(fields.prev_logprobs)) return null;
  const prev = fields.prev_logprobs;
  const gen = generationRow(sample, fields);
  if (!gen) return null;
  const mask = isNumbers(fields.token_loss_mask) ? fields.token_loss_mask : null;
  const n = Math.min(prev.length, gen.length);
  const deltas: (number | null)[] = new Array(n).fill(null);
  let tokens = 0;
  let sumAbs = 0;
  let sum = 0;
  let maxAbs = 0;
  let maxAt = -1;
  let over = 0;
  for (let i = 0; i < n; i++) {
    if (mask ? mask[i] === 0 : gen[i] === 0 && prev[i] === 0) continue;
    const d = prev[i]! - gen[i]!;
    deltas[i] = d;
    const a = Math.abs(d);
    tokens++;
    sumAbs += a;
    sum += d;
    if (a > maxAbs || maxAt < 0) {
      maxAbs = a;
      maxAt = i;
    }
    if (a > MISMATCH_THRESHOLD) over++;
  }
  if (tokens === 0) return null;
  return { tokens, meanAbs: sumAbs / tokens, maxAbs, maxAt, overThreshold: over / tokens, sequenceRatio: Math.exp(sum), deltas };
}

export interface RunMismatch {
  samples: number;
  tokens: number;
  /** Mean |Δ| over every compared token of the run. */
  meanAbs: number;
  maxAbs: number;
  overThreshold: number;
  /** The samples whose sequence ratio is outside [0.5, 2]: the ones an importance-sampling correction clips hardest. */
  ratioOutliers: number;
}

/** The run's mismatch over the samples that have one; null when none has. */
export function runMismatch(samples: readonly SampleView[], imported: readonly unknown[] | undefined): RunMismatch | null {
  if (!imported) return null;
  let count = 0;
  let tokens = 0;
  let sumAbs = 0;
  let maxAbs = 0;
  let over = 0;
  let outliers = 0;
  for (const s of samples) {
    const m = sampleMismatch(s, imported[s.sample]);
    if (!m) continue;
    count++;
    tokens += m.tokens;
    sumAbs += m.meanAbs * m.tokens;
    maxAbs = Math.max(maxAbs, m.maxAbs);
    over += m.overThreshold * m.tokens;
    if (m.sequenceRatio < 0.5 || m.sequenceRatio > 2) outliers++;
  }
  if (count === 0) return null;
  return { samples: count, tokens, meanAbs: sumAbs / tokens, maxAbs, overThreshold: over / tokens, ratioOutliers: outliers };
}
