import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App.js";
// This checkout's environments/*.js load at start (and hot-reload under npm run dev).
import "./envs/checkout.js";
import "./styles.css";

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
