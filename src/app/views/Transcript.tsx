/**
 * The message log of one sample, turn by turn: the prompt, then each turn's assistant message (segments, tool calls,
 * violations) and observation (raw or wrapped), with rewards, the running total and how the sample ended.
 *
 * The sample is a mutable object, drawn again each time its run publishes; finished turns are memoized on what can
 * still change about them, so a long transcript stays cheap while a run streams.
 *
 * A transcript of more than VIRTUALIZE_AFTER_TURNS turns renders only the turns near the screen (the document
 * scrolls them in; `@tanstack/react-virtual`, measured heights): drawing 200 turns at once took the main thread for
 * a third of a second. Selecting a turn that is not rendered (a click elsewhere, the keys, "Go to turn") scrolls it
 * in; "Render all turns" draws every turn as a short transcript does (for the browser's find in page, or selecting
 * text across distant turns).
 */

import { useVirtualizer, useWindowVirtualizer, type Virtualizer } from "@tanstack/react-virtual";
import { useDetailScroll } from "../layout/pane-context.js";
import { memo, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState, type ReactNode, type RefObject } from "react";
import type { Message } from "../../core/index.js";
import type { SampleView, TurnView } from "../run/run-model.js";
import { TERMINATION_WORDS } from "../termination.js";
import { AssistantMessage, ObservationMessage, plural, PromptMessage, RewardChips } from "./transcript/parts.js";
import { formatNumber, runningTotals, wrappedObservation, type StructuredView } from "./transcript/turns.js";
import "./views.css";

export interface TranscriptProps {
  sample: SampleView;
  selectedTurn: number | null;
  onSelectTurn(turn: number): void;
  structured: StructuredView | null;
  /**
   * Optional: the run's tokenizer, for the "template" envelope's wrapped view (it needs the assistant turn decoded
   * with nothing skipped, and the generation prefill). Without it the assistant's content stands in.
   */
  tokenizer?: { decode(ids: readonly number[]): string; generationPrefill?: string } | null;
  /** Optional: a "Fork from here" action on each turn with an assistant message (shown while `canFork`). */
  onFork?(turn: number): void;
  canFork?: boolean;
  /** Optional: short notes per turn (a fork's kept turns and fork point, where forks branch off), as text. */
  turnNotes?: ReadonlyMap<number, readonly TurnNote[]>;
}

export interface TurnNote {
  kind: string;
  text: string;
}

const NO_NOTES: readonly TurnNote[] = [];

/** Transcripts with more turns than this render only the turns near the screen (unless the reader asks for all). */
export const VIRTUALIZE_AFTER_TURNS = 40;
/** A turn's height before it is measured (a turn with a thinking text and an observation; as in views.css). */
const ESTIMATED_TURN_PX = 260;
/** The turn list's gap (views.css: `.tx-log { gap: 0.5rem }`). */
const TURN_GAP_PX = 8;

type Tokenizer = TranscriptProps["tokenizer"];

