// `npm test`: every test. Installs what a fresh machine lacks, then: typecheck, unit and conformance tests
// (vitest), the conformance runner, the sample regression suite against its goldens, the static build, and the
// end-to-end tests in headless Chromium.
import { ensureChromium, ensureDependencies, mustRun } from "./setup.mjs";

ensureDependencies();
const chromium = ensureChromium();
mustRun("npm", ["run", "typecheck"]);
mustRun("npx", ["vitest", "run"]);
mustRun("npm", ["run", "conformance"]);
mustRun("npm", ["run", "regress", "--", "regress/sample-suite.json"]);
mustRun("npm", ["run", "build"]);
mustRun("npx", ["playwright", "test"], { env: { ...process.env, CHROMIUM_PATH: chromium } });
