/**
 * Every token of a sample's log as a chip: generated (trained) tokens coloured by log-probability, prompt and
 * environment tokens neutral and set apart, special tokens marked. Below, the token consistency check's verdict (the
 * same as `npm run tokens -- check`: ./token-check-view.ts), its first divergence marked among the chips, and the
 * chat template's rendering of the log (the check's reference) against the token sequence decoded, with their
 * differences.
 *
 * Long logs stay responsive: a message over COLLAPSE_OVER tokens starts collapsed and an expanded one draws its
 * chips CHIP_PAGE at a time; the comparison is only computed while it is open.
 */

import { memo, useCallback, useMemo, useRef, useState, type KeyboardEvent, type MouseEvent } from "react";
import type { Message } from "../../core/index.js";
import { logprobsView, tokenCount, tokenIdsView } from "../run/compact-messages.js";
import type { SampleView } from "../run/run-model.js";
import { DiffParts } from "./tokens/DiffParts.js";
import { lineColumn, splitByRanges } from "./tokens/diff.js";
import { placeHunks, trainedSummary, type RangePlace } from "./tokens/template-places.js";
import { TokenCheckVerdict } from "./tokens/TokenCheckVerdict.js";
import { TokenDetail } from "./tokens/TokenDetail.js";
import { chipMoveFor, isTrained, moveChip, spanAt, spanLabel } from "./tokens/token-detail.js";
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
import { loadTokenizerFor, useTokenCheck, type CheckScenario, type TokenizerLoad, type WorkerCheck } from "./token-check-view.js";
import type { CheckResult } from "../../scenario/token-check.js";
import "./views.css";
import "./tokens/tokens.css";

export interface TokenViewProps {
  sample: SampleView;
  /** `decode` is optional; with it the decoded sequence is exact for multi-byte characters. */
  tokenizer: TokenTexts;
  /**
   * Whether the generated tokens were sampled from a distribution (a model policy): only then are their
   * log-probabilities real. A text policy's (oracle, scripted, replay) are placeholder zeros, shown as none.
   */
  sampled: boolean;
  /** The run's scenario: the check's tokenizer and whether the run was structured (null: none known). */
  scenario?: CheckScenario;
  /** Checks a real vocabulary's sample in the rollout worker (absent: such a check says its model is not loaded). */
  workerCheck?: WorkerCheck;
  /** Loads a model's tokenizer alone in the worker, for a saved run of a model not loaded (absent: not offered). */
  loadTokenizer?: TokenizerLoad;
}

const KIND_LABEL: Record<SpanKind, string> = {
  prompt: "prompt · not trained",
  generated: "generated · trained",
  environment: "environment · not trained",
};

/**
 * What the user did in this sample's token view: which messages are expanded (pages of chips drawn), which token is
 * pinned, and which chip is the one tab stop of the chips (a roving tabindex: arrows move it). Kept for one sample
 * (`of`); another sample starts afresh.
 */
interface ViewState {
  of: SampleView | null;
  /** Pages drawn, by message index (absent: the default, collapsed over COLLAPSE_OVER tokens). */
  pages: Record<number, number>;
  pinned: number | null;
  focus: number | null;
}

const fresh = (sample: SampleView): ViewState => ({ of: sample, pages: {}, pinned: null, focus: null });