export function Transcript(props: TranscriptProps) {
  const { sample, selectedTurn, tokenizer } = props;
  // A parent may pass a fresh object each render: keep one per setting, so finished turns stay memoized.
  const { enabled, envelope, thinkingStyle: style } = props.structured ?? {};
  const structured = useMemo<StructuredView | null>(
    () => (enabled === undefined ? null : { enabled, envelope: envelope ?? "fork", thinkingStyle: style ?? "paired" }),
    [enabled, envelope, style],
  );
  const totals = runningTotals(sample.turns);
  const thinkingStyle = structured?.enabled ? structured.thinkingStyle : "paired";

  // Memoized turns re-render when these change: the parent passes stable callbacks.
  const select = props.onSelectTurn;
  const fork = props.onFork;
  const canFork = Boolean(props.onFork && props.canFork);
  const turnElements = useRef(new Map<number, HTMLLIElement>());
  const register = useCallback((turn: number, el: HTMLLIElement | null) => {
    if (el) turnElements.current.set(turn, el);
    else turnElements.current.delete(turn);
  }, []);

  const turns = sample.turns.filter((t): t is TurnView => Boolean(t));
  const [renderAll, setRenderAll] = useState(false);
  const long = turns.length > VIRTUALIZE_AFTER_TURNS;
  const virtual = long && !renderAll;
  const virtualApi = useRef<VirtualTurnsApi | null>(null);

  // A rendered turn scrolls into view smoothly; one that is not (a virtual list's) is brought in by the list.
  const scrollToTurn = useCallback((turn: number) => {
    const el = turnElements.current.get(turn);
    if (el) el.scrollIntoView({ block: "nearest", behavior: "smooth" });
    else virtualApi.current?.scrollToTurn(turn);
  }, []);
  // "Go to turn" scrolls to its turn even when that turn is already the selected one.
  const [goRequest, setGoRequest] = useState(0);
  const goToTurn = (turn: number) => {
    select(turn);
    setGoRequest((n) => n + 1);
  };

  const selectedExists = selectedTurn !== null && sample.turns[selectedTurn] !== undefined;
  useEffect(() => {
    if (selectedTurn === null || !selectedExists) return;
    scrollToTurn(selectedTurn);
  }, [sample, selectedTurn, selectedExists, goRequest, scrollToTurn]);

  // Where a sample that ended with an error failed: its last turn, if the environment never answered it.
  const lastTurn = sample.state === "done" ? (turns.at(-1)?.turn ?? null) : null;
  // In a virtual list, `measure` is its measurer (each rendered turn's element carries its list index).
  const renderTurn = (t: TurnView, index?: number, measure?: (el: HTMLLIElement) => void) => (
    <TurnBlock
      key={t.turn}
      index={index}
      measure={measure ?? null}
      turn={t}
      stamp={turnStamp(t)}
      assistant={t.assistantIndex === null ? null : (sample.messages[t.assistantIndex] ?? null)}
      observation={t.observationIndex === null ? null : (sample.messages[t.observationIndex] ?? null)}
      total={totals[t.turn] ?? 0}
      selected={t.turn === selectedTurn}
      structured={structured}
      thinkingStyle={thinkingStyle}
      tokenizer={tokenizer}
      onSelect={select}
      register={register}
      onFork={canFork && fork ? fork : null}
      notes={props.turnNotes?.get(t.turn) ?? NO_NOTES}
      failure={sample.error !== null && t.turn === lastTurn && t.envEnd === null ? sample.error : null}
    />
  );

  const prompt = sample.messages.slice(0, sample.promptMessages);
  return (
    <div className="tx" data-testid="transcript" data-virtual={virtual ? "" : undefined}>
      {long && (
        <div className="tx-tools" data-testid="transcript-tools">
          <span className="tx-muted">
            {turns.length} turns{virtual ? ", drawn as they scroll into view" : ", all drawn"}
          </span>
          <TurnJump turns={turns} selectedTurn={selectedTurn} onGo={goToTurn} />
          <button
            type="button"
            className="link"
            aria-pressed={renderAll}
            title="Drawing every turn makes them all findable with the browser's find in page and selectable at once, but costs time with each change"
            onClick={() => setRenderAll(!renderAll)}
          >
            {renderAll ? "Draw only the turns in view" : "Render all turns (for find in page)"}
          </button>
        </div>
      )}
      {/* Keyed by sample: expanders and toggles start over when another sample is shown. */}
      <ol className="tx-log" key={sample.sample}>
        {prompt.map((m, i) => (
          <li key={`p${i}`} className="tx-prompt">
            <PromptMessage message={m} />
          </li>
        ))}
        {!virtual && turns.map((t) => renderTurn(t))}
      </ol>
      {virtual && <VirtualTurns key={sample.sample} turns={turns} render={renderTurn} apiRef={virtualApi} />}
      <SampleEnd sample={sample} />
    </div>
  );
}

interface VirtualTurnsApi {
  scrollToTurn(turn: number): void;
}

/**
 * The turns of a long transcript, only those near the screen rendered. What scrolls them is the detail pane where the
 * lab has panes (../layout/pane-context.ts), else the page (the document); either way the list starts `scrollMargin`
 * px down the scrolled content, and each rendered turn is measured as it mounts or changes size.
 */
function VirtualTurns(props: { turns: readonly TurnView[]; render: RenderTurn; apiRef: RefObject<VirtualTurnsApi | null> }) {
  const pane = useDetailScroll();
  // Keyed by the scroller: a layout change (a window made narrow) starts a list of the other kind.
  return pane ? <PaneTurns key="pane" pane={pane} {...props} /> : <WindowTurns key="window" {...props} />;
}

type RenderTurn = (turn: TurnView, index: number, measure: (el: HTMLLIElement) => void) => ReactNode;

const virtualOptions = (turns: readonly TurnView[], scrollMargin: number) => ({
  count: turns.length,
  estimateSize: () => ESTIMATED_TURN_PX,
  gap: TURN_GAP_PX,
  overscan: 3,
  scrollMargin,
  scrollPaddingStart: TURN_GAP_PX,
  getItemKey: (i: number) => turns[i]?.turn ?? i,
  // The turns that scroll in are rendered in a task of their own, not inside the scroll event (which runs in the
  // frame, with its style, layout and paint): two shorter tasks instead of one. The overscan covers a wheel step.
  useFlushSync: false,
});

