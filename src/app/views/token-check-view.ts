/**
 * The token consistency check (src/scenario/token-check.ts) as the page runs it: the same inputs the CLI
 * (src/cli/tokens.ts) builds from a saved run, built here from a shown run's sample and scenario, so that the page
 * and `npm run tokens -- check` agree on the same run. Which tokenizer: the scenario's `tokenizer` key, else its model
 * policy's model, else the byte-level tokenizer with its ChatML template (checked here); a real vocabulary is checked
 * in the rollout worker, with the loaded model's tokenizer.
 */

import { useEffect, useMemo, useState, useSyncExternalStore } from "react";
import { byteLevelTokenizer, renderChatTemplate, type Message } from "../../core/index.js";
import { checkSample, isByteLevelSpec, tokenizerSpecOf, type CheckResult, type CheckSample, type CheckTokenizer, type TemplateMessage } from "../../scenario/token-check.js";
import { tokenIdsView } from "../run/compact-messages.js";
import type { SampleView } from "../run/run-model.js";
import type { TokenCheckAnswer } from "../worker/protocol.js";

/** The byte-level tokenizer with the lab's ChatML template (the CLI's `byteLevel`). */
export const byteLevelCheckTokenizer: CheckTokenizer = {
  encode: (text) => byteLevelTokenizer.encode(text),
  decode: (ids) => byteLevelTokenizer.decode(ids),
  tokenText: (id) => byteLevelTokenizer.tokenText(id),
  applyChatTemplate: (messages, options) => renderChatTemplate(messages, { tools: (options.tools ?? null) as never, addGenerationPrompt: options.addGenerationPrompt }),
  eosText: "<|im_end|>",
};

/** What of a scenario the check reads (a run's scenario, or none: an imported run without one). */
export type CheckScenario = Record<string, unknown> | null;

/** Which tokenizer checks a run (../../scenario/token-check.ts owns the choice). */
export { isByteLevelSpec, tokenizerSpecOf };

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);


/** The sample's messages with plain token id arrays (the run model keeps them compact). */
function plainLog(sample: Pick<SampleView, "messages">): Pick<Message, "role" | "content" | "token_ids">[] {
  return sample.messages.map((m) => ({ role: m.role, content: m.content, token_ids: Array.from(tokenIdsView(m)) }));
}

/** The scenario's explicit datum with this idx (idx defaults to its position), as the CLI finds it. */
function datumOf(scenario: CheckScenario, idx: number): Record<string, unknown> | null {
  const samples = scenario?.samples;
  if (!Array.isArray(samples)) return null;
  const datum: unknown = samples.find((d, i) => isObject(d) && (typeof d.idx === "number" ? d.idx : i) === idx);
  return isObject(datum) ? datum : null;
}

/** The datum's raw chat messages and tools, when it gave them (malformed ones are left out: the run would not start). */
function rawOf(datum: Record<string, unknown> | null): CheckSample["raw"] {
  if (!datum || !Array.isArray(datum.messages)) return null;
  const messages: TemplateMessage[] = [];
  for (const m of datum.messages) {
    if (!isObject(m) || typeof m.role !== "string" || typeof m.content !== "string") return null;
    messages.push({ role: m.role, content: m.content });
  }
  return { messages, tools: Array.isArray(datum.tools) ? datum.tools : null };
}

/**
 * Without a scenario: structured when an observation's tokens hold a tool-response envelope its content lacks (the
 * CLI guesses over the whole run; here per sample, which agrees on every sample of a run whose observations do).
 */
function looksStructured(log: readonly Pick<Message, "role" | "content" | "token_ids">[], tokenizer: CheckTokenizer): boolean {
  const first = log.findIndex((m) => m.role === "assistant");
  return first >= 0 && log.slice(first).some((m) => m.role !== "assistant" && !m.content.includes("<tool_response>") && m.token_ids.length > 0 && tokenizer.decode(m.token_ids).includes("<tool_response>"));
}

/** The check's input for one sample of a shown run. `tokenizer` is only used to guess `structured` without a scenario. */
export function checkInput(sample: Pick<SampleView, "messages" | "promptMessages" | "idx"> & Partial<Pick<SampleView, "termination">>, scenario: CheckScenario, tokenizer: CheckTokenizer = byteLevelCheckTokenizer): CheckSample {
  const messageLog = plainLog(sample);
  const block = scenario?.structured;
  const structured = scenario ? isObject(block) && block.enabled === true : looksStructured(messageLog, tokenizer);
  const datum = datumOf(scenario, sample.idx);
  return { messageLog, structured, promptMessages: sample.promptMessages, raw: rawOf(datum), ...(sample.termination === "truncated_context" ? { cutShort: true } : {}) };
}

