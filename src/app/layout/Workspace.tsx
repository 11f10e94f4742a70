/**
 * The page's layout. On a wide enough screen the page itself does not scroll: the set-up column (collapsible,
 * resizable), then the views split into the master (the batch and what summarises it) and the detail (the selected
 * sample), side by side or one above the other, each pane scrolling on its own. On a narrow screen everything is one
 * column and the page scrolls, as a document.
 */

import { useLayoutEffect, useRef, useState, useSyncExternalStore, type CSSProperties, type ReactNode } from "react";
import { DEFAULT_LAYOUT, SETUP_WIDTH, SPLIT } from "../state/layout-slice.js";
import { useLab } from "../store.js";
import { DetailScroll, MasterHeight } from "./pane-context.js";
import { Splitter } from "./Splitter.js";
import "./layout.css";

/** Below this the page is one scrolling column (matches `@media (max-width: 899px)` in layout.css). */
const PANES_QUERY = "(min-width: 900px)";
/** The views side by side from this width on (the batch's columns need about half of it). */
const SIDE_BY_SIDE_FROM = 1040;

function subscribeMedia(query: string) {
  return (onChange: () => void) => {
    const list = window.matchMedia(query);
    list.addEventListener("change", onChange);
    return () => list.removeEventListener("change", onChange);
  };
}

/** Whether the panes scroll on their own (a wide enough window), following the window's size. */
export function usePanes(): boolean {
  return useSyncExternalStore(subscribeMedia(PANES_QUERY), () => window.matchMedia(PANES_QUERY).matches, () => true);
}

/** An element's content-box size, kept up to date. */
function useSize(el: HTMLElement | null): { width: number; height: number } {
  const [size, setSize] = useState({ width: 0, height: 0 });
  useLayoutEffect(() => {
    if (!el) return;
    const read = () => setSize((s) => (s.width === el.clientWidth && s.height === el.clientHeight ? s : { width: el.clientWidth, height: el.clientHeight }));
    read();
    const observer = new ResizeObserver(read);
    observer.observe(el);
    return () => observer.disconnect();
  }, [el]);
  return size;
}

/** The set-up column beside the views: collapsed to a rail by its button, resized by the bar between them. */
export function LabColumns({ setup, views }: { setup: ReactNode; views: ReactNode }) {
  const open = useLab((s) => s.layout.setupOpen);
  const width = useLab((s) => s.layout.setupWidth);
  const { toggleSetup, setSetupWidth } = useLab.getState().layout;
  const columns = useRef<HTMLDivElement>(null);
  return (
    <div ref={columns} className={open ? "columns" : "columns setup-closed"} style={{ "--setup-width": `${width}px` } as CSSProperties}>
      <aside className="setup" id="setup-column" aria-label="Set-up" hidden={!open}>
        <div className="setup-head">
          <h2>Set-up</h2>
          <button type="button" className="secondary small" aria-expanded={true} aria-controls="setup-column" onClick={toggleSetup} title="Hide the set-up column (the views get its room)">
            ◂ Hide
          </button>
        </div>
        {setup}
      </aside>
      {!open && (
        <div className="setup-rail">
          <button type="button" className="secondary small" aria-expanded={false} aria-controls="setup-column" onClick={toggleSetup} title="Show the set-up column">
            Set-up ▸
          </button>
        </div>
      )}
      {open && (
        <Splitter
          axis="x"
          label="Set-up column width"
          controls="setup-column"
          value={width}
          min={SETUP_WIDTH.min}
          max={SETUP_WIDTH.max}
          valueText={`${width} pixels`}
          onDrag={(x) => setSetupWidth(x - (columns.current?.getBoundingClientRect().left ?? 0))}
          onStep={(d, big) => setSetupWidth(width + d * (big ? 80 : 20))}
          onReset={() => setSetupWidth(DEFAULT_LAYOUT.setupWidth)}
        />
      )}
      {views}
    </div>
  );
}

/**
 * The master (the batch) and the detail (the selected sample): side by side where there is room, else stacked, split
 * by a bar; each pane scrolls on its own, so moving through the batch never scrolls it out of view.
 */
export function MasterDetail({ master, detail }: { master: ReactNode; detail: ReactNode }) {
  const panes = usePanes();
  const [box, setBox] = useState<HTMLDivElement | null>(null);
  const [masterPane, setMasterPane] = useState<HTMLDivElement | null>(null);
  const [detailPane, setDetailPane] = useState<HTMLDivElement | null>(null);
  const split = useLab((s) => s.layout.split);
  const { setSplit } = useLab.getState().layout;
  const size = useSize(box);
  const masterSize = useSize(masterPane);
  const side = size.width >= SIDE_BY_SIDE_FROM;
  const axis = side ? "x" : "y";
  if (!panes) {
    return (
      <div className="md md-flow">
        <div className="md-master">{master}</div>
        <div className="md-detail">{detail}</div>
      </div>
    );
  }
  const percent = Math.round(split * 100);
  const drag = (position: number) => {
    if (!box) return;
    const rect = box.getBoundingClientRect();
    setSplit(side ? (position - rect.left) / rect.width : (position - rect.top) / rect.height);
  };
  return (
    <div ref={setBox} className={`md md-panes md-${side ? "side" : "stacked"}`} style={{ "--md-split": `${split * 100}%` } as CSSProperties} data-layout={side ? "side-by-side" : "stacked"}>
      <div ref={setMasterPane} className="md-master pane-scroll" id="master-pane" data-testid="master-pane" tabIndex={-1}>
        <MasterHeight.Provider value={masterSize.height || null}>{master}</MasterHeight.Provider>
      </div>
      <Splitter
        axis={axis}
        label={side ? "Batch and sample panes: width" : "Batch and sample panes: height"}
        controls="master-pane"
        value={percent}
        min={SPLIT.min * 100}
        max={SPLIT.max * 100}
        valueText={`batch ${percent}%`}
        onDrag={drag}
        onStep={(d, big) => setSplit(split + d * (big ? 0.1 : 0.03))}
        onReset={() => setSplit(DEFAULT_LAYOUT.split)}
      />
      <div ref={setDetailPane} className="md-detail pane-scroll" id="detail-pane" data-testid="detail-pane" tabIndex={-1}>
        <DetailScroll.Provider value={detailPane}>{detail}</DetailScroll.Provider>
      </div>
    </div>
  );
}
