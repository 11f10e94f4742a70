/**
 * The message log of one sample, turn by turn: the prompt, then each turn's assistant message (segments, tool calls,
 * violations) and observation (raw or wrapped), with rewards, the running total and how the sample ended.
 *
 * The sample is a mutable object that the store re-renders by `version`; finished turns are memoized on what can
 * still change about them, so a long transcript stays cheap while a run streams.
 */

import { memo, useCallback, useEffect, useMemo, useRef } from "react";
import type { Message } from "../../core/index.js";
import type { SampleView, TurnView } from "../run/run-model.js";
import { TERMINATION_WORDS } from "../termination.js";
import { AssistantMessage, ObservationMessage, plural, PromptMessage, RewardChips } from "./transcript/parts.js";
import { formatNumber, runningTotals, wrappedObservation, type StructuredView } from "./transcript/turns.js";
import "./views.css";

export interface TranscriptProps {
  sample: SampleView;
  version: number;
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

  // Stable callbacks, so memoized turns do not re-render when the parent passes a new function.
  const onSelectRef = useRef(props.onSelectTurn);
  onSelectRef.current = props.onSelectTurn;
  const select = useCallback((turn: number) => onSelectRef.current(turn), []);
  const onForkRef = useRef(props.onFork);
  onForkRef.current = props.onFork;
  const fork = useCallback((turn: number) => onForkRef.current?.(turn), []);
  const canFork = Boolean(props.onFork && props.canFork);
  const turnElements = useRef(new Map<number, HTMLLIElement>());
  const register = useCallback((turn: number, el: HTMLLIElement | null) => {
    if (el) turnElements.current.set(turn, el);
    else turnElements.current.delete(turn);
  }, []);

  const selectedExists = selectedTurn !== null && sample.turns[selectedTurn] !== undefined;
  useEffect(() => {
    if (selectedTurn === null || !selectedExists) return;
    turnElements.current.get(selectedTurn)?.scrollIntoView({ block: "nearest", behavior: "smooth" });
  }, [sample, selectedTurn, selectedExists]);

  const prompt = sample.messages.slice(0, sample.promptMessages);
  return (
    <div className="tx" data-testid="transcript">
      {/* Keyed by sample: expanders and toggles start over when another sample is shown. */}
      <ol className="tx-log" key={sample.sample}>
        {prompt.map((m, i) => (
          <li key={`p${i}`} className="tx-prompt">
            <PromptMessage message={m} />
          </li>
        ))}
        {sample.turns.map((t) =>
          t ? (
            <TurnBlock
              key={t.turn}
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
              onFork={canFork ? fork : null}
              notes={props.turnNotes?.get(t.turn) ?? NO_NOTES}
            />
          ) : null,
        )}
      </ol>
      <SampleEnd sample={sample} />
    </div>
  );
}

/** What can change about a turn object in place (it is mutated by the run model). */
function turnStamp(t: TurnView): string {
  return [t.streamed.length, t.assistantIndex, t.observationIndex, t.reward, t.genEnd, t.envEnd, t.terminated, t.violations.length].join("|");
}

const TurnBlock = memo(function TurnBlock(props: {
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
  onFork: ((turn: number) => void) | null;
  notes: readonly TurnNote[];
}) {
  const { turn: t, assistant, observation, total, selected, structured, thinkingStyle, tokenizer, onSelect, register, onFork, notes } = props;
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
      className={selected ? "tx-turn selected" : "tx-turn"}
      aria-current={selected ? "step" : undefined}
      tabIndex={0}
      ref={(el) => register(n, el)}
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
        <RewardChips reward={t.reward} components={t.rewardComponents} total={total} />
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
