/**
 * The token consistency check (issue 17 item 6): does a rollout's token sequence equal what the chat template makes
 * of the same conversation, token for token? Pure (no Node, no DOM) and tokenizer-agnostic, so the CLI
 * (src/cli/tokens.ts) and the page's token view can share it; it imports only the core's types.
 *
 * A sample's reference is the template's rendering of its conversation: the initial messages as given (the datum's
 * raw `messages` and `tools` where there were some), each assistant turn's decoded text as its content, each
 * observation as a `tool` message (structured runs) or a `user` message (otherwise) with its raw text (`content`),
 * with the generation prompt when the log ends on an observation, tokenized as one text without special tokens
 * added. A prompt message whose content is itself a ChatML rendering (the reference datasets pre-render their
 * prompt into one `user` message) is read back into the turns it renders, so that it is not wrapped twice.
 */

import type { Message } from "../core/index.js";
import { BYTE_LEVEL_SPECS } from "../policy/builtin-model/presets.js";

/** A chat message as a template takes it. */
export interface TemplateMessage {
  role: string;
  content: string;
}

/** What the check needs of a tokenizer and its chat template. */
export interface CheckTokenizer {
  /** The ids of `text`, no special tokens added (markers in the text are still their single tokens). */
  encode(text: string): number[];
  /** The text of `ids`, nothing skipped. */
  decode(ids: readonly number[]): string;
  /** One token's text for display; defaults to `decode([id])`. */
  tokenText?(id: number): string;
  applyChatTemplate(messages: readonly TemplateMessage[], options: { tools?: readonly unknown[] | null; addGenerationPrompt: boolean }): string;
  /** The text of the end-of-turn token that a generation ends with (the template writes its own). */
  eosText: string;
}

export interface CheckSample {
  messageLog: readonly Pick<Message, "role" | "content" | "token_ids">[];
  /** Structured tool use: observations are `tool` messages. */
  structured: boolean;
  /** How many leading messages are the prompt; default: those before the first assistant message. */
  promptMessages?: number;
  /** The sample ended `truncated_context`: its last message was cut to fit `max_seq_len`. */
  cutShort?: boolean;
  /** The datum's raw chat messages and tools, where it gave them instead of a message log. */
  raw?: { messages: readonly TemplateMessage[]; tools?: readonly unknown[] | null } | null;
}

/** Why the sequences part, where a cause can be named. */
export type DriftReason =
  | "reasoning_dropped"
  | "think_whitespace"
  | "boundary_merge"
  | "retokenized"
  | "observation_envelope"
  | "think_added"
  | "generation_prompt"
  | "prompt_differs"
  | "cut_short";

export const REASON_TEXT: Record<DriftReason, string> = {
  reasoning_dropped: "reasoning dropped from an earlier turn: the template leaves out this turn's think block",
  think_whitespace: "whitespace around a think block: the template writes the block with other whitespace",
  boundary_merge: "a merge across a message boundary: the same text, tokenized apart here and as one text by the template",
  retokenized: "the same text in other tokens than the tokenizer writes it (a generation's own split, not the canonical one)",
  observation_envelope: "an observation outside the template's envelope: the template wraps it otherwise",
  think_added: "the template writes a think block, or its opening tag, that this turn does not have (an empty one on the last turn)",
  generation_prompt: "the prompt does not end with the template's generation prompt",
  prompt_differs: "the prompt is not the template's rendering of its messages",
  cut_short: "the log ends cut short (max_seq_len): its last message's tokens stop inside the template's rendering of it",
};

export interface Divergence {
  /** Index into both token sequences of the first token that differs (the shorter one's length if one ends first). */
  token_index: number;
  /** The message of our log that token is in (the last message when our sequence ended first). */
  message_index: number;
  /** Texts of our tokens from the divergence on (a few). */
  ours: string[];
  /** Texts of the reference's tokens from the divergence on (a few). */
  template: string[];
  reason: DriftReason | null;
}

export interface CheckResult {
  consistent: boolean;
  first_divergence: Divergence | null;
  /** The texts of the few tokens both sides share before the divergence (for a human reader). */
  before: string[];
  /** The reference text and ids, and ours (for a caller that wants to show more). */
  reference: { text: string; ids: number[] };
  ours: number[];
}

