/**
 * The transcript's building blocks: segments of an assistant message, tool calls, messages. Every text here is
 * data and goes into the page as React text children only.
 */

import { memo, useMemo, useState } from "react";
import type { Message, Violation } from "../../../core/index.js";
import { tokenCount } from "../../run/compact-messages.js";
import { analyzeAssistantText, firstLines, markerSegments, type InlineSegment, type Segment, type ToolCallSegment } from "./segments.js";
import { formatNumber, violationLabel } from "./turns.js";
import { Highlighted } from "./search-highlight.js";

const PROMPT_LINES = 6;
const PROMPT_CHARS = 1200;

export function Marked({ text }: { text: string }) {
  return (
    <>
      {markerSegments(text).map((s) =>
        s.kind === "marker" ? (
          <span key={s.start} className={s.note ? "tx-marker tx-stray" : "tx-marker"} title={s.note ?? "marker"}>
            {s.text}
          </span>
        ) : (
          <Highlighted key={s.start} text={s.text} />
        ),
      )}
    </>
  );
}

function nameText(name: unknown): string {
  return typeof name === "string" ? name : JSON.stringify(name) ?? String(name);
}

function VerdictChip({ call }: { call: ToolCallSegment }) {
  const v = call.verdict;
  if (v.status === "parsed") return <span className="tx-chip tx-ok">parsed</span>;
  const label = v.status === "json_error" ? "JSON error" : "missing name or arguments";
  return (
    <span className="tx-chip tx-bad" title={v.message}>
      {label}: {v.message}
    </span>
  );
}

function SchemaChip({ call }: { call: ToolCallSegment }) {
  if (!call.schema) return null;
  if (!call.schema.known) return <span className="tx-chip tx-muted">no schema known</span>;
  if (call.schema.errors.length === 0) return <span className="tx-chip tx-ok">schema ok</span>;
  return <span className="tx-chip tx-bad">{call.schema.errors.length === 1 ? "1 schema error" : `${call.schema.errors.length} schema errors`}</span>;
}

export function ToolCallView({ call }: { call: ToolCallSegment }) {
  const parsed = call.verdict.status === "parsed";
  return (
    <div className={parsed ? "tx-call" : "tx-call tx-call-bad"} data-testid="tool-call" data-verdict={call.verdict.status}>
      <div className="tx-call-head">
        <span className="tx-marker">{"<tool_call>"}</span>
        {parsed && <span className="tx-call-name">{nameText(call.name)}</span>}
        <VerdictChip call={call} />
        <SchemaChip call={call} />
      </div>
      <pre className="tx-call-json">{call.pretty ?? call.body}</pre>
      {call.schema && call.schema.errors.length > 0 && (
        <ul className="tx-errors">
          {call.schema.errors.map((e, i) => (
            <li key={i}>{e}</li>
          ))}
        </ul>
      )}
      {call.pretty !== null && call.pretty !== call.body.trim() && (
        <details className="tx-raw">
          <summary>raw</summary>
          <pre>{call.body}</pre>
        </details>
      )}
      {call.closed ? <span className="tx-marker">{"</tool_call>"}</span> : <span className="tx-chip tx-bad">no closing tag</span>}
    </div>
  );
}

function InlineView({ segment }: { segment: InlineSegment }) {
  switch (segment.kind) {
    case "text":
      return <Highlighted text={segment.text} />;
    case "marker":
      return (
        <span className={segment.note ? "tx-marker tx-stray" : "tx-marker"} title={segment.note ?? "marker"}>
          {segment.text}
        </span>
      );
    case "tool_call":
      return <ToolCallView call={segment} />;
  }
}

function SegmentView({ segment }: { segment: Segment }) {
  if (segment.kind !== "think") return <InlineView segment={segment} />;
  const chars = segment.contentEnd - segment.contentStart;
  const calls = segment.children.filter((c) => c.kind === "tool_call").length;
  // A tool call made while thinking is still a call: keep it in view.
  return (
    <details className="tx-think" open={calls > 0 || undefined}>
      <summary>
        thinking · {chars} chars
        {segment.openTag === null && " · opened by the prompt"}
        {segment.closeTag === null && " · never closed"}
        {calls > 0 && ` · ${plural(calls, "tool call")} inside`}
      </summary>
      {segment.openTag !== null && <span className="tx-marker">{segment.openTag}</span>}
      {segment.children.map((c) => (
        <InlineView key={c.start} segment={c} />
      ))}
      {segment.closeTag !== null && <span className="tx-marker">{segment.closeTag}</span>}
    </details>
  );
}

export function ViolationChips({ violations }: { violations: readonly Violation[] }) {
  return (
    <>
      {violations.map((v, i) => (
        <span key={i} className="tx-chip tx-bad" data-testid="violation" title={v.detail ?? v.type}>
          {violationLabel(v)}
          {v.detail ? `: ${v.detail.length > 80 ? `${v.detail.slice(0, 80)}…` : v.detail}` : ""}
        </span>
      ))}
    </>
  );
}

export const plural = (n: number, word: string) => `${n} ${n === 1 ? word : `${word}s`}`;
const tokensLabel = (m: Message) => plural(tokenCount(m), "token");

