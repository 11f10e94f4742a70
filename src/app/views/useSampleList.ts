import { useVirtualizer } from "@tanstack/react-virtual";
import { useEffect, useRef } from "react";

/**
 * A virtualised list with one fixed-height row per sample (the batch overview, the timeline): only the rows in
 * view are rendered, and the selected sample is scrolled into view when the selection moves.
 */
export function useSampleList(count: number, rowHeight: number, viewportHeight: number, overscan: number, selected: number) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => rowHeight,
    overscan,
    initialRect: { width: 800, height: viewportHeight },
    useFlushSync: false,
  });
  // The selection is brought into view once each time it moves (or first exists), not again when the box is resized
  // (a notice above the panes, a dragged splitter): the user may have scrolled away from it on purpose.
  const revealed = useRef<number | null>(null);
  useEffect(() => {
    // A list emptied (a new run about to fill it) shows its selection again once there is one.
    if (count === 0) revealed.current = null;
    if (selected < 0 || selected >= count) return;
    if (revealed.current === selected) return;
    revealed.current = selected;
    // Already in view, by what the list knows without reading the layout: leave it. `scrollToIndex` would read the
    // box's scroll height (a layout of the page in the middle of React's commit) and write the scroll position, at
    // every change of the sample count too (a run's first events).
    const start = selected * rowHeight;
    const top = virtualizer.scrollOffset ?? 0;
    const height = virtualizer.scrollRect?.height ?? viewportHeight;
    if (start >= top && start + rowHeight <= top + height) return;
    virtualizer.scrollToIndex(selected, { align: "auto" });
  }, [selected, count, virtualizer, rowHeight, viewportHeight]);
  return { scrollRef, virtualizer };
}
