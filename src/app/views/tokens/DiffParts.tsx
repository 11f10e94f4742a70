/** A text split into its unchanged and changed parts (./diff.ts), the changed ones marked; as text, never HTML. */

import type { TextPart } from "./diff.js";

export interface DiffPartsProps {
  parts: readonly TextPart[];
  /** Class of the mark on a changed part, and of the gap where only the other side has text. */
  markClass: string;
  gapClass: string;
  markTestId?: string;
}

export function DiffParts({ parts, markClass, gapClass, markTestId }: DiffPartsProps) {
  return (
    <>
      {parts.map((p, i) =>
        !p.changed ? (
          p.text
        ) : p.text === "" ? (
          <span key={i} className={gapClass} title="the other side has text here" />
        ) : (
          <mark key={i} className={markClass} {...(markTestId ? { "data-testid": markTestId } : {})}>
            {p.text}
          </mark>
        ),
      )}
    </>
  );
}