/** An assistant message: its segments, violations, and the parser's and thinking verdicts. */
export const AssistantMessage = memo(function AssistantMessage(props: {
  message: Message;
  violations: readonly Violation[];
  thinkingStyle: "paired" | "closing_only";
  responseTruncated: boolean;
}) {
  const { message, violations, thinkingStyle, responseTruncated } = props;
  const analysis = useMemo(() => analyzeAssistantText(message.content, { thinkingStyle }), [message.content, thinkingStyle]);
  return (
    <div className="tx-msg assistant" data-testid="assistant-message">
      <div className="tx-msg-head">
        <span className="tx-role">assistant</span>
        <span className="tx-count">{tokensLabel(message)}</span>
        {responseTruncated && <span className="tx-chip tx-warn">response truncated</span>}
        {analysis.malformedThinking && (
          <span className="tx-chip tx-bad" data-testid="malformed-thinking" title={`thinking style: ${thinkingStyle}`}>
            malformed thinking
          </span>
        )}
        {analysis.toolCallError !== null && analysis.toolCalls.length > 0 && (
          <span className="tx-chip tx-bad" title={analysis.toolCallError}>
            the parser discards this turn's {analysis.toolCalls.length === 1 ? "call" : `${analysis.toolCalls.length} calls`}
          </span>
        )}
        <ViolationChips violations={violations} />
      </div>
      <div className="tx-body">
        {message.content === "" ? (
          <span className="tx-muted">(empty)</span>
        ) : (
          analysis.segments.map((s) => <SegmentView key={s.start} segment={s} />)
        )}
      </div>
    </div>
  );
});

/** An observation, raw, or as the envelope wrapped it for tokenizing. */
export const ObservationMessage = memo(function ObservationMessage(props: {
  message: Message;
  /** The wrapped text, computed on demand; absent when the envelope is off. */
  wrapped: (() => string) | null;
  truncatedContext: boolean;
}) {
  const { message, wrapped, truncatedContext } = props;
  const [showWrapped, setShowWrapped] = useState(false);
  const text = wrapped && showWrapped ? wrapped() : message.content;
  return (
    <div className={`tx-msg ${message.role === "tool" ? "tool" : "environment"}`} data-testid="observation">
      <div className="tx-msg-head">
        <span className="tx-role">{message.role}</span>
        <span className="tx-count">{tokensLabel(message)}</span>
        {truncatedContext && <span className="tx-chip tx-warn">cut at max_seq_len</span>}
        {wrapped && (
          <span className="tx-toggle" role="group" aria-label="Observation text">
            <button type="button" aria-pressed={!showWrapped} onClick={() => setShowWrapped(false)}>
              raw
            </button>
            <button type="button" aria-pressed={showWrapped} onClick={() => setShowWrapped(true)} title="the text the tokens were made from">
              wrapped
            </button>
          </span>
        )}
      </div>
      <pre className="tx-body">
        <Marked text={text} />
      </pre>
    </div>
  );
});

/** A prompt message, collapsed to its first lines. */
export const PromptMessage = memo(function PromptMessage({ message }: { message: Message }) {
  const [expanded, setExpanded] = useState(false);
  const collapsed = useMemo(() => firstLines(message.content, PROMPT_LINES, PROMPT_CHARS), [message.content]);
  const text = expanded || !collapsed.cut ? message.content : collapsed.head;
  return (
    <div className={`tx-msg ${message.role}`} data-testid="prompt-message">
      <div className="tx-msg-head">
        <span className="tx-role">{message.role}</span>
        <span className="tx-chip tx-muted">prompt</span>
        <span className="tx-count">{tokensLabel(message)}</span>
      </div>
      <pre className="tx-body">
        <Marked text={text} />
        {collapsed.cut && !expanded && "…"}
      </pre>
      {collapsed.cut && (
        <button type="button" className="tx-link" onClick={() => setExpanded(!expanded)}>
          {expanded ? "collapse" : `show all (${collapsed.hiddenLines} more ${collapsed.hiddenLines === 1 ? "line" : "lines"})`}
        </button>
      )}
    </div>
  );
});

export function RewardChips(props: { reward: number | null; components: Record<string, number> | null; total: number; failed?: boolean }) {
  const { reward, components, total, failed } = props;
  return (
    <>
      {reward === null ? (
        <span className={failed ? "tx-chip tx-bad" : "tx-chip tx-muted"}>{failed ? "no reward: the turn failed" : "no reward yet"}</span>
      ) : (
        <span className={`tx-chip ${reward > 0 ? "tx-ok" : reward < 0 ? "tx-bad" : "tx-muted"}`} data-testid="reward">
          reward {formatNumber(reward, true)}
        </span>
      )}
      {components &&
        Object.entries(components).map(([name, value]) => (
          <span key={name} className="tx-chip tx-muted" title={`reward component ${name}`}>
            {name} {formatNumber(value, true)}
          </span>
        ))}
      <span className="tx-total" data-testid="running-total">
        total {formatNumber(total)}
      </span>
    </>
  );
}