/** The check of a byte-level run's sample, in the page. */
export function checkByteLevel(sample: Pick<SampleView, "messages" | "promptMessages" | "idx">, scenario: CheckScenario): CheckResult {
  return checkSample(checkInput(sample, scenario), byteLevelCheckTokenizer);
}

/** A real vocabulary's check, run in the rollout worker (`RolloutWorkerClient.checkTokens`). */
export type WorkerCheck = (sample: CheckSample, model: string) => Promise<TokenCheckAnswer>;
/** Loads a model's tokenizer alone in the worker (`RolloutWorkerClient.loadTokenizer`). */
export type TokenizerLoad = (model: string) => Promise<void>;

/** Bumped whenever a tokenizer was loaded alone: the checks that said "not loaded" ask again. */
let tokenizerGeneration = 0;
const generationListeners = new Set<() => void>();
const subscribeGeneration = (listener: () => void) => {
  generationListeners.add(listener);
  return () => void generationListeners.delete(listener);
};

/** Loads `model`'s tokenizer with `load`, then has every check of the page ask again. */
export async function loadTokenizerFor(load: TokenizerLoad, model: string): Promise<void> {
  await load(model);
  tokenizerGeneration++;
  for (const listener of generationListeners) listener();
}

/** Which tokenizer loads the page has seen (a dependency of the checks that ask the worker). */
export function useTokenizerGeneration(): number {
  const current = () => tokenizerGeneration;
  return useSyncExternalStore(subscribeGeneration, current, current);
}

/** The check as the token view shows it. */
export type PageCheck =
  | { state: "done"; result: CheckResult; tokenizer: string }
  | { state: "pending"; tokenizer: string }
  /** A real vocabulary whose model is not loaded in the worker (a saved or imported run). */
  | { state: "needs_model"; model: string; loaded: string | null }
  | { state: "failed"; tokenizer: string; error: string };

export const BYTE_LEVEL_NAME = "byte-level (ChatML)";

/**
 * The check of a sample's first `messageCount` messages (the log only grows by whole messages: its length is what
 * invalidates a check): in the page for a byte-level run, else asked of the worker.
 */
export function useTokenCheck(sample: SampleView, messageCount: number, scenario: CheckScenario, workerCheck: WorkerCheck | undefined): PageCheck {
  const spec = tokenizerSpecOf(scenario);
  const local = isByteLevelSpec(spec);
  const input = useMemo(() => checkInput({ ...sample, messages: sample.messages.slice(0, messageCount) }, scenario), [sample, messageCount, scenario]);
  const localCheck = useMemo((): PageCheck | null => {
    if (!local) return null;
    try {
      return { state: "done", result: checkSample(input, byteLevelCheckTokenizer), tokenizer: spec === null ? BYTE_LEVEL_NAME : `${spec}: ${BYTE_LEVEL_NAME}` };
    } catch (e) {
      return { state: "failed", tokenizer: BYTE_LEVEL_NAME, error: e instanceof Error ? e.message : String(e) };
    }
  }, [local, input, spec]);
  const generation = useTokenizerGeneration();
  const [remote, setRemote] = useState<{ of: CheckSample; generation: number; check: PageCheck } | null>(null);
  useEffect(() => {
    if (local || spec === null) return;
    let current = true;
    const ask = workerCheck ?? (() => Promise.resolve<TokenCheckAnswer>({ kind: "not_loaded", loaded: null }));
    ask(input, spec).then(
      (answer) => {
        if (!current) return;
        setRemote({ of: input, generation, check: answer.kind === "checked" ? { state: "done", result: answer.result, tokenizer: answer.tokenizer } : { state: "needs_model", model: spec, loaded: answer.loaded } });
      },
      (e: unknown) => current && setRemote({ of: input, generation, check: { state: "failed", tokenizer: spec, error: e instanceof Error ? e.message : String(e) } }),
    );
    return () => {
      current = false;
    };
  }, [local, spec, input, workerCheck, generation]);
  if (localCheck) return localCheck;
  return remote && remote.of === input && remote.generation === generation ? remote.check : { state: "pending", tokenizer: spec ?? BYTE_LEVEL_NAME };
}

/**
 * The scenario a run's tokens are read with: its own, or — where it names no tokenizer (an imported dump, a text
 * policy's run without the key) — with the tokenizer chosen in the page for this run (`chosen`, null: none).
 */
export function withRunTokenizer(scenario: CheckScenario, chosen: string | null): CheckScenario {
  if (chosen === null || tokenizerSpecOf(scenario) !== null) return scenario;
  return { ...(scenario ?? {}), tokenizer: chosen };
}
