import { useVirtualizer } from "@tanstack/react-virtual";
import { useCallback, useEffect, useRef } from "react";

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
  useEffect(() => {
    if (selected >= 0 && selected < count) virtualizer.scrollToIndex(selected, { align: "auto" });
  }, [selected, count, virtualizer]);
  return { scrollRef, virtualizer };
}

/** A callback that never changes identity but always calls the latest function (rows stay memoised). */
export function useStableCallback<A extends unknown[]>(fn: (...args: A) => void): (...args: A) => void {
  const ref = useRef(fn);
  ref.current = fn;
  return useCallback((...args: A) => ref.current(...args), []);
}
