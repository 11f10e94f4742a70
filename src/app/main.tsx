import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App.js";
// This checkout's environments/*.js load at start (and hot-reload under npm run dev).
import "./envs/checkout.js";
// Runs under way are checkpointed, and runs a closed page interrupted are offered again (src/app/run/recovery.ts).
import "./run/recovery.js";
// The tests' fault hook, only under ?faults=1.
import "./faults-debug.js";
import "./styles.css";

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
