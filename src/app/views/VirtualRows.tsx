/**
 * The scroll box of a virtualised list with one fixed-height row per sample (the batch overview, the timeline): as
 * tall as its rows up to `viewportHeight`, only the rows in view rendered (./useSampleList.ts), the selected sample
 * scrolled into view when the selection moves.
 */

import { Fragment, useCallback, type FocusEvent, type ReactNode, type RefObject } from "react";
import { useSampleList } from "./useSampleList.js";

/** The rows: how many, how tall each, the box's most height, how many to render beyond its edges, the selected one. */
export interface RowList {
  count: number;
  rowHeight: number;
  viewportHeight: number;
  overscan: number;
  selected: number;
}

export interface VirtualRowsProps {
  list: RowList;
  className: string;
  role: "grid" | "listbox";
  "aria-label": string;
  "aria-rowcount"?: number;
  /** In the box, before the rows (a word while there are none). */
  before?: ReactNode;
  /** In the rows' box, under the rows (the timeline's grid lines). */
  underlay?: ReactNode;
  /** Row `index`, placed at `top` pixels from the first row's. */
  row(index: number, top: number): ReactNode;
  /** The scroll box itself, for a list that moves the focus among its rows. */
  boxRef?: RefObject<HTMLDivElement | null>;
  tabIndex?: number;
  onFocus?(e: FocusEvent<HTMLDivElement>): void;
  onBlur?(e: FocusEvent<HTMLDivElement>): void;
}

export function VirtualRows({ list, className, role, before, underlay, row, boxRef, ...rest }: VirtualRowsProps) {
  const { count, rowHeight, viewportHeight, overscan, selected } = list;
  const { scrollRef, virtualizer } = useSampleList(count, rowHeight, viewportHeight, overscan, selected);
  const setBox = useCallback(
    (el: HTMLDivElement | null) => {
      scrollRef.current = el;
      if (boxRef) boxRef.current = el;
    },
    [scrollRef, boxRef],
  );
  return (
    <div ref={setBox} className={className} style={{ height: Math.min(viewportHeight, Math.max(rowHeight, count * rowHeight) + 2) }} role={role} {...rest}>
      {before}
      <div style={{ height: virtualizer.getTotalSize(), position: "relative" }}>
        {underlay}
        {virtualizer.getVirtualItems().map((item) => (
          <Fragment key={item.key}>{row(item.index, item.start)}</Fragment>
        ))}
      </div>
    </div>
  );
}
