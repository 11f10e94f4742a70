/**
 * The pinned token's detail: where it is, its id and text (as text, every escape visible: model output is data,
 * never markup), its message, whether it is trained and why, and for a sampled token its log-probability,
 * probability, the step's entropy and the top alternatives (or, plainly, why there are none).
 */

import { tokenCount, tokenIdsView } from "../../run/compact-messages.js";
import type { SampleView } from "../../run/run-model.js";
import { escapedText, formatLogprob, samplingDetail, spanLabel, trainedWhy } from "./token-detail.js";
import { formatProbability, visibleText, type MessageSpan, type TokenTexts } from "./tokens.js";

export interface TokenDetailProps {
  sample: SampleView;
  span: MessageSpan;
  /** The token's index in its message, and its position in the whole log. */
  index: number;
  pos: number;
  tokenizer: TokenTexts;
  sampled: boolean;
  onClose: () => void;
}

export function TokenDetail({ sample, span, index, pos, tokenizer, sampled, onClose }: TokenDetailProps) {
  const id = tokenIdsView(span.message)[index]!;
  const text = tokenizer.tokenText(id);
  const special = tokenizer.isSpecial(id);
  const trained = trainedWhy(span);
  const sampling = samplingDetail(sample, span, index, id, sampled);
  return (
    <section className="tk-detail" data-testid="token-detail" aria-label={`Token #${pos}`}>
      <div className="tk-detail-head">
        <strong data-testid="token-detail-position">#{pos}</strong>
        <span className="tk-chip tk-detail-text" data-testid="token-detail-visible">
          {visibleText(text)}
        </span>
        <button type="button" className="tx-link tk-detail-close" onClick={onClose} aria-label="Unpin the token (Escape)" title="Unpin (Escape)">
          ×
        </button>
      </div>
      <dl className="tk-detail-fields">
        <dt>token id</dt>
        <dd data-testid="token-detail-id">{id}</dd>
        <dt>text</dt>
        <dd>
          <code data-testid="token-detail-text">{escapedText(text)}</code>
        </dd>
        <dt>special</dt>
        <dd data-testid="token-detail-special">{special ? "yes" : "no"}</dd>
        <dt>message</dt>
        <dd data-testid="token-detail-message">
          {spanLabel(span)} · {span.kind} · token {index + 1} of {tokenCount(span.message)}
        </dd>
        <dt>trained</dt>
        <dd data-testid="token-detail-trained" className={trained.trained ? "tk-yes" : "tk-no"}>
          {trained.trained ? "yes" : "no"} ({trained.why})
        </dd>
        {sampling.kind !== "sampled" ? (
          <>
            <dt>log-probability</dt>
            <dd data-testid="token-detail-logprob">{sampling.why}</dd>
            {sampling.kind === "not sampled" && (
              <>
                <dt>alternatives</dt>
                <dd data-testid="token-detail-alternatives-missing">{sampling.alternatives}</dd>
              </>
            )}
          </>
        ) : (
          <>
            <dt>log-probability</dt>
            <dd data-testid="token-detail-logprob">
              {sampling.logprob === undefined ? "none recorded (the message has no generation_logprobs)" : formatLogprob(sampling.logprob)}
            </dd>
            <dt>probability</dt>
            <dd data-testid="token-detail-probability">{sampling.logprob === undefined ? "—" : formatProbability(Math.exp(sampling.logprob))}</dd>
            <dt>entropy</dt>
            <dd data-testid="token-detail-entropy">
              {sampling.step ? `${sampling.step.entropy.toFixed(4)} nats (the step's raw distribution, before any sampling transform)` : "not recorded"}
            </dd>
            <dt>alternatives</dt>
            <dd>
              {sampling.step ? (
                <Alternatives step={sampling.step} chosenRank={sampling.chosenRank} tokenizer={tokenizer} />
              ) : (
                <span data-testid="token-detail-alternatives-missing">{sampling.missing}</span>
              )}
            </dd>
          </>
        )}
      </dl>
    </section>
  );
}

function Alternatives(props: {
  step: NonNullable<Extract<ReturnType<typeof samplingDetail>, { kind: "sampled" }>["step"]>;
  chosenRank: number | null;
  tokenizer: TokenTexts;
}) {
  const { step, chosenRank, tokenizer } = props;
  return (
    <>
      <table className="tk-alternatives" data-testid="token-alternatives">
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">text</th>
            <th scope="col">id</th>
            <th scope="col">logprob</th>
            <th scope="col">p</th>
          </tr>
        </thead>
        <tbody>
          {step.top.map((t, rank) => (
            <tr key={t.tokenId} className={rank === chosenRank ? "tk-chosen" : undefined} data-testid="token-alternative" data-chosen={rank === chosenRank || undefined}>
              <td>{rank + 1}</td>
              <td>
                <span className={`tk-chip generated${tokenizer.isSpecial(t.tokenId) ? " special" : ""}`} data-testid="token-alternative-text" title={escapedText(t.text)}>
                  {visibleText(t.text)}
                </span>
                {rank === chosenRank && <span className="tk-chosen-mark"> chosen</span>}
              </td>
              <td>{t.tokenId}</td>
              <td>{formatLogprob(t.logprob)}</td>
              <td>{formatProbability(Math.exp(t.logprob))}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {chosenRank === null && (
        <p className="tk-detail-note" data-testid="token-chosen-outside">
          The chosen token is not among these {step.top.length}: it was sampled from further down the distribution.
        </p>
      )}
    </>
  );
}
