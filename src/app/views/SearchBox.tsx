/**
 * Full-text search across the run (apart from the filter): lists the matching messages, the match marked, and
 * selects a hit's sample and turn. The search runs on a deferred copy of the text, so typing stays responsive.
 */

import { memo, useDeferredValue, useEffect, useMemo, useState } from "react";
import type { SampleView } from "../run/run-model.js";
import { hitSnippet, searchRun } from "../run/text-search.js";
import { plural } from "./transcript/parts.js";

const SHOWN_HITS = 200;

export interface SearchBoxProps {
  samples: readonly SampleView[];
  /** Changes whenever the run publishes (a live run's samples grow in place). */
  version: unknown;
  onSelect(sample: number, turn: number | null): void;
  /** The search as typed (debounced), for the transcript to mark its matches. */
  onSearch?: ((text: string) => void) | undefined;
}

export const SearchBox = memo(function SearchBox(props: SearchBoxProps) {
  const { samples, version, onSelect, onSearch } = props;
  const [text, setText] = useState("");
  const deferred = useDeferredValue(text);
  // eslint-disable-next-line react-hooks/exhaustive-deps -- `version` is what says the samples changed
  const result = useMemo(() => searchRun(samples, deferred, SHOWN_HITS), [samples, deferred, version]);
  useEffect(() => onSearch?.(deferred), [deferred, onSearch]);
  useEffect(() => () => onSearch?.(""), [onSearch]);
  return (
    <div className="ov-search" data-testid="run-search">
      <label>
        <span className="hint">search </span>
        <input type="search" data-testid="run-search-input" aria-label="Search every message of the run" placeholder='words or /regex/' value={text} onChange={(e) => setText(e.currentTarget.value)} />
      </label>
      {result.error ? (
        <span className="has-problems" role="alert"> {result.error}</span>
      ) : deferred.trim() ? (
        <span className="hint" data-testid="run-search-count" data-hits={result.total} data-samples={result.samples}>
          {" "}
          {plural(result.total, "hit")} in {plural(result.samples, "sample")}{result.total > result.hits.length ? ` (the first ${result.hits.length} listed)` : ""}
        </span>
      ) : null}
      {result.hits.length > 0 && (
        <ul className="ov-search-hits" aria-label="Search hits">
          {result.hits.map((hit) => {
            const content = samples[hit.sample]?.messages[hit.message]?.content ?? "";
            const snip = hitSnippet(content, hit);
            return (
              <li key={`${hit.sample}:${hit.message}`}>
                <button type="button" data-testid="run-search-hit" data-sample={hit.sample} onClick={() => onSelect(hit.sample, hit.turn)}>
                  <span className="hint">
                    sample #{hit.sample} · {hit.turn === null ? "prompt" : `turn ${hit.turn}`} · {hit.role}:{" "}
                  </span>
                  {snip.before}
                  <mark>{snip.match}</mark>
                  {snip.after}
                </button>
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
});
