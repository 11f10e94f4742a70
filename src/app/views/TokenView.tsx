/**
 * Every token of a sample's log as a chip: generated (trained) tokens coloured by log-probability, prompt and
 * environment tokens neutral and set apart, special tokens marked. Below, the chat template's rendering of the log
 * against the token sequence decoded, with their differences.
 *
 * Long logs stay responsive: a message over COLLAPSE_OVER tokens starts collapsed and an expanded one draws its
 * chips CHIP_PAGE at a time; the comparison is only computed while it is open.
 */

import { memo, useMemo, useState } from "react";
import type { Message } from "../../core/index.js";
import { tokenCount } from "../run/compact-messages.js";
import type { SampleView } from "../run/run-model.js";
import { DiffParts } from "./tokens/DiffParts.js";
import { lineColumn, splitByRanges } from "./tokens/diff.js";
import {
  CHIP_PAGE,
  COLLAPSE_OVER,
  compareWithTemplate,
  legendStops,
  LOGPROB_FLOOR,
  logprobColor,
  logprobSummary,
  messageSpans,
  tokenTitle,
  visibleChipCount,
  visibleText,
  type SpanKind,
  type TokenTexts,
} from "./tokens/tokens.js";
import { plural } from "./transcript/parts.js";
import "./views.css";

export interface TokenViewProps {
  sample: SampleView;
  /** `decode` is optional; with it the decoded sequence is exact for multi-byte characters. */
  tokenizer: TokenTexts;
  /**
   * Whether the generated tokens were sampled from a distribution (a model policy): only then are their
   * log-probabilities real. A text policy's (oracle, scripted, replay) are placeholder zeros, shown as none.
   */
  sampled: boolean;
}

const KIND_LABEL: Record<SpanKind, string> = {
  prompt: "prompt · not trained",
  generated: "generated · trained",
  environment: "environment · not trained",
};

export function TokenView({ sample, tokenizer, sampled }: TokenViewProps) {
  const spans = messageSpans(sample);
  const counts = { prompt: 0, generated: 0, environment: 0 };
  for (const s of spans) counts[s.kind] += tokenCount(s.message);
  const generating = sample.turns.at(-1);
  const streaming = generating && generating.assistantIndex === null && generating.genEnd === null ? generating : null;
  return (
    <div className="tk" data-testid="token-view">
      <div className="tk-head">
        <span data-testid="token-counts">
          {counts.prompt + counts.generated + counts.environment} tokens: {counts.generated} generated, {counts.prompt} prompt,{" "}
          {counts.environment} environment
        </span>
        <Legend sampled={sampled} />
      </div>
      <div className="tk-messages">
        {spans.map((s) => (
          <MessageTokens key={`${sample.sample}:${s.index}`} message={s.message} kind={s.kind} turn={s.turn} offset={s.offset} tokenizer={tokenizer} sampled={sampled} />
        ))}
        {streaming && (
          <p className="tk-streaming tx-muted" data-testid="token-streaming">
            turn {streaming.turn}: {plural(streaming.streamedTokens, "token")} streamed so far (their chips appear with the message)
          </p>
        )}
      </div>
      <TemplateComparisonPanel sample={sample} messageCount={sample.messages.length} tokenizer={tokenizer} />
    </div>
  );
}

function Legend({ sampled }: { sampled: boolean }) {
  return (
    <div className="tk-legend" aria-label="Legend">
      <span className="tk-legend-title">logprob</span>
      {sampled ? (
        legendStops().map((s) => (
          <span key={s.logprob} className="tk-chip generated" style={{ background: s.color }} title={`p ${s.probability.toPrecision(2)}`}>
            {s.logprob === LOGPROB_FLOOR ? `≤${s.logprob}` : s.logprob}
          </span>
        ))
      ) : (
        <span className="tk-no-logprobs" data-testid="no-logprobs">
          none: this policy writes its responses, it does not sample them (the zeros in its result are placeholders)
        </span>
      )}
      <span className="tk-chip prompt tk-legend-sep">prompt</span>
      <span className="tk-chip environment">environment</span>
      <span className="tk-chip prompt special">special</span>
    </div>
  );
}

