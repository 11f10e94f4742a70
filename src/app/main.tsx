import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App.js";
import { ErrorBoundary } from "./ErrorBoundary.js";
// This checkout's environments/*.js load at start (and hot-reload under npm run dev).
import "./envs/checkout.js";
// The tests' fault hook, only under ?faults=1.
import "./faults-debug.js";
import "./styles.css";

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    {/* The last resort: the page itself catches what it can show (links, files, saved runs, the views' own boundary). */}
    <ErrorBoundary
      where="The lab"
      actions={() => (
        <button
          className="secondary"
          onClick={() => {
            // Without the link or query that may have brought the fault; saved runs and checkpoints stay.
            location.replace(location.pathname);
          }}
        >
          Reload the lab without its link
        </button>
      )}
    >
      <App />
    </ErrorBoundary>
  </StrictMode>,
);
