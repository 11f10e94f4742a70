/**
 * A fork: a new rollout that continues one sample of a finished run from one of its turns, with an edit.
 *
 * The fork is an ordinary scenario (shared spec `scenario-format.md`, no extra keys) with one explicit datum: the
 * sample's message log up to the fork point, the environment state there (`extra_env_info`: every built-in
 * environment keeps its whole state in it, the workspace's file system included), the stop strings in force there,
 * and `max_rollout_turns` reduced by the turns already taken, so the fork's turn budget is the original's. Beside
 * the scenario, the worker gets a `ForkContinuation` (fork-policy.ts): the policy sees the fork's turns as the
 * original's turn numbers and sample, and an edited assistant turn is forced as the fork's first response.
 *
 * Where the fork starts, per edit:
 * - an edited assistant message at turn k: before turn k (state after turn k−1); the fork's first response is the
 *   edited text, so the environment reacts to it; then the policy goes on;
 * - an edited observation at turn k: after turn k, with the edited observation in the log in place of the
 *   environment's and the environment state after turn k (the environment's own state is not edited);
 * - nothing edited but the policy's seed or sampling settings (or nothing at all: a re-run): before turn k.
 *
 * The prefix is rebuilt so that it tokenizes as the original did: with the byte-level vocabulary (every policy but a
 * hub or local model; the built-in models share it) each message's content is its tokens decoded with nothing
 * skipped (the assistant's end-of-turn token, an observation's tool-response envelope), which encodes back to the
 * same tokens. A model with its own tokenizer is not available in the page, so there the texts are rebuilt from the
 * contents (the envelope re-applied) and the tokens may differ from the original's (`prefixExact: false`).
 */

import { byteLevelTokenizer, observationText, resolveStructuredToolUse, type Message, type Metadata, LabError } from "../../core/index.js";
import type { Scenario } from "../../scenario/schema.js";
import type { SampleView, TurnView } from "../run/run-model.js";
import { isByteLevelSpec, tokenizerSpecOf } from "../../scenario/token-check.js";
import type { ForkContinuation } from "../../policy/fork-policy.js";

export type ForkEdit = { kind: "none" } | { kind: "assistant"; text: string } | { kind: "observation"; text: string };

/** Policy settings a fork may change: the oracle's `seed` and `error_rate`, a model's or server's sampling settings. */
export interface PolicyChanges {
  seed?: number;
  error_rate?: number;
  temperature?: number;
  top_k?: number;
  top_p?: number;
}

const POLICY_FIELDS: Record<string, readonly (keyof PolicyChanges)[]> = {
  oracle: ["seed", "error_rate"],
  model: ["temperature", "top_k", "top_p", "seed"],
  server: ["temperature", "top_k", "top_p", "seed"],
  scripted: [],
  replay: [],
};

/** The policy settings a fork of a run with this policy may change. */
export const changeablePolicyFields = (policy: Scenario["policy"]): readonly (keyof PolicyChanges)[] => POLICY_FIELDS[policy.kind] ?? [];

/** What is forked: a sample of a run (an original run, or a fork itself). */
export interface ForkSource {
  /** The scenario that run was started with. */
  scenario: Scenario;
  sample: SampleView;
  /** The run's turn budget (`max_rollout_turns` of the run: for a fork shown with its original's prefix, the original's). */
  maxRolloutTurns: number;
  /** The batch position the policy's seeded draws used for this sample: its own, or for a fork, the original's. */
  policySample: number;
  /** The sample's last stop strings (the final batch's), used when the run did not record them per turn. */
  finalStopStrings?: string[] | null;
}

export interface ForkRequest {
  turn: number;
  edit: ForkEdit;
  policy?: PolicyChanges;
}

export interface ForkPlan {
  /** The fork's scenario: one sample, the prefix as its message log. */
  scenario: Scenario;
  /** What the worker needs beside the scenario. */
  continuation: ForkContinuation;
  /** The turn forked at (the one whose "Fork from here" was used). */
  turn: number;
  edit: ForkEdit["kind"];
  /** The original's turns kept as they are: 0 … keptTurns − 1 (turn `turn` too for an observation edit, with its observation replaced). */
  keptTurns: number;
  /** The first turn the fork's rollout runs (the original's numbering). */
  firstNewTurn: number;
  /** The observation that replaces turn `turn`'s (an observation edit), tokenized as the rollout would. */
  editedObservation: Message | null;
  /** Whether the prefix tokenizes exactly as the original's tokens (null when it cannot be checked). */
  prefixExact: boolean | null;
  /** What changed, in words ("edited assistant text", "seed 0 → 5"). */
  what: string;
}

