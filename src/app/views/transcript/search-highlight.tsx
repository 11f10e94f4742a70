/**
 * The run search's matches marked in the transcript (../SearchBox.tsx lists them): the search's pattern is given to
 * the transcript through a context, and each piece of message text it draws is split around the matches into text
 * and <mark> children. A match across a marker's boundary is not marked (the pieces are drawn apart).
 */

import { createContext, useContext } from "react";
import { matchRanges, type SearchPattern } from "../../run/text-search.js";

export const SearchHighlight = createContext<SearchPattern | null>(null);

/** `text` with the run search's matches in <mark>s (as text children only). */
export function Highlighted({ text }: { text: string }) {
  const pattern = useContext(SearchHighlight);
  if (pattern === null || text === "") return <>{text}</>;
  const ranges = matchRanges(text, pattern);
  if (ranges.length === 0) return <>{text}</>;
  const parts: React.ReactNode[] = [];
  let at = 0;
  for (const [start, end] of ranges) {
    if (start > at) parts.push(text.slice(at, start));
    parts.push(
      <mark key={start} className="tx-search-hit" data-testid="transcript-search-hit">
        {text.slice(start, end)}
      </mark>,
    );
    at = end;
  }
  if (at < text.length) parts.push(text.slice(at));
  return <>{parts}</>;
}