/** How many tokens each side shows from the divergence. */
export const SHOWN_TOKENS = 6;
/** How far (in tokens) the merge heuristic looks for the two sides to agree again. */
const RESYNC_WINDOW = 12;

const IM_START = "<|im_start|>";
const IM_END = "<|im_end|>";

/**
 * A ChatML rendering read back into its turns: `<|im_start|>role\ncontent<|im_end|>` repeated, with `\n` between,
 * optionally ending on an open assistant header (the generation prompt) and what follows it (a prefill). Null when
 * the text is anything else.
 */
export function parseChatMl(text: string): { messages: TemplateMessage[]; open: { prefill: string } | null } | null {
  if (!text.startsWith(IM_START)) return null;
  const messages: TemplateMessage[] = [];
  let at = 0;
  while (at < text.length) {
    if (!text.startsWith(IM_START, at)) return null;
    const head = /^([A-Za-z_]+)(\n|$)/.exec(text.slice(at + IM_START.length, at + IM_START.length + 40));
    if (!head) return null;
    const role = head[1]!;
    const bodyStart = at + IM_START.length + head[0].length;
    const end = text.indexOf(IM_END, bodyStart);
    if (end === -1) {
      // The generation prompt: an assistant header left open, maybe without its newline (a stripped prompt).
      if (role !== "assistant" || text.slice(bodyStart).includes(IM_START)) return null;
      return { messages, open: { prefill: head[2] ? text.slice(bodyStart) : "" } };
    }
    if (head[2] !== "\n") return null;
    messages.push({ role, content: text.slice(bodyStart, end) });
    at = end + IM_END.length;
    if (text[at] === "\n") at++;
  }
  return { messages, open: null };
}

/** The prompt's turns: raw messages, or each prompt message read back if it is a rendering, else as given. */
function promptConversation(sample: CheckSample, prompt: readonly Pick<Message, "role" | "content">[], tokenizer: CheckTokenizer) {
  if (sample.raw) {
    const { messages, tools = null } = sample.raw;
    // A generation prompt that opens more than the assistant header (a think block) prefilled the first turn.
    const closed = tokenizer.applyChatTemplate(messages, { tools, addGenerationPrompt: false });
    const open = tokenizer.applyChatTemplate(messages, { tools, addGenerationPrompt: true });
    const header = `${IM_START}assistant\n`;
    const added = open.startsWith(closed) ? open.slice(closed.length) : "";
    return { messages: [...messages], tools, prefill: added.startsWith(header) ? added.slice(header.length) : "" };
  }
  const messages: TemplateMessage[] = [];
  let prefill = "";
  for (const m of prompt) {
    const parsed = parseChatMl(m.content);
    if (parsed) {
      messages.push(...parsed.messages);
      if (parsed.open) prefill = parsed.open.prefill;
    } else messages.push({ role: m.role, content: m.content });
  }
  return { messages, tools: null, prefill };
}

/**
 * An observation whose text is a ChatML rendering of its turns, read back, or null. Such a text follows the
 * assistant's end-of-turn token: it may start with the newline the template writes after it (or with that token
 * itself, where the generation stopped without writing it).
 */
function renderedObservation(text: string): ReturnType<typeof parseChatMl> {
  const start = /^(?:<\|im_end\|>)?\n?/.exec(text)![0].length;
  const parsed = parseChatMl(text.slice(start));
  return parsed && (parsed.messages.length > 0 || parsed.open) ? parsed : null;
}

/** The reference conversation, its rendering and its ids. */
export function referenceFor(sample: CheckSample, tokenizer: CheckTokenizer): { messages: TemplateMessage[]; tools: readonly unknown[] | null; text: string; ids: number[] } {
  const log = sample.messageLog;
  const firstAssistant = log.findIndex((m) => m.role === "assistant");
  const promptCount = sample.promptMessages ?? (firstAssistant === -1 ? log.length : firstAssistant);
  const { messages, tools, prefill } = promptConversation(sample, log.slice(0, promptCount), tokenizer);
  let pendingPrefill = prefill;
  for (const m of log.slice(promptCount)) {
    if (m.role === "assistant") {
      messages.push({ role: "assistant", content: pendingPrefill + assistantText(m, tokenizer) });
      pendingPrefill = "";
    } else {
      const rendered = renderedObservation(m.content);
      if (rendered) {
        // Its content is already the template's text (NeMo RL's environments write their own envelope): its turns.
        messages.push(...rendered.messages);
        if (rendered.open) pendingPrefill = rendered.open.prefill;
        continue;
      }
      messages.push({ role: sample.structured ? "tool" : "user", content: m.content });
      // The template envelope ends with the generation prompt, its prefill included: that prefills the next turn.
      if (prefill && tokenizer.decode(m.token_ids).endsWith(`${IM_START}assistant\n${prefill}`)) pendingPrefill = prefill;
    }
  }
  const last = log[log.length - 1];
  const text = tokenizer.applyChatTemplate(messages, { tools, addGenerationPrompt: last?.role !== "assistant" });
  return { messages, tools, text, ids: tokenizer.encode(text) };
}

