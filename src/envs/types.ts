/**
 * How an environment plugs into the lab: the core's `EnvironmentInterface`, a seeded dataset generator, and a
 * renderer-neutral view of its state for the UI. The built-in environments implement it in-process; a user's
 * environment module (`docs/environments.md`) default-exports an object of this shape, and environments in
 * another process or language are reached through the HTTP adapter (`docs/remote-environments.md`). Dataset
 * generation and the view may answer with a promise (an environment in a Worker or behind HTTP does).
 */

import type { EnvironmentInterface, Metadata } from "../core/index.js";

/** One generated datum before tokenization: the scenario builder tokenizes `message_log` contents as they are. */
export interface DatasetDatum {
  message_log: { role: string; content: string }[];
  extra_env_info: Metadata;
  stop_strings: string[] | null;
  task_name: string;
}

export interface DatasetRequest {
  size: number;
  seed: number;
  /** The environment's dataset settings (`dataset.config` of a scenario), unknown keys rejected. */
  config: Record<string, unknown>;
  taskName: string;
  /** The environment's own settings (the scenario's `envs.<task>.config` for the dataset's task). */
  envConfig?: Record<string, unknown>;
  /**
   * `"messages"`: the runner renders prompts with a real chat template (a scenario's `tokenizer`), so a datum
   * should give its prompt as raw chat messages (`RawPromptDatum`); absent or `"rendered"`: a `message_log` of
   * prompts rendered with the built-in ChatML template, as the reference datasets do. An environment that ignores
   * it keeps its `message_log`, tokenized as it is.
   */
  prompts?: "rendered" | "messages";
}

/** A generated datum whose prompt is raw chat messages (and OpenAI-style tools) for the active chat template. */
export interface RawPromptDatum extends Omit<DatasetDatum, "message_log"> {
  messages: { role: string; content: string }[];
  tools?: Record<string, unknown>[];
}

export type GeneratedDatum = DatasetDatum | RawPromptDatum;

/** What the UI draws for a sample's environment state; each kind has its own renderer. */
export type EnvView =
  | { kind: "grid"; title: string; size: number; cells: (number | null)[][]; caption: string }
  | { kind: "steps"; title: string; problem: string; steps: { label: string; value: string }[]; caption: string }
  | { kind: "files"; title: string; files: { path: string; content: string }[]; caption: string }
  | { kind: "text"; title: string; text: string };

export interface EnvironmentDefinition {
  /** The name scenarios use in `envs.<task>.env` (e.g. `sliding_puzzle`). */
  name: string;
  /** The task name its datasets use by default (e.g. `sliding_puzzle_game`). */
  defaultTaskName: string;
  title: string;
  description: string;
  /** Builds an instance from the scenario's `config`; throws (or rejects) with an Error naming the bad field. */
  create(config: Record<string, unknown>): EnvironmentInterface | Promise<EnvironmentInterface>;
  generateDataset(request: DatasetRequest): GeneratedDatum[] | Promise<GeneratedDatum[]>;
  /**
   * The state as the UI shows it; `metadata` is a sample's current `extra_env_info` (null after it ended).
   * Without a view the lab shows the metadata as JSON text.
   */
  view?(metadata: Metadata): EnvView | Promise<EnvView>;
}

/** A built-in environment: in-process, so its dataset and view answer at once. */
export interface BuiltinEnvironmentDefinition extends EnvironmentDefinition {
  create(config: Record<string, unknown>): EnvironmentInterface;
  /** Rendered prompts (`message_log`) unless asked for raw ones. */
  generateDataset(request: DatasetRequest & { prompts?: "rendered" }): DatasetDatum[];
  generateDataset(request: DatasetRequest): GeneratedDatum[];
  view(metadata: Metadata): EnvView;
}
