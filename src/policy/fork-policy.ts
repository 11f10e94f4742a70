/**
 * The policy side of a fork (runs in the rollout worker, and in Node for the tests): a wrapper around the run's
 * policy, whatever it is (model, oracle, scripted, replay, human), that
 *
 * 1. shows the policy the fork's row as the original's: the fork's turn j is the original's turn
 *    `turnOffset + j`, and its row is the original's batch position `sampleId`. Scripts and replays therefore go on
 *    with the original's next turn, and seeded draws (a model's sampling, the oracle's mistakes; both seeded by
 *    sample and turn) continue the original's streams, so a fork with nothing edited reproduces the original;
 * 2. when the fork edits an assistant turn, answers the fork's first generation with the edited text instead of
 *    asking the policy: the text goes through the same engine-like cut as every text policy (cut after the
 *    earliest stop string, else followed by EOS; then cut to the row's token budget), tokenized with the policy's
 *    own tokenizer; its tokens' log-probabilities are 0 (the policy did not sample them). Every later generation
 *    is the policy's.
 *
 * These are lab settings beside the scenario (the scenario format has no key for them; see fork-scenario.ts).
 */

import type { GenerateOptions, GenerationDatumSpec, GenerationInterface, GenerationOutputSpec, TokenizerInterface } from "../core/index.js";
import { TextPolicy } from "./text-policy.js";

/** A policy as the runner holds it (the scenario runner's `LoadedPolicy` has this shape). */
export interface LoadedPolicy {
  generation: GenerationInterface;
  tokenizer: TokenizerInterface;
  dispose?: () => Promise<void>;
}

/** How a fork's rollout continues the original's (sent to the worker with the run, beside the scenario). */
export interface ForkContinuation {
  /** The batch position the policy sees for the fork's row (the original sample's, for seeded policies). */
  sampleId: number;
  /** The original's turn number of the fork's first turn. */
  turnOffset: number;
  /** The fork's first response, when it edits an assistant turn. */
  forcedResponse?: string;
}

function remapped(data: GenerationDatumSpec, fork: ForkContinuation): GenerationDatumSpec {
  const rows = data.input_lengths.length;
  return {
    ...data,
    sample_ids: new Array<number>(rows).fill(fork.sampleId),
    turns: Array.from({ length: rows }, (_, i) => (data.turns?.[i] ?? 0) + fork.turnOffset),
  };
}

/** Whether this generation is the fork's first one (every row at the fork's own turn 0). */
const isFirst = (data: GenerationDatumSpec) => data.input_lengths.every((_, i) => (data.turns?.[i] ?? 0) === 0);

class ForkGeneration implements GenerationInterface {
  readonly generateAsync?: GenerationInterface["generateAsync"];
  private readonly forced: TextPolicy | null;

  constructor(
    private readonly inner: GenerationInterface,
    private readonly fork: ForkContinuation,
    tokenizer: LoadedPolicy["tokenizer"],
  ) {
    // An edited text that still ends with the end-of-turn marker (a content decoded with specials kept) does not
    // get a second one: the engine-like cut adds it back.
    const eosText = tokenizer.decode([tokenizer.eosTokenId]);
    const given = fork.forcedResponse;
    const text = given !== undefined && eosText && given.endsWith(eosText) ? given.slice(0, -eosText.length) : given;
    this.forced = text === undefined ? null : new TextPolicy(tokenizer, () => text);
    if (inner.generateAsync) this.generateAsync = (data, greedy, options) => this.rowsAsync(data, greedy, options);
  }

  generate(data: GenerationDatumSpec, greedy: boolean, options?: GenerateOptions): Promise<GenerationOutputSpec> {
    if (this.forced && isFirst(data)) return this.forced.generate(data, greedy, options);
    return this.inner.generate(remapped(data, this.fork), greedy, options);
  }

  /** The fork's samples are the original's sample to the policy (`remapped`). */
  releaseSamples(sampleIds: readonly number[]): void {
    this.inner.releaseSamples?.(sampleIds.map(() => this.fork.sampleId));
  }

  private async *rowsAsync(data: GenerationDatumSpec, greedy: boolean, options?: GenerateOptions): AsyncIterable<[number, GenerationOutputSpec]> {
    if (this.forced && isFirst(data)) {
      yield* this.forced.generateAsync(data, greedy, options);
      return;
    }
    yield* this.inner.generateAsync!(remapped(data, this.fork), greedy, options);
  }
}

/** The run's policy as a fork's rollout uses it (the tokenizer and the disposal stay the policy's). */
export function forkPolicy(policy: LoadedPolicy, fork: ForkContinuation): LoadedPolicy {
  return { ...policy, generation: new ForkGeneration(policy.generation, fork, policy.tokenizer) };
}