export function TokenView({ sample, tokenizer, sampled, scenario = null, workerCheck, loadTokenizer }: TokenViewProps) {
  const spans = messageSpans(sample);
  const [stored, setStored] = useState<ViewState>(() => fresh(sample));
  const view = stored.of === sample ? stored : fresh(sample);
  const update = useCallback((change: (v: ViewState) => Partial<ViewState>) => setStored((prev) => {
    const base = prev.of === sample ? prev : fresh(sample);
    return { ...base, ...change(base) };
  }), [sample]);
  const chipsRef = useRef<HTMLDivElement>(null);

  const counts = { prompt: 0, generated: 0, environment: 0 };
  const sizes = spans.map((s) => tokenCount(s.message));
  spans.forEach((s, i) => (counts[s.kind] += sizes[i]!));
  const pagesOf = (i: number) => view.pages[i] ?? (sizes[i]! > COLLAPSE_OVER ? 0 : 1);
  const shown = spans.map((_, i) => visibleChipCount(sizes[i]!, pagesOf(i)));
  const offsets = spans.map((s) => s.offset);
  const isDrawn = (pos: number | null) => pos !== null && spans.some((s, i) => pos >= s.offset && pos < s.offset + shown[i]!);
  // The chips' one tab stop: the chip last moved to, else the pinned one, else the first drawn.
  const tabStop = isDrawn(view.focus) ? view.focus : isDrawn(view.pinned) ? view.pinned : moveChip(offsets, shown, null, "first");
  const pinned = view.pinned === null ? null : spanAt(spans, sizes, view.pinned);
  const messageCount = sample.messages.length;
  const check = useTokenCheck(sample, messageCount, scenario, workerCheck);
  const total = sizes.reduce((a, b) => a + b, 0);
  const divergence = check.state === "done" ? check.result.first_divergence : null;
  // Our side's token at the divergence (none when ours ended first: the template's side goes on alone).
  const divergeAt = divergence && divergence.token_index < total ? divergence.token_index : null;
  const divergeSpan = divergeAt === null ? null : spanAt(spans, sizes, divergeAt);
  /** Draws the divergence's chip (its message expanded that far), scrolls to it and gives it the tab stop. */
  const revealDivergence = () => {
    if (divergeAt === null || !divergeSpan) return;
    const needed = Math.floor(divergeSpan.index / CHIP_PAGE) + 1;
    update((v) => ({ pages: pagesOf(divergeSpan.at) >= needed ? v.pages : { ...v.pages, [divergeSpan.at]: needed }, focus: divergeAt }));
    requestAnimationFrame(() => {
      const chip = chipsRef.current?.querySelector<HTMLElement>(`[data-pos="${divergeAt}"]`);
      chip?.scrollIntoView({ block: "center" });
      chip?.focus({ preventScroll: true });
    });
  };

  const setPages = useCallback((index: number, pages: number) => update((v) => ({ pages: { ...v.pages, [index]: pages } })), [update]);
  const toggle = (pos: number) => update((v) => ({ pinned: v.pinned === pos ? null : pos, focus: pos }));
  const unpin = () => update(() => ({ pinned: null }));

  const onChipClick = (e: MouseEvent<HTMLDivElement>) => {
    const pos = chipPosition(e.target);
    if (pos !== null) toggle(pos);
  };
  const onChipKey = (e: KeyboardEvent<HTMLDivElement>) => {
    const pos = chipPosition(e.target);
    if (pos === null) return;
    const move = chipMoveFor(e.key);
    if (move) {
      // The page's own arrow keys (samples, turns: useKeyboardNavigation) are not for a focused chip.
      e.preventDefault();
      e.stopPropagation();
      const to = moveChip(offsets, shown, pos, move);
      if (to === null) return;
      chipsRef.current?.querySelector<HTMLElement>(`[data-pos="${to}"]`)?.focus();
      update(() => ({ focus: to }));
    } else if (e.key === "Enter" || e.key === " ") {
      e.preventDefault();
      toggle(pos);
    }
  };
  const onKey = (e: KeyboardEvent<HTMLDivElement>) => {
    if (e.key === "Escape" && view.pinned !== null) unpin();
  };

  const generating = sample.turns.at(-1);
  const streaming = generating && generating.assistantIndex === null && generating.genEnd === null ? generating : null;
  return (
    <div className="tk" data-testid="token-view" onKeyDown={onKey}>
      <div className="tk-head">
        <span data-testid="token-counts">
          {counts.prompt + counts.generated + counts.environment} tokens: {counts.generated} generated, {counts.prompt} prompt,{" "}
          {counts.environment} environment
        </span>
        <Legend sampled={sampled} />
      </div>
      {/* The pinned detail stays in view over the chips it describes, and scrolls away before the template comparison. */}
      <div className="tk-pin-area">
        {pinned ? (
          <TokenDetail sample={sample} span={pinned.span} index={pinned.index} pos={view.pinned!} tokenizer={tokenizer} sampled={sampled} onClose={unpin} />
        ) : (
          <p className="tk-detail-hint tx-muted" data-testid="token-detail-hint">
            Click a token to pin its detail here (or Tab to the tokens: ←/→ move, ↑/↓ by message, Enter pins, Escape unpins).
          </p>
        )}
        {/* data-own-keys: the page's global keys leave the chips their keys (the arrows are stopped here as well). */}
        <div className="tk-messages" ref={chipsRef} onClick={onChipClick} onKeyDown={onChipKey} data-own-keys>
          {spans.map((s, i) => (
            <MessageTokens
              key={`${sample.sample}:${s.index}`}
              index={s.index}
              message={s.message}
              kind={s.kind}
              turn={s.turn}
              offset={s.offset}
              tokenizer={tokenizer}
              sampled={sampled}
              pages={pagesOf(i)}
              onPages={setPages}
              // Only the messages holding the pin or the tab stop get a number here: the others are not drawn again.
              pinnedIndex={pinned && pinned.at === i ? pinned.index : null}
              tabIndex={tabStop !== null && tabStop >= s.offset && tabStop < s.offset + shown[i]! ? tabStop - s.offset : null}
              divergenceIndex={divergeSpan && divergeSpan.at === i ? divergeSpan.index : null}
            />
          ))}
          {streaming && (
            <p className="tk-streaming tx-muted" data-testid="token-streaming">
              turn {streaming.turn}: {plural(streaming.streamedTokens, "token")} streamed so far (their chips appear with the message)
            </p>
          )}
        </div>
      </div>
      <TokenCheckVerdict
        check={check}
        sample={sample}
        onReveal={divergeAt === null ? null : revealDivergence}
        onLoadTokenizer={loadTokenizer && ((model: string) => loadTokenizerFor(loadTokenizer, model))}
      />
      {check.state === "done" && <TemplateComparisonPanel sample={sample} messageCount={messageCount} tokenizer={tokenizer} result={check.result} />}
    </div>
  );
}

