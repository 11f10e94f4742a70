/**
 * The token consistency check's verdict on the selected sample (src/scenario/token-check.ts, run as the CLI runs it:
 * ../token-check-view.ts): consistent, or its first divergence, with the token index, the message, both sides'
 * tokens from there as text and the reason in words. Token texts are data: rendered as text, never as HTML.
 */

import { useState } from "react";
import type { SampleView } from "../../run/run-model.js";
import { REASON_TEXT } from "../../../scenario/token-check.js";
import type { PageCheck } from "../token-check-view.js";
import { visibleText } from "./tokens.js";

export interface TokenCheckVerdictProps {
  check: PageCheck;
  sample: Pick<SampleView, "messages">;
  /** Scrolls to our side's chip at the divergence (null: none to show, ours ended first). */
  onReveal: (() => void) | null;
  /** Loads the run's model's tokenizer alone in the worker (absent: the page cannot). */
  onLoadTokenizer?: ((model: string) => Promise<void>) | undefined;
}

function TokenRow({ texts, mark, testId }: { texts: readonly string[]; mark: boolean; testId: string }) {
  if (texts.length === 0) return <span className="tx-muted" data-testid={testId}>(the sequence ends here)</span>;
  return (
    <span data-testid={testId}>
      {texts.map((t, i) => (
        <span key={i} className={`tk-chip tk-check-token${mark && i === 0 ? " tk-diverge" : ""}`} title={JSON.stringify(t)}>
          {visibleText(t)}
        </span>
      ))}
    </span>
  );
}

/** The needs-model verdict's button: loads the tokenizer alone, says so while it loads, and why if it failed. */
function LoadTokenizerButton({ model, load }: { model: string; load: (model: string) => Promise<void> }) {
  const [state, setState] = useState<{ loading: boolean; error: string | null }>({ loading: false, error: null });
  return (
    <p>
      <button
        type="button"
        data-testid="token-check-load"
        disabled={state.loading}
        onClick={() => {
          setState({ loading: true, error: null });
          load(model).then(
            () => setState({ loading: false, error: null }),
            (e: unknown) => setState({ loading: false, error: e instanceof Error ? e.message : String(e) }),
          );
        }}
      >
        {state.loading ? `loading the tokenizer of ${model}…` : `load the tokenizer of ${model} (its tokenizer files, not the model)`}
      </button>
      {state.error && (
        <span className="tk-range-trained" data-testid="token-check-load-error">
          {" "}
          could not load it: {state.error}
        </span>
      )}
    </p>
  );
}

export function TokenCheckVerdict({ check, sample, onReveal, onLoadTokenizer }: TokenCheckVerdictProps) {
  if (check.state === "pending") {
    return (
      <p className="tk-check tx-muted" data-testid="token-check" data-state="pending">
        Checking the tokens against the chat template (tokenizer {check.tokenizer})…
      </p>
    );
  }
  if (check.state === "needs_model") {
    return (
      <div className="tk-check tk-verdict" data-testid="token-check" data-state="needs_model">
        <p>
          The token check needs the tokenizer of <code>{check.model}</code>, and this page has it only while that model is loaded in its rollout
          worker{check.loaded ? ` (it has ${check.loaded} loaded now)` : " (none is loaded now)"}. To check this run here, run its scenario in this
          page (its model loads with the run), then open this sample; or export it (JSONL) and run{" "}
          <code>npm run tokens -- check &lt;export.jsonl&gt;</code>, which loads the model's tokenizer files itself
          {onLoadTokenizer ? "; or load its tokenizer alone here" : ""}.
        </p>
        {onLoadTokenizer && <LoadTokenizerButton model={check.model} load={onLoadTokenizer} />}
      </div>
    );
  }
  if (check.state === "failed") {
    return (
      <p className="tk-check tk-verdict tk-differs" data-testid="token-check" data-state="failed">
        The token check failed (tokenizer {check.tokenizer}): {check.error}
      </p>
    );
  }
  const { result, tokenizer } = check;
  const d = result.first_divergence;
  if (!d) {
    return (
      <p className="tk-check tk-verdict tk-same" data-testid="token-check" data-state="consistent">
        Consistent with the chat template: the {result.ours.length} tokens are its rendering of this conversation, token for token (tokenizer{" "}
        {tokenizer}).
      </p>
    );
  }
  const role = sample.messages[d.message_index]?.role ?? "?";
  return (
    <div className="tk-check tk-verdict tk-differs" data-testid="token-check" data-state="drift" data-token-index={d.token_index} data-reason={d.reason ?? ""}>
      <p>
        Drifts from the chat template at{" "}
        <strong data-testid="token-check-index">token #{d.token_index}</strong> (message {d.message_index}, {role}):{" "}
        <span data-testid="token-check-reason">{d.reason ? `${d.reason}, ${REASON_TEXT[d.reason]}` : "a divergence none of the check's reasons explains"}</span>{" "}
        (tokenizer {tokenizer}; {result.ours.length} tokens here, {result.reference.ids.length} in the template's).{" "}
        {onReveal && (
          <button type="button" className="tx-link" data-testid="token-check-reveal" onClick={onReveal}>
            show token #{d.token_index} among the tokens
          </button>
        )}
      </p>
      <dl className="tk-detail-fields tk-check-sides">
        <dt>before</dt>
        <dd>
          <TokenRow texts={result.before} mark={false} testId="token-check-before" />
        </dd>
        <dt>ours from #{d.token_index}</dt>
        <dd>
          <TokenRow texts={d.ours} mark testId="token-check-ours" />
        </dd>
        <dt>template from #{d.token_index}</dt>
        <dd>
          <TokenRow texts={d.template} mark testId="token-check-template" />
        </dd>
      </dl>
    </div>
  );
}
