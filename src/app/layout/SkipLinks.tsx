/**
 * The first stops of the Tab key: jumps to the batch (its current cell), the selected sample, the set-up. Hidden
 * until focused. Buttons, not `#anchors`: the page's address carries shared links and must not change.
 */

import { useLab } from "../store.js";

function focusFirst(selectors: string[]): void {
  for (const selector of selectors) {
    const el = document.querySelector<HTMLElement>(selector);
    if (el && !el.closest("[hidden]")) {
      el.focus();
      el.scrollIntoView({ block: "nearest" });
      return;
    }
  }
}

export function SkipLinks() {
  return (
    <nav className="skip-links" aria-label="Skip to">
      <button type="button" onClick={() => focusFirst(['[data-testid="batch-overview"] [tabindex="0"]', '[data-testid="batch-overview"] [role="grid"]', "#views"])}>
        Skip to the batch
      </button>
      <button type="button" onClick={() => focusFirst(['#detail-pane [role="tab"][aria-selected="true"]', "#views"])}>
        Skip to the sample
      </button>
      <button
        type="button"
        onClick={() => {
          if (!useLab.getState().layout.setupOpen) useLab.getState().layout.toggleSetup();
          // The column is drawn open on the next frame.
          requestAnimationFrame(() => focusFirst(["#setup-column select, #setup-column input"]));
        }}
      >
        Skip to the set-up
      </button>
    </nav>
  );
}