/** An assistant turn's text: its tokens decoded, less the end-of-turn token the template writes itself. */
function assistantText(m: Pick<Message, "content" | "token_ids">, tokenizer: CheckTokenizer): string {
  if (!m.token_ids.length) return m.content;
  const text = tokenizer.decode(m.token_ids);
  return text.endsWith(tokenizer.eosText) ? text.slice(0, -tokenizer.eosText.length) : text;
}

/** Checks one sample. */
export function checkSample(sample: CheckSample, tokenizer: CheckTokenizer): CheckResult {
  const reference = referenceFor(sample, tokenizer);
  const ref = reference.ids;
  const ours = sample.messageLog.flatMap((m) => [...m.token_ids]);
  const text = (id: number) => (tokenizer.tokenText ? tokenizer.tokenText(id) : tokenizer.decode([id]));
  let i = 0;
  while (i < ours.length && i < ref.length && ours[i] === ref[i]) i++;
  const before = ours.slice(Math.max(0, i - 3), i).map(text);
  const consistentResult = { consistent: true, first_divergence: null, before: [], reference: { text: reference.text, ids: ref }, ours };
  if (i === ours.length && i === ref.length) return consistentResult;
  const endsOnAssistant = sample.messageLog[sample.messageLog.length - 1]?.role === "assistant";
  if (endsOnAssistant && i === ours.length) {
    // A log that ends on a generation stops where the model stopped: the template's close of that turn (its
    // end-of-turn token where the model did not write one, the newline after it) was never generated.
    const rest = tokenizer.decode(ref.slice(i));
    if (/^\s*$/.test(rest.startsWith(tokenizer.eosText) ? rest.slice(tokenizer.eosText.length) : rest)) return consistentResult;
  }
  const starts = messageStarts(sample.messageLog);
  const messageIndex = i >= ours.length ? sample.messageLog.length - 1 : starts.findLastIndex((s, k) => s <= i && k < sample.messageLog.length);
  const divergence: Divergence = {
    token_index: i,
    message_index: Math.max(0, messageIndex),
    ours: ours.slice(i, i + SHOWN_TOKENS).map(text),
    template: ref.slice(i, i + SHOWN_TOKENS).map(text),
    reason: nameReason(sample, tokenizer, ours, ref, i, Math.max(0, messageIndex), starts),
  };
  return { consistent: false, first_divergence: divergence, before, reference: { text: reference.text, ids: ref }, ours };
}

/** Where each message's tokens start in the concatenation; one more entry at the end. */
function messageStarts(log: CheckSample["messageLog"]): number[] {
  const starts = [0];
  for (const m of log) starts.push(starts[starts.length - 1]! + m.token_ids.length);
  return starts;
}

const normThink = (s: string) => s.replace(/\s*(<\/?think>)\s*/g, "$1");