export class ForkError extends LabError {
  override name = "ForkError";
  override readonly code = "invalid_fork";
}

/** "no turns", "turn 0", "turns 0–3": the turns a fork keeps, in words. */
export const keptTurnsWords = (kept: number): string => (kept <= 0 ? "no turns" : kept === 1 ? "turn 0" : `turns 0–${kept - 1}`);

/**
 * Whether the run's tokens are byte-level ones: the tokenizer that made them (a model policy's model, a server
 * policy's tokenizer, else the scenario's `tokenizer` for the text policies) is the byte-level one, or none is named.
 */
export function usesByteLevelVocabulary(scenario: Scenario): boolean {
  return isByteLevelSpec(tokenizerSpecOf(scenario as unknown as Record<string, unknown>));
}

const ENDED_AT_STEP = new Set(["terminated", "truncated_context", "truncated_response", "error"]);

/** Which edits a turn allows: null when allowed, else why not. */
export interface ForkOptions {
  fork: string | null;
  observation: string | null;
}

export function forkOptions(sample: SampleView, turn: number, maxRolloutTurns: number): ForkOptions {
  const t = sample.turns[turn];
  if (!t) return { fork: `sample ${sample.sample} has no turn ${turn}`, observation: "no such turn" };
  if (sample.state !== "done") return { fork: "the sample is still running", observation: "the sample is still running" };
  if (t.assistantIndex === null || !sample.messages[t.assistantIndex]) {
    return { fork: `turn ${turn} has no assistant message`, observation: "no assistant message" };
  }
  let observation: string | null = null;
  if (t.observationIndex === null || t.envEnd === null) observation = `turn ${turn} has no observation`;
  else if (t.terminated || t.truncatedContext || (turn === sample.turns.length - 1 && ENDED_AT_STEP.has(sample.termination ?? ""))) {
    observation = `the episode ended at turn ${turn}: there is no state to go on from`;
  } else if (maxRolloutTurns - (turn + 1) < 1) observation = `turn ${turn} used the last turn of the budget`;
  return { fork: null, observation };
}

function stopStringsBefore(source: ForkSource, firstNewTurn: number): string[] | null {
  const { sample } = source;
  const recorded = firstNewTurn === 0 ? sample.initialStopStrings : sample.turns[firstNewTurn - 1]?.stopStrings;
  if (recorded !== undefined) return recorded === null ? null : [...recorded];
  // A run recorded without per-turn stop strings: the scenario's own datum for the first turn, else the last ones.
  const datum = source.scenario.samples?.[sample.sample];
  if (firstNewTurn === 0 && datum) return datum.stop_strings ?? null;
  return source.finalStopStrings ?? null;
}

function metadataAfter(sample: SampleView, turn: number): Metadata {
  if (turn < 0) return sample.initialMetadata;
  return sample.turns[turn]?.metadata ?? null;
}

function describeChanges(before: Scenario["policy"], changes: PolicyChanges): string[] {
  const words: string[] = [];
  const old = before as Record<string, unknown>;
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined || old[key] === value) continue;
    words.push(`${key} ${old[key] === undefined ? "default" : String(old[key])} → ${value}`);
  }
  return words;
}

/** The fork's policy: the source's, with the changed settings (a script keeps only the forked sample's responses). */
function forkPolicySpec(source: ForkSource, changes: PolicyChanges): Scenario["policy"] {
  const policy = source.scenario.policy;
  const allowed = changeablePolicyFields(policy);
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined) continue;
    if (!allowed.includes(key as keyof PolicyChanges)) throw new ForkError(`a ${policy.kind} policy has no setting '${key}' to change`);
    if (typeof value !== "number" || !Number.isFinite(value)) throw new ForkError(`policy.${key}: expected a number`);
  }
  if (policy.kind === "scripted") return { kind: "scripted", responses: [[...(policy.responses[source.sample.sample] ?? [])]] };
  const out: Record<string, unknown> = { ...policy };
  for (const [key, value] of Object.entries(changes)) if (value !== undefined) out[key] = value;
  return out as Scenario["policy"];
}