/** The log position of the chip an event is on (null: not on a chip). */
function chipPosition(target: EventTarget): number | null {
  const chip = target instanceof Element ? target.closest<HTMLElement>("[data-pos]") : null;
  return chip ? Number(chip.dataset.pos) : null;
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
      <span
        className="tk-chip generated tk-legend-sep"
        data-trained
        data-testid="legend-trained"
        title="Underlined: a trained token (an assistant message the policy generated, which carries generation_logprobs)"
      >
        trained
      </span>
      <span className="tk-chip prompt">prompt</span>
      <span className="tk-chip environment">environment</span>
      <span className="tk-chip prompt special">special</span>
    </div>
  );
}

const MessageTokens = memo(function MessageTokens(props: {
  index: number;
  message: Message;
  kind: SpanKind;
  turn: number | null;
  offset: number;
  tokenizer: TokenTexts;
  sampled: boolean;
  pages: number;
  onPages: (index: number, pages: number) => void;
  pinnedIndex: number | null;
  tabIndex: number | null;
  /** The chip of the check's first divergence, if it is in this message. */
  divergenceIndex: number | null;
}) {
  const { index, message, kind, turn, offset, tokenizer, sampled, pages, onPages, pinnedIndex, tabIndex, divergenceIndex } = props;
  const ids = tokenIdsView(message);
  const trained = isTrained(message);
  const logprobs = kind === "generated" && sampled ? logprobsView(message) : undefined;
  const shown = visibleChipCount(ids.length, pages);
  const summary = logprobSummary(logprobs);
  return (
    <section className={`tk-msg ${kind}`} data-testid="token-message" data-kind={kind} data-trained={trained}>
      <div className="tk-msg-head">
        {turn !== null && <span className="tk-turn">turn {turn}</span>}
        <span className={`tk-role ${message.role}`}>{message.role}</span>
        <span className="tk-kind">{kind === "generated" && !trained ? "generated · not trained (no generation_logprobs)" : KIND_LABEL[kind]}</span>
        <span className="tx-count">
          {ids.length} tokens · from #{offset}
        </span>
        {summary && (
          <span className="tx-count">
            mean logprob {summary.mean.toFixed(3)} · min {summary.min.toFixed(3)}
          </span>
        )}
        {ids.length > COLLAPSE_OVER && (
          <button type="button" className="tx-link" onClick={() => onPages(index, pages === 0 ? 1 : 0)}>
            {pages === 0 ? `show ${ids.length} tokens` : "collapse"}
          </button>
        )}
      </div>
      {shown > 0 && (
        <div className="tk-chips">
          <Chips
            ids={ids}
            count={shown}
            logprobs={logprobs}
            kind={kind}
            trained={trained}
            offset={offset}
            tokenizer={tokenizer}
            pinnedIndex={pinnedIndex}
            tabIndex={tabIndex}
            divergenceIndex={divergenceIndex}
          />
          {shown < ids.length && (
            <button type="button" className="tx-link" onClick={() => onPages(index, pages + 1)}>
              show {Math.min(CHIP_PAGE, ids.length - shown)} more ({ids.length - shown} left)
            </button>
          )}
        </div>
      )}
    </section>
  );
});

