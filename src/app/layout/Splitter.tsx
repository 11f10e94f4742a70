/**
 * A bar between two panes that resizes them: dragged with the pointer, or focused and moved with the arrow keys
 * (Shift for bigger steps). An ARIA window splitter (role "separator" with a value), so assistive technology can
 * read and move it; double-click puts it back where it started.
 */

import { useRef, type KeyboardEvent, type PointerEvent } from "react";

export interface SplitterProps {
  /** "x": a vertical bar moved left and right; "y": a horizontal bar moved up and down. */
  axis: "x" | "y";
  label: string;
  /** What the bar sets, for assistive technology (a percentage or pixels), with its range. */
  value: number;
  min: number;
  max: number;
  valueText: string;
  /** The pointer moved to `position` (clientX or clientY) while dragging. */
  onDrag(position: number): void;
  /** An arrow key: one step smaller (-1) or bigger (+1); `big` with Shift. */
  onStep(direction: -1 | 1, big: boolean): void;
  onReset(): void;
  /** The pane it resizes. */
  controls: string;
}

export function Splitter(props: SplitterProps) {
  const { axis, label, value, min, max, valueText, onDrag, onStep, onReset, controls } = props;
  const dragging = useRef(false);
  const onPointerDown = (e: PointerEvent<HTMLDivElement>) => {
    if (e.button !== 0) return;
    dragging.current = true;
    e.currentTarget.setPointerCapture(e.pointerId);
    e.preventDefault();
  };
  const onPointerMove = (e: PointerEvent<HTMLDivElement>) => {
    if (dragging.current) onDrag(axis === "x" ? e.clientX : e.clientY);
  };
  const stop = (e: PointerEvent<HTMLDivElement>) => {
    dragging.current = false;
    if (e.currentTarget.hasPointerCapture(e.pointerId)) e.currentTarget.releasePointerCapture(e.pointerId);
  };
  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    const [less, more] = axis === "x" ? ["ArrowLeft", "ArrowRight"] : ["ArrowUp", "ArrowDown"];
    if (e.key !== less && e.key !== more) return;
    // The bar's own keys: not also the page's (which move between samples and turns).
    e.preventDefault();
    e.stopPropagation();
    onStep(e.key === less ? -1 : 1, e.shiftKey);
  };
  return (
    <div
      className={`splitter splitter-${axis}`}
      role="separator"
      tabIndex={0}
      aria-label={label}
      aria-orientation={axis === "x" ? "vertical" : "horizontal"}
      aria-controls={controls}
      aria-valuenow={Math.round(value)}
      aria-valuemin={min}
      aria-valuemax={max}
      aria-valuetext={valueText}
      title={`${label}: drag, or focus and use the arrow keys; double-click to reset`}
      data-own-keys=""
      onPointerDown={onPointerDown}
      onPointerMove={onPointerMove}
      onPointerUp={stop}
      onPointerCancel={stop}
      onKeyDown={onKeyDown}
      onDoubleClick={onReset}
    />
  );
}