function WindowTurns({ turns, render, apiRef }: { turns: readonly TurnView[]; render: RenderTurn; apiRef: RefObject<VirtualTurnsApi | null> }) {
  const listRef = useRef<HTMLDivElement>(null);
  const scrollMargin = useListTop(listRef, null);
  const virtualizer = useWindowVirtualizer(virtualOptions(turns, scrollMargin));
  return <TurnsList listRef={listRef} turns={turns} render={render} apiRef={apiRef} virtualizer={virtualizer} scrollMargin={scrollMargin} />;
}

function PaneTurns({ pane, turns, render, apiRef }: { pane: HTMLElement; turns: readonly TurnView[]; render: RenderTurn; apiRef: RefObject<VirtualTurnsApi | null> }) {
  const listRef = useRef<HTMLDivElement>(null);
  const scrollMargin = useListTop(listRef, pane);
  const virtualizer = useVirtualizer({ ...virtualOptions(turns, scrollMargin), getScrollElement: () => pane });
  return <TurnsList listRef={listRef} turns={turns} render={render} apiRef={apiRef} virtualizer={virtualizer} scrollMargin={scrollMargin} />;
}

/**
 * Where the list starts in what scrolls it (the pane's content, or the document): now, and again whenever that
 * content's size changes (what is above the list grew or shrank, the window was resized), read where layout is fresh.
 */
function useListTop(listRef: RefObject<HTMLDivElement | null>, pane: HTMLElement | null): number {
  const [top, setTop] = useState(0);
  useLayoutEffect(() => {
    const measure = () => {
      const el = listRef.current;
      if (!el) return;
      const at = pane ? el.getBoundingClientRect().top - pane.getBoundingClientRect().top + pane.scrollTop : el.getBoundingClientRect().top + window.scrollY;
      const next = Math.round(at);
      setTop((m) => (Math.abs(m - next) >= 1 ? next : m));
    };
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(pane ? (pane.firstElementChild ?? pane) : document.body);
    return () => observer.disconnect();
  }, [listRef, pane]);
  return top;
}

/** What the list draws from, whichever element scrolls it. */
type ListVirtualizer = Pick<Virtualizer<Window, Element>, "scrollToIndex" | "getVirtualItems" | "getTotalSize" | "measureElement">;

function TurnsList(props: {
  listRef: RefObject<HTMLDivElement | null>;
  turns: readonly TurnView[];
  render: RenderTurn;
  apiRef: RefObject<VirtualTurnsApi | null>;
  virtualizer: ListVirtualizer;
  scrollMargin: number;
}) {
  const { listRef, turns, render, apiRef, virtualizer, scrollMargin } = props;
  useLayoutEffect(() => {
    apiRef.current = {
      scrollToTurn(turn) {
        const index = turns.findIndex((t) => t.turn === turn);
        if (index >= 0) virtualizer.scrollToIndex(index, { align: "start" });
      },
    };
    return () => {
      apiRef.current = null;
    };
  }, [apiRef, turns, virtualizer]);
  const items = virtualizer.getVirtualItems();
  const offset = (items[0]?.start ?? scrollMargin) - scrollMargin;
  return (
    <div ref={listRef} className="tx-virtual" style={{ height: virtualizer.getTotalSize() }}>
      <ol className="tx-log" style={{ transform: `translateY(${offset}px)` }}>
        {items.map((item) => render(turns[item.index]!, item.index, virtualizer.measureElement))}
      </ol>
    </div>
  );
}

/** "Go to turn N": selects the turn and scrolls to it (a long transcript's turns are not all rendered). */
function TurnJump({ turns, selectedTurn, onGo }: { turns: readonly TurnView[]; selectedTurn: number | null; onGo(turn: number): void }) {
  const [text, setText] = useState("");
  const first = turns[0]?.turn ?? 0;
  const last = turns[turns.length - 1]?.turn ?? 0;
  return (
    <form
      className="tx-jump"
      onSubmit={(e) => {
        e.preventDefault();
        const n = Number(text.trim() === "" ? NaN : text);
        if (!Number.isInteger(n)) return;
        // The nearest turn there is (a hole in the list: the next one).
        const target = turns.find((t) => t.turn >= Math.min(Math.max(n, first), last));
        if (target) onGo(target.turn);
      }}
    >
      <label>
        Go to turn{" "}
        <input
          aria-label="Go to turn"
          type="number"
          min={first}
          max={last}
          placeholder={selectedTurn === null ? `${first}–${last}` : String(selectedTurn)}
          value={text}
          onChange={(e) => setText(e.target.value)}
        />
      </label>
      <button type="submit">Go</button>
    </form>
  );
}

/** What can change about a turn object in place (it is mutated by the run model). */
function turnStamp(t: TurnView): string {
  return [t.streamed.length, t.assistantIndex, t.observationIndex, t.reward, t.genEnd, t.envEnd, t.terminated, t.violations.length].join("|");
}