const MessageTokens = memo(function MessageTokens(props: {
  message: Message;
  kind: SpanKind;
  turn: number | null;
  offset: number;
  tokenizer: TokenTexts;
  sampled: boolean;
}) {
  const { message, kind, turn, offset, tokenizer, sampled } = props;
  const ids = message.token_ids;
  const logprobs = kind === "generated" && sampled ? message.generation_logprobs : undefined;
  const [pages, setPages] = useState(ids.length > COLLAPSE_OVER ? 0 : 1);
  const shown = visibleChipCount(ids.length, pages);
  const summary = logprobSummary(logprobs);
  return (
    <section className={`tk-msg ${kind}`} data-testid="token-message" data-kind={kind}>
      <div className="tk-msg-head">
        {turn !== null && <span className="tk-turn">turn {turn}</span>}
        <span className={`tk-role ${message.role}`}>{message.role}</span>
        <span className="tk-kind">{KIND_LABEL[kind]}</span>
        <span className="tx-count">
          {ids.length} tokens · from #{offset}
        </span>
        {summary && (
          <span className="tx-count">
            mean logprob {summary.mean.toFixed(3)} · min {summary.min.toFixed(3)}
          </span>
        )}
        {ids.length > COLLAPSE_OVER && (
          <button type="button" className="tx-link" onClick={() => setPages(pages === 0 ? 1 : 0)}>
            {pages === 0 ? `show ${ids.length} tokens` : "collapse"}
          </button>
        )}
      </div>
      {shown > 0 && (
        <div className="tk-chips">
          <Chips ids={ids} count={shown} logprobs={logprobs} kind={kind} offset={offset} tokenizer={tokenizer} />
          {shown < ids.length && (
            <button type="button" className="tx-link" onClick={() => setPages(pages + 1)}>
              show {Math.min(CHIP_PAGE, ids.length - shown)} more ({ids.length - shown} left)
            </button>
          )}
        </div>
      )}
    </section>
  );
});

function Chips(props: {
  ids: readonly number[];
  count: number;
  logprobs: readonly number[] | undefined;
  kind: SpanKind;
  offset: number;
  tokenizer: TokenTexts;
}) {
  const { ids, count, logprobs, kind, offset, tokenizer } = props;
  const chips = [];
  for (let i = 0; i < count; i++) {
    const id = ids[i]!;
    const text = tokenizer.tokenText(id);
    const special = tokenizer.isSpecial(id);
    const lp = logprobs?.[i];
    chips.push(
      <span
        key={i}
        className={`tk-chip ${kind}${special ? " special" : ""}`}
        style={lp !== undefined ? { background: logprobColor(lp) } : undefined}
        title={`#${offset + i} · ${tokenTitle(id, text, lp, special)}`}
        data-special={special || undefined}
      >
        {visibleText(text)}
      </span>,
    );
  }
  return <>{chips}</>;
}

const MAX_HIGHLIGHTS = 1000;
const CONTEXT = 40;

function TemplateComparisonPanel(props: { sample: SampleView; messageCount: number; tokenizer: TokenTexts }) {
  const { sample, messageCount, tokenizer } = props;
  const [open, setOpen] = useState(false);
  // The log only grows by whole messages: its length is what invalidates the comparison.
  const comparison = useMemo(
    () => (open ? compareWithTemplate(sample.messages.slice(0, messageCount), tokenizer) : null),
    [open, sample, messageCount, tokenizer],
  );
  return (
    <details className="tk-compare" data-testid="template-comparison" onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>Chat template vs. tokens</summary>
      {comparison && <TemplateComparisonBody {...comparison} />}
    </details>
  );
}

/** The comparison itself (exported for tests and for showing a precomputed comparison). */
export function TemplateComparisonBody({ template, decoded, diff }: ReturnType<typeof compareWithTemplate>) {
  const hunks = diff.hunks.slice(0, MAX_HIGHLIGHTS);
  const first = diff.hunks[0];
  return (
    <div>
      {diff.equal ? (
        <p className="tk-verdict tk-same" data-testid="template-verdict">
          The tokens decode to exactly the chat template's rendering.
        </p>
      ) : (
        <div className="tk-verdict tk-differs" data-testid="template-verdict">
          <p>
            {diff.hunks.length} differing {diff.hunks.length === 1 ? "range" : "ranges"}
            {diff.hunks.length > MAX_HIGHLIGHTS && ` (the first ${MAX_HIGHLIGHTS} highlighted)`}
            {diff.coarse && "; some stretches differ too much to diff finely and are highlighted whole"}.
          </p>
          {first && <FirstDifference template={template} decoded={decoded} aAt={first.aStart} bAt={first.bStart} />}
        </div>
      )}
      <div className="tk-sides">
        <div>
          <h4>Chat template rendering</h4>
          <pre className="tk-side">
            <DiffParts parts={splitByRanges(template, hunks.map((h) => [h.aStart, h.aEnd] as const))} markClass="tk-diff" gapClass="tk-gap" />
          </pre>
        </div>
        <div>
          <h4>Token sequence, decoded</h4>
          <pre className="tk-side">
            <DiffParts parts={splitByRanges(decoded, hunks.map((h) => [h.bStart, h.bEnd] as const))} markClass="tk-diff" gapClass="tk-gap" />
          </pre>
        </div>
      </div>
    </div>
  );
}

function FirstDifference(props: { template: string; decoded: string; aAt: number; bAt: number }) {
  const { template, decoded, aAt, bAt } = props;
  const a = lineColumn(template, aAt);
  const b = lineColumn(decoded, bAt);
  const around = (text: string, at: number) => JSON.stringify(text.slice(Math.max(0, at - CONTEXT), at + CONTEXT));
  return (
    <dl className="tk-first" data-testid="first-difference">
      <dt>template, line {a.line} col {a.column}</dt>
      <dd>
        <code>{around(template, aAt)}</code>
      </dd>
      <dt>tokens, line {b.line} col {b.column}</dt>
      <dd>
        <code>{around(decoded, bAt)}</code>
      </dd>
    </dl>
  );
}