function Chips(props: {
  ids: ArrayLike<number>;
  count: number;
  logprobs: ArrayLike<number> | undefined;
  kind: SpanKind;
  trained: boolean;
  offset: number;
  tokenizer: TokenTexts;
  pinnedIndex: number | null;
  tabIndex: number | null;
  divergenceIndex: number | null;
}) {
  const { ids, count, logprobs, kind, trained, offset, tokenizer, pinnedIndex, tabIndex, divergenceIndex } = props;
  const chips = [];
  const trainedNote = trained ? "trained" : "not trained";
  for (let i = 0; i < count; i++) {
    const id = ids[i]!;
    const text = tokenizer.tokenText(id);
    const special = tokenizer.isSpecial(id);
    const lp = logprobs?.[i];
    const isPinned = i === pinnedIndex;
    const diverges = i === divergenceIndex;
    chips.push(
      <span
        key={i}
        className={`tk-chip ${kind}${special ? " special" : ""}${isPinned ? " pinned" : ""}${diverges ? " tk-diverge" : ""}`}
        style={lp !== undefined ? { background: logprobColor(lp) } : undefined}
        title={`#${offset + i} · ${tokenTitle(id, text, lp, special)}\n${trainedNote}${diverges ? "\nthe first token that differs from the chat template's" : ""}`}
        data-divergence={diverges || undefined}
        data-special={special || undefined}
        data-trained={trained || undefined}
        data-pos={offset + i}
        role="button"
        tabIndex={i === tabIndex ? 0 : -1}
        aria-pressed={isPinned}
      >
        {visibleText(text)}
      </span>,
    );
  }
  return <>{chips}</>;
}

const MAX_HIGHLIGHTS = 1000;
const CONTEXT = 40;

function TemplateComparisonPanel(props: { sample: SampleView; messageCount: number; tokenizer: TokenTexts; result: CheckResult }) {
  const { sample, messageCount, tokenizer, result } = props;
  const [open, setOpen] = useState(false);
  // The log only grows by whole messages: its length is what invalidates the comparison.
  const comparison = useMemo(() => {
    if (!open) return null;
    const messages = sample.messages.slice(0, messageCount);
    const c = compareWithTemplate(messages, tokenizer, result.reference.text);
    const spans = messageSpans({ ...sample, messages });
    const placed = messages.map((m) => ({ tokens: tokenCount(m), trained: isTrained(m) }));
    const ids = messages.flatMap((m) => Array.from(tokenIdsView(m)));
    const places = c.diff.equal ? null : placeHunks(placed, ids, tokenizer, c.template, c.decoded, c.diff.hunks);
    return { ...c, places, labels: spans.map(spanLabel), trained: placed.map((m) => m.trained) };
  }, [open, sample, messageCount, tokenizer, result]);
  return (
    <details className="tk-compare" data-testid="template-comparison" onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>Chat template vs. tokens, as text</summary>
      {comparison && <TemplateComparisonBody {...comparison} />}
    </details>
  );
}

/** The most ranges listed one by one with where they are. */
const MAX_LISTED = 50;

export interface TemplateComparisonBodyProps extends ReturnType<typeof compareWithTemplate> {
  /** Where each hunk lies in the log (null: not known; absent: not asked). */
  places?: readonly RangePlace[] | null;
  /** Each message's label ("prompt (user)", "turn 1 assistant"), and whether its tokens are trained. */
  labels?: readonly string[];
  trained?: readonly boolean[];
}