const TurnBlock = memo(function TurnBlock(props: {
  /** The turn's position in a virtual list (absent: all turns are rendered). */
  index?: number;
  turn: TurnView;
  stamp: string;
  assistant: Message | null;
  observation: Message | null;
  total: number;
  selected: boolean;
  structured: StructuredView | null;
  thinkingStyle: "paired" | "closing_only";
  tokenizer: Tokenizer;
  onSelect(turn: number): void;
  register(turn: number, el: HTMLLIElement | null): void;
  /** A virtual list's measurer of the turn's element. */
  measure: ((el: HTMLLIElement) => void) | null;
  onFork: ((turn: number) => void) | null;
  notes: readonly TurnNote[];
  /** The error the sample ended with, when this turn is where it happened (its last, with no answer of the environment). */
  failure: string | null;
}) {
  const { index, turn: t, assistant, observation, total, selected, structured, thinkingStyle, tokenizer, onSelect, register, measure, onFork, notes, failure } = props;
  const n = t.turn;
  const wrapped =
    observation && structured?.enabled
      ? () =>
          wrappedObservation(
            observation.content,
            structured,
            assistant ? (tokenizer ? tokenizer.decode(assistant.token_ids) : assistant.content) : "",
            tokenizer?.generationPrefill,
          ) ?? observation.content
      : null;
  return (
    <li
      data-testid="turn"
      data-turn={n}
      data-index={index}
      className={selected ? "tx-turn selected" : "tx-turn"}
      aria-current={selected ? "step" : undefined}
      tabIndex={0}
      ref={(el) => {
        register(n, el);
        if (el && measure) measure(el);
      }}
      onClick={() => onSelect(n)}
      onKeyDown={(e) => {
        if (e.target === e.currentTarget && (e.key === "Enter" || e.key === " ")) {
          e.preventDefault();
          onSelect(n);
        }
      }}
    >
      <div className="tx-turn-head">
        <span className="tx-turn-title">Turn {n}</span>
        <RewardChips reward={t.reward} components={t.rewardComponents} total={total} failed={failure !== null} />
        {t.terminated && <span className="tx-chip tx-muted">terminated</span>}
        {t.truncatedContext && <span className="tx-chip tx-warn">context truncated</span>}
        {notes.map((note, i) => (
          <span key={i} className={`tx-chip tx-note tx-note-${note.kind}`} data-testid="turn-note" data-kind={note.kind}>
            {note.text}
          </span>
        ))}
        {onFork && assistant && (
          <button
            type="button"
            className="link tx-fork"
            data-testid="fork-from-turn"
            title="Edit this turn, or change the seed or sampling, and continue the rollout from here"
            onClick={(e) => {
              e.stopPropagation();
              onFork(n);
            }}
          >
            Fork from here
          </button>
        )}
      </div>
      {assistant ? (
        <AssistantMessage
          message={assistant}
          violations={t.violations.length ? t.violations : (assistant.invalid_action_violations ?? [])}
          thinkingStyle={thinkingStyle}
          responseTruncated={t.responseTruncated}
        />
      ) : t.genEnd === null ? (
        <div className="tx-msg assistant tx-streaming" data-testid="streaming">
          <div className="tx-msg-head">
            <span className="tx-role">assistant</span>
            <span className="tx-chip tx-live">streaming…</span>
            <span className="tx-count">{plural(t.streamedTokens, "token")}</span>
          </div>
          <pre className="tx-body">{t.streamed}</pre>
        </div>
      ) : (
        <div className="tx-msg assistant">
          <span className="tx-muted">no response</span>
        </div>
      )}
      {observation && <ObservationMessage message={observation} wrapped={wrapped} truncatedContext={t.truncatedContext} />}
      {failure !== null && (
        <pre className="error tx-turn-error" data-testid="turn-error">
          This turn ended the sample with an error{t.genEnd !== null ? " after the response (in the environment's step, or its checks)" : ""}: {failure}
        </pre>
      )}
    </li>
  );
});

function SampleEnd({ sample }: { sample: SampleView }) {
  if (sample.termination === null && sample.error === null) {
    return sample.state === "done" ? null : (
      <p className="tx-end tx-muted" data-testid="transcript-state">
        {sample.state === "generating" ? "generating…" : sample.state === "environment" ? "waiting for the environment…" : "waiting…"}
      </p>
    );
  }
  return (
    <div className="tx-end" data-testid="transcript-end">
      {sample.termination !== null && (
        <span data-testid="transcript-termination">
          Ended: <strong>{TERMINATION_WORDS[sample.termination] ?? sample.termination}</strong>
        </span>
      )}
      <span className="tx-total">total reward {formatNumber(sample.totalReward)}</span>
      {sample.error !== null && (
        <pre className="error" data-testid="transcript-error">
          {sample.error}
        </pre>
      )}
    </div>
  );
}
