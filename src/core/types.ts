/**
 * Data shapes of the rollout machinery (upstream-rollouts.md §1), in TypeScript.
 *
 * Tensors become plain arrays: `token_ids` is a number array, `generation_logprobs` a number array of the same
 * length. Field names keep the reference's snake_case so a message log reads like the spec and serialises to the
 * scenario result format unchanged.
 */

import type { Violation } from "./assessment/violations.js";

/** A token id: a vocabulary index, an integer from 0 to 2^31 − 1 (the page stores them as int32: src/app/run/compact-messages.ts). */
export type TokenId = number;

/**
 * A list of token ids, as every boundary passes one: a message's `token_ids` (in a log, in the rollout events, in a
 * compact message's fresh copy), what a tokenizer decodes. Read-only: whoever receives one does not change it (a
 * rollout's messages are shared by its log, its events and the page's run model).
 */
export type TokenIds = readonly TokenId[];

export type Role = "system" | "user" | "assistant" | "environment" | "tool" | (string & {});

/** One message of a log. Every per-token field has the message's token count as its length. */
export interface Message {
  role: Role;
  content: string;
  token_ids: TokenIds;
  /** Sampling log-probabilities of the generated tokens: only on assistant messages made by the rollout. */
  generation_logprobs?: number[];
  /** Per-turn verdicts stamped by the rollout when the invalid-action assessment is on and found something. */
  invalid_action_violations?: Violation[];
}

export type MessageLog = Message[];

/** What an environment receives: the log reduced to `role` and `content` (get_keys_from_message_log). */
export interface EnvMessage {
  role: Role;
  content: string;
}

export type Metadata = Record<string, unknown> | null;

/** One dataset row (upstream-rollouts.md §1.2). */
export interface DatumSpec {
  message_log: MessageLog;
  length: number;
  extra_env_info: Metadata;
  loss_multiplier: number;
  idx: number;
  task_name: string;
  stop_strings: string[] | null;
  [extra: string]: unknown;
}

/** Rewards of one step call: one number per sample, or named components (multi-reward). */
export type StepRewards = number[] | Record<string, number[]>;

/** The six-field environment return; every field is aligned with the input order of that `step` call. */
export interface EnvironmentReturn {
  observations: EnvMessage[];
  metadata: Metadata[];
  next_stop_strings: (string[] | null)[] | null;
  rewards: StepRewards;
  terminateds: (boolean | number)[];
  answers: (string | null)[] | null;
}

/**
 * What the rollout tells a step besides its inputs (a lab addition; environments may ignore it): the step's deadline
 * (`envStepTimeoutMs`), and a signal aborted when the deadline passes, so work done for the step (a remote
 * environment's HTTP request) can be cancelled rather than left running after the step was given up.
 */
export interface StepContext {
  /** The step's deadline in ms; absent when the rollout sets none. */
  timeoutMs?: number;
  /** Aborted (with the timeout error as its reason) when the deadline passes. */
  signal?: AbortSignal;
}

export interface EnvironmentInterface {
  /** Steps a group of samples of this task. May be synchronous or return a promise. */
  step(messageLogBatch: EnvMessage[][], metadata: Metadata[], context?: StepContext): EnvironmentReturn | Promise<EnvironmentReturn>;
  /**
   * Declared by the reference interface; no rollout calls it. The lab calls it after a run, with the samples of the
   * environment's task, and shows its metrics beside the rollout's (src/scenario/environment-metrics.ts).
   */
  globalPostProcessAndMetrics?(
    batch: Record<string, unknown[]>,
  ): [Record<string, unknown[]>, Record<string, number>] | Promise<[Record<string, unknown[]>, Record<string, number>]>;
}

/**
 * Input to a generation backend (upstream-rollouts.md §1.3), one row per sample.
 *
 * The reference's `[B, S]` tensors are rows of typed arrays: contexts of thousands of tokens go to the policy every
 * turn, and plain arrays of numbers that size cost the garbage collector more than the rollout's own work. Rows may be
 * views of buffers the caller keeps (the rollouts keep each sample's context and hand out views of it): read them
 * during the call, copy what you keep, write nothing.
 */
