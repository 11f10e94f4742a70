import { useEffect } from "react";
import { isLive } from "./session/run-session.js";
import { session, startRun, useLab } from "./store.js";

/**
 * Keys, when no text field has the focus: ↑/↓ or k/j move between samples, ←/→ or h/l between turns,
 * r runs, p pauses or resumes, s steps one turn.
 */
export function useKeyboardNavigation(): void {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const target = e.target as HTMLElement | null;
      if (target && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName))) return;
      if (e.metaKey || e.ctrlKey || e.altKey) return;
      const moves: Record<string, [number, number]> = {
        ArrowDown: [1, 0], j: [1, 0], ArrowUp: [-1, 0], k: [-1, 0], ArrowRight: [0, 1], l: [0, 1], ArrowLeft: [0, -1], h: [0, -1],
      };
      const move = moves[e.key];
      if (move) {
        e.preventDefault();
        useLab.getState().selection.moveSelection(move[0], move[1]);
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