/** The comparison itself (exported for tests and for showing a precomputed comparison). */
export function TemplateComparisonBody({ template, decoded, diff, places, labels = [], trained = [] }: TemplateComparisonBodyProps) {
  const hunks = diff.hunks.slice(0, MAX_HIGHLIGHTS);
  const first = diff.hunks[0];
  const n = diff.hunks.length;
  const ranges = `${n} differing ${n === 1 ? "range" : "ranges"}`;
  const label = (m: number) => labels[m] ?? `message ${m}`;
  let verdict: string;
  if (!places) {
    verdict = places === null ? `${ranges} (their places among the tokens are not known: the tokenizer's decoding is not its tokens' texts joined)` : ranges;
  } else {
    const summary = trainedSummary(places, trained.map((t) => ({ tokens: 0, trained: t })));
    verdict =
      summary.touching === 0
        ? `${ranges}; none touch trained tokens (they are in the prompt, the environment's observations or the template's glue between messages): what is trained is as the policy generated it, but the context the policy saw differs from its chat template's rendering`
        : `${summary.touching} of ${ranges} ${summary.touching === 1 ? "touches" : "touch"} trained tokens (${summary.messages.map(label).join(", ")}): the policy is trained there on tokens its chat template would not produce`;
  }
  return (
    <div>
      {diff.equal ? (
        <p className="tk-verdict tk-same" data-testid="template-verdict">
          The tokens decode to exactly the chat template's rendering.
        </p>
      ) : (
        <div className={`tk-verdict tk-differs${places && places.some((p) => p.trained) ? " tk-trained-affected" : ""}`} data-testid="template-verdict">
          <p>
            {verdict}
            {n > MAX_HIGHLIGHTS && ` (the first ${MAX_HIGHLIGHTS} highlighted)`}
            {diff.coarse && "; some stretches differ too much to diff finely and are highlighted whole"}.
          </p>
          {first && <FirstDifference template={template} decoded={decoded} aAt={first.aStart} bAt={first.bStart} />}
          {places && (
            <ol className="tk-ranges" data-testid="template-ranges">
              {places.slice(0, MAX_LISTED).map((p, i) => (
                <li key={i} data-testid="template-range" data-trained={p.trained}>
                  <RangeLine place={p} template={template} decoded={decoded} label={label} />
                </li>
              ))}
              {places.length > MAX_LISTED && <li className="tx-muted">… and {places.length - MAX_LISTED} more</li>}
            </ol>
          )}
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

const SNIPPET = 48;
const snippet = (text: string) => JSON.stringify(text.length > SNIPPET ? `${text.slice(0, SNIPPET)}…` : text);

/** One range: what each side has, where it is, and whether it touches trained tokens. */
function RangeLine(props: { place: RangePlace; template: string; decoded: string; label: (m: number) => string }) {
  const { place, template, decoded, label } = props;
  // The texts as placed (a slid insertion reads as the template's glue there: "<|im_start|>user\n" before the prompt).
  const hunk = place.hunk;
  const [t0, t1] = place.tokens;
  const where =
    place.where === "between"
      ? place.messages.length === 2
        ? `template glue between ${label(place.messages[0]!)} and ${label(place.messages[1]!)}`
        : place.messages[0] === 0 && t0 === 0
          ? `template glue before ${label(place.messages[0]!)}`
          : `template glue after ${label(place.messages[0] ?? 0)}`
      : `in ${place.messages.map(label).join(", ")}${t1 > t0 ? ` (tokens #${t0}–#${t1 - 1})` : ` (before token #${t0})`}`;
  return (
    <>
      <span className="tk-range-where">{where}</span>
      {": template "}
      <code>{snippet(template.slice(hunk.aStart, hunk.aEnd))}</code>
      {", tokens "}
      <code>{snippet(decoded.slice(hunk.bStart, hunk.bEnd))}</code>
      {" · "}
      <span className={place.trained ? "tk-range-trained" : "tk-range-untrained"}>
        {place.trained ? "touches trained tokens" : place.where === "between" ? "no trained tokens" : "not trained (changes the context the policy sees)"}
      </span>
    </>
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