export interface GenerationDatumSpec {
  /** Right-padded with the tokenizer's pad id, every row as wide as the widest prompt. */
  input_ids: Int32Array[];
  input_lengths: number[];
  stop_strings: (string[] | null)[];
  /** Per-row cap on new tokens: min(configured, max_seq_len − prompt), decision 3. */
  max_new_tokens: number[];
  /**
   * The lab's addition: each row's batch position and turn index, for policies that act per sample (scripted,
   * replay, seeded oracle). Language models ignore them.
   */
  sample_ids?: number[];
  turns?: number[];
  /**
   * The lab's addition, a hint for policies that keep per-sample state: per row, the id of the context it was read
   * from. Rows with the same id extend one another (a later row's prompt starts with an earlier row's prompt), so a
   * policy may skip re-reading (re-copying, re-checking) the part it has seen. The rollouts give each sample's context
   * a fresh id when it starts or starts over; ids are unique in the process. A policy that ignores it loses nothing.
   */
  context_ids?: number[];
}

/** Output of a generation backend. Rows are typed arrays as in the input; they may share buffers (read-only). */
export interface GenerationOutputSpec {
  /** Prompt followed by the generated tokens, right-padded. */
  output_ids: Int32Array[];
  generation_lengths: number[];
  unpadded_sequence_lengths: number[];
  /** Zeros at prompt positions; the generated-token log-probs at [input_len, unpadded_len). Float64: exactly the
   * numbers the policy computed. */
  logprobs: Float64Array[];
  /** The response hit its token limit without a stop. */
  truncated: boolean[];
  /** Per-row generation failure (the row's other fields are then ignored). */
  errors?: (string | null)[];
  gen_leader_worker_idx?: number[];
}

/** One of the most likely tokens of a generation step (a lab addition, for the token view's alternatives). */
export interface TokenAlternative {
  tokenId: TokenId;
  logprob: number;
  text: string;
}

/**
 * What a sampling policy knows of a generated token's step besides the token: lab-only, for the page's token view;
 * never part of a message, a result or an export.
 */
export interface TokenStepDetail {
  /** Entropy (nats) of the step's raw distribution: the one whose log-softmax gives `generation_logprobs`. */
  entropy: number;
  /** Its most likely tokens, most likely first (equal log-probabilities: lower id first). */
  top: TokenAlternative[];
}

export interface GenerateOptions {
  signal?: AbortSignal;
  /**
   * Called for every generated token of a row, with its decoded text, by policies that stream; a model policy also
   * passes the step's `detail` (entropy, top alternatives).
   */
  onToken?: (row: number, tokenId: TokenId, text: string, detail?: TokenStepDetail) => void;
}

export interface GenerationInterface {
  /** Batched, lock-step generation. */
  generate(data: GenerationDatumSpec, greedy: boolean, options?: GenerateOptions): Promise<GenerationOutputSpec>;
  /** Yields `[originalIndex, one-row output]` as rows finish, in any order. */
  generateAsync?(
    data: GenerationDatumSpec,
    greedy: boolean,
    options?: GenerateOptions,
  ): AsyncIterable<[number, GenerationOutputSpec]>;
  /**
   * The rollout is done with these samples (`sample_ids`): what the policy keeps for them (a model's KV caches) can
   * go. Called as each sample ends, in both paths.
   */
  releaseSamples?(sampleIds: readonly number[]): void;
}

export interface TokenizerInterface {
  /** Encodes text without adding special tokens (added markers are still single tokens). */
  encode(text: string): TokenId[];
  decode(ids: TokenIds, options?: { skipSpecialTokens?: boolean }): string;
  readonly padTokenId: number;
  readonly eosTokenId: number;
  /** What the chat template's generation prompt adds after the assistant header (e.g. `<think>\n`), if anything. */
  readonly generationPrefill?: string;
  /**
   * The tokenizer's own chat template, where it has a real one (a model's tokenizer, a scenario's `tokenizer`):
   * the `template` envelope renders observations with it. Absent: the built-in ChatML rendering.
   */
  applyChatTemplate?(
    messages: readonly { role: string; content: string }[],
    options: { tools?: readonly unknown[] | null; addGenerationPrompt: boolean },
  ): string;
}
