import { useEffect, useRef, useState } from "react";

/**
 * `value`, changing at most once per `ms` (the latest value arrives at the end of the wait): for views that redo
 * work over the whole run on every change (the metrics), so a live run's frames stay short. `ms` 0 (or less)
 * passes every change through at once, in the same render.
 */
export function useThrottledValue<T>(value: T, ms: number): T {
  const [shown, setShown] = useState(value);
  const last = useRef(0);
  useEffect(() => {
    // Not throttled: the value is returned as it is (below); `shown` is not followed (no render for nothing).
    if (ms <= 0 || Object.is(value, shown)) return;
    const wait = last.current + ms - performance.now();
    if (wait <= 0) {
      last.current = performance.now();
      setShown(value);
      return;
    }
    const timer = setTimeout(() => {
      last.current = performance.now();
      setShown(value);
    }, wait);
    return () => clearTimeout(timer);
  }, [value, shown, ms]);
  // With no throttling, the value is shown in the same render (no extra render a frame late).
  return ms <= 0 ? value : shown;
}
