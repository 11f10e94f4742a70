import { useEffect } from "react";
import { nextFailure, sampleOutcome } from "./run/outcome.js";
import { isLive } from "./session/run-session.js";
import type { Tab } from "./state/view-slice.js";
import { session, startRun, useLab } from "./store.js";

const TABS: readonly Tab[] = ["transcript", "tokens", "environment", "compare"];

/**
 * Keys, when no text field has the focus: ↑/↓ or k/j move between samples, ←/→ or h/l between turns, n / N to
 * the next / previous sample that failed, errored or was cut off, 1–4 open the Transcript, Tokens, Environment and
 * Compare tabs, r runs, p pauses or resumes, s steps one turn.
 */
/**
 * Where the batch scrolls in a pane of its own (../layout/Workspace.tsx), keeps its rows' box in view when the keys
 * move the selection (the box keeps the selected row in view itself). Where the page scrolls, nothing moves: the
 * transcript the user reads stays where it is.
 */
function revealBatch(): void {
  requestAnimationFrame(() => {
    const box = document.querySelector<HTMLElement>('#master-pane [data-testid="batch-overview"] [role="grid"]');
    box?.scrollIntoView({ block: "nearest" });
  });
}

export function useKeyboardNavigation(): void {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const target = e.target as HTMLElement | null;
      if (target && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName))) return;
      // Controls with keys of their own (a splitter, the token chips, a picker) keep them.
      if (target?.closest?.("[data-own-keys]")) return;
      if (e.metaKey || e.ctrlKey || e.altKey) return;
      const moves: Record<string, [number, number]> = {
        ArrowDown: [1, 0], j: [1, 0], ArrowUp: [-1, 0], k: [-1, 0], ArrowRight: [0, 1], l: [0, 1], ArrowLeft: [0, -1], h: [0, -1],
      };
      const move = moves[e.key];
      const tab = TABS[Number(e.key) - 1];
      if (tab && /^[1-4]$/.test(e.key)) useLab.getState().view.setTab(tab);
      else if (e.key === "n" || e.key === "N") {
        const samples = session.state.model?.samples ?? [];
        const { selected, select, shownRows } = useLab.getState().selection;
        // Under a filter (only drifting samples) the next failure is among the rows shown.
        const next = nextFailure(samples.map(sampleOutcome), selected, e.key === "N", shownRows);
        if (next !== null) {
          select(next, null);
          revealBatch();
        }
      } else if (move) {
        e.preventDefault();
        useLab.getState().selection.moveSelection(move[0], move[1]);
        if (move[0] !== 0) revealBatch();
      } else if (e.key === "r" && !isLive(session.state.status)) startRun();
      else if (e.key === "p") {
        if (session.state.status === "paused") session.resume();
        else session.pause();
      } else if (e.key === "s") session.step();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);
}
