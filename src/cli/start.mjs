// `npm start`: installs what is missing, builds the lab, and serves it on http://localhost:4173/.
import { ensureDependencies, mustRun } from "./setup.mjs";

ensureDependencies();
mustRun("npm", ["run", "build"]);
console.log("\nRollout Lab: http://localhost:4173/\n");
mustRun("npx", ["vite", "preview", "--port", process.env.PORT || "4173", "--strictPort", "--host", "127.0.0.1"]);