/** Builds the fork of `source`'s sample at `request.turn`; throws ForkError when the turn cannot be forked so. */
export function planFork(source: ForkSource, request: ForkRequest): ForkPlan {
  const { sample, scenario } = source;
  const k = request.turn;
  const options = forkOptions(sample, k, source.maxRolloutTurns);
  if (options.fork) throw new ForkError(options.fork);
  const edit = request.edit;
  if (edit.kind === "observation" && options.observation) throw new ForkError(`cannot edit the observation: ${options.observation}`);

  const firstNewTurn = edit.kind === "observation" ? k + 1 : k;
  const budget = source.maxRolloutTurns - firstNewTurn;
  if (budget < 1) throw new ForkError(`no turns left in the budget of ${source.maxRolloutTurns} after turn ${firstNewTurn - 1}`);

  let structuredCfg;
  try {
    structuredCfg = resolveStructuredToolUse(scenario.structured ?? null);
  } catch (e) {
    throw new ForkError(`structured: ${(e as Error).message}`);
  }
  const byteLevel = usesByteLevelVocabulary(scenario);
  const tokenText = (m: Message) => byteLevelTokenizer.decode(m.token_ids);
  const assistantText = (m: Message) => (byteLevel ? tokenText(m) : m.content);
  const observationTokensText = (content: string, assistant: Message) =>
    // The byte-level tokenizer has no generation prefill; a model's own is not known in the page.
    observationText(content, structuredCfg, { assistantText: assistantText(assistant) });

  // The prefix: the prompt as it was, then every kept turn's assistant message and observation.
  const log: { role: string; content: string }[] = sample.messages.slice(0, sample.promptMessages).map((m) => ({ role: m.role, content: m.content }));
  let exact: boolean | null = byteLevel ? true : null;
  const keep = (m: Message, text: string) => {
    log.push({ role: m.role, content: text });
    if (exact && byteLevelTokenizer.encode(text).join() !== m.token_ids.join()) exact = false;
  };
  const keptTurns = firstNewTurn;
  let editedObservation: Message | null = null;
  for (let turn = 0; turn < keptTurns; turn++) {
    const t = sample.turns[turn] as TurnView;
    const assistant = sample.messages[t.assistantIndex ?? -1];
    const observation = sample.messages[t.observationIndex ?? -1];
    if (!assistant || !observation) throw new ForkError(`turn ${turn} is incomplete: it cannot be part of a fork's prefix`);
    keep(assistant, assistantText(assistant));
    if (edit.kind === "observation" && turn === k) {
      const text = observationTokensText(edit.text, assistant);
      log.push({ role: observation.role, content: text });
      editedObservation = { role: observation.role, content: edit.text, token_ids: byteLevel ? byteLevelTokenizer.encode(text) : [] };
    } else {
      keep(observation, byteLevel ? tokenText(observation) : observationTokensText(observation.content, assistant));
    }
  }

  const extra = metadataAfter(sample, firstNewTurn - 1);
  if (extra !== null && (typeof extra !== "object" || Array.isArray(extra))) throw new ForkError("the environment state at the fork point is not an object");
  const datum = scenario.samples?.[sample.sample];
  const forkDatum = {
    task_name: sample.task,
    idx: sample.idx,
    message_log: log,
    extra_env_info: extra === null ? null : structuredClone(extra),
    stop_strings: stopStringsBefore(source, firstNewTurn),
    ...(datum?.loss_multiplier !== undefined ? { loss_multiplier: datum.loss_multiplier } : {}),
  };

  const changes = request.policy ?? {};
  const policy = forkPolicySpec(source, changes);
  const { samples: _samples, dataset: _dataset, ...rest } = scenario;
  const forkScenario = { ...rest, max_rollout_turns: budget, samples: [forkDatum], policy } as Scenario;

  // Seeded policies draw per (sample position, turn): the fork's row is the original's. A script now has the
  // forked sample's responses at position 0, and a replay matches by idx (which the datum keeps).
  const seeded = policy.kind === "oracle" || policy.kind === "model" || policy.kind === "server";
  const continuation: ForkContinuation = {
    sampleId: seeded ? source.policySample : 0,
    turnOffset: firstNewTurn,
    ...(edit.kind === "assistant" ? { forcedResponse: edit.text } : {}),
  };

  const changed = describeChanges(scenario.policy, changes);
  const head = edit.kind === "assistant" ? "edited assistant text" : edit.kind === "observation" ? "edited observation" : changed.length ? "" : "re-run";
  const what = [head, ...changed].filter(Boolean).join(", ");
  return {
    scenario: forkScenario,
    continuation,
    turn: k,
    edit: edit.kind,
    keptTurns,
    firstNewTurn,
    editedObservation,
    prefixExact: exact,
    what,
  };
}