/** The heuristics, most specific first. */
function nameReason(
  sample: CheckSample,
  tokenizer: CheckTokenizer,
  ours: readonly number[],
  ref: readonly number[],
  i: number,
  messageIndex: number,
  starts: readonly number[],
): DriftReason | null {
  const log = sample.messageLog;
  const message = log[messageIndex];
  if (!message) return null;
  const firstAssistant = log.findIndex((m) => m.role === "assistant");
  const promptCount = sample.promptMessages ?? (firstAssistant === -1 ? log.length : firstAssistant);

  // Our tokens end where the sample was cut to fit max_seq_len, in its last observation: the template goes on.
  if (sample.cutShort && i === ours.length && log[log.length - 1]!.role !== "assistant") return "cut_short";

  // A merge: within a few tokens both sides spell the same text again, and one of our message boundaries lies
  // strictly inside our side of it (the template's text ran across it and BPE merged there).
  const merged = resync(tokenizer, ours, ref, i);
  if (merged && starts.some((b) => b > i && b < merged.ours)) return "boundary_merge";
  if (merged) return "retokenized";

  if (messageIndex < promptCount) return "prompt_differs";
  if (message.role !== "assistant") return "observation_envelope";

  // An assistant turn: how the template wrote it, from where its tokens start (both sides agree up to `i`).
  const start = starts[messageIndex]!;
  const oursTurn = tokenizer.decode(ours.slice(start, starts[messageIndex + 1]));
  const refFrom = tokenizer.decode(ref.slice(start));
  if (/<\/?think>/.test(oursTurn)) {
    const shared = oursTurn.endsWith(tokenizer.eosText) ? oursTurn.slice(0, -tokenizer.eosText.length) : oursTurn;
    if (normThink(refFrom).startsWith(normThink(shared))) return "think_whitespace";
    const refTurn = refFrom.split(tokenizer.eosText)[0] ?? refFrom;
    if (oursTurn.includes("</think>") && !refTurn.includes("</think>")) return "reasoning_dropped";
    // A turn that only closes its reasoning (a generation prefilled with `<think>`): the template opens it.
    if (!oursTurn.includes("<think>") && refTurn.trimStart().startsWith("<think>")) return "think_added";
  } else if ((refFrom.split(tokenizer.eosText)[0] ?? "").includes("<think>")) return "think_added";
  if (i === start && messageIndex === firstAssistant && messageIndex > 0) return "generation_prompt";
  return null;
}

/** The first token counts (after `i`) at which both sides' texts are equal again, if within the window. */
function resync(tokenizer: CheckTokenizer, ours: readonly number[], ref: readonly number[], i: number): { ours: number; ref: number } | null {
  const refTexts = new Map<string, number>();
  for (let k = i + 1; k <= Math.min(ref.length, i + RESYNC_WINDOW); k++) refTexts.set(tokenizer.decode(ref.slice(i, k)), k);
  for (let j = i + 1; j <= Math.min(ours.length, i + RESYNC_WINDOW); j++) {
    const k = refTexts.get(tokenizer.decode(ours.slice(i, j)));
    if (k !== undefined) return { ours: j, ref: k };
  }
  return null;
}

/** A run's verdicts in the CLI's `--json` shape. */
export interface CheckReport {
  samples: { idx: number; consistent: boolean; first_divergence: Divergence | null }[];
  summary: { samples: number; consistent: number; drifting: number; reasons: Partial<Record<DriftReason | "unnamed", number>>; tokenizer: string };
}

export function reportOf(results: readonly { idx: number; result: CheckResult }[], tokenizer: string): CheckReport {
  const reasons: CheckReport["summary"]["reasons"] = {};
  for (const { result } of results) {
    const d = result.first_divergence;
    if (d) reasons[d.reason ?? "unnamed"] = (reasons[d.reason ?? "unnamed"] ?? 0) + 1;
  }
  const consistent = results.filter((r) => r.result.consistent).length;
  return {
    samples: results.map(({ idx, result }) => ({ idx, consistent: result.consistent, first_divergence: result.first_divergence })),
    summary: { samples: results.length, consistent, drifting: results.length - consistent, reasons, tokenizer },
  };
}

const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);

/**
 * The tokenizer whose ids a run of `scenario` has, which the check reads it with (the CLI, the page, a fork's
 * prefix): the scenario's `tokenizer`, else its model policy's model, else its server policy's `tokenizer` or model;
 * null: byte-level. The scenario is read loosely (an imported file's may not parse).
 */
export function tokenizerSpecOf(scenario: Record<string, unknown> | null): string | null {
  if (typeof scenario?.tokenizer === "string") return scenario.tokenizer;
  const policy = scenario?.policy;
  if (isRecord(policy) && policy.kind === "model" && typeof policy.model === "string") return policy.model;
  if (isRecord(policy) && policy.kind === "server") {
    if (typeof policy.tokenizer === "string") return policy.tokenizer;
    if (typeof policy.model === "string") return policy.model;
  }
  return null;
}

/** Whether a spec names the byte-level vocabulary (checked in the page, no model needed). */
export function isByteLevelSpec(spec: string | null): boolean {
  return spec === null || BYTE_LEVEL_SPECS.includes(spec);
}
