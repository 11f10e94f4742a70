// `npm run test:faults`: the fault suite (docs/faults.md). The unit tests of the faults
// (src/faults/ through `npm run test:faults:node`; the device-loss guard, load errors, runs cut short), the static
// build, then the browser tests that
// inject each fault into the built lab: e2e/faults.spec.ts and e2e/page-faults.spec.ts (default project: the page's
// own keeping and sharing of runs — a full storage quota, a live run replaced, bad or far-reaching links, a link too
// long, data too deep to draw) and e2e/faults.webgpu.spec.ts (the "webgpu" project: a real device loss on
// Chromium's software adapter).
import { ensureChromium, ensureDependencies, mustRun } from "./setup.mjs";

ensureDependencies();
const chromium = ensureChromium();
mustRun("npm", ["run", "test:faults:node"]);
mustRun("npx", ["vitest", "run", "src/policy/llm/device-loss", "src/policy/llm/load-errors", "src/app/run/interrupted", "src/app/worker/client.test.ts", "src/scenario/result.test.ts", "src/app/run/idb.test.ts", "src/app/run/keeping.test.ts", "src/scenario/share-url.test.ts", "src/app/link.test.ts", "src/core/json-value.test.ts", "src/core/rollout/rewards.test.ts", "src/cli/rollout.test.ts", "src/scenario/utf8.test.ts", "src/regress/golden.test.ts", "src/regress/portable.test.ts"]);
mustRun("npm", ["run", "build"]);
mustRun("npx", ["playwright", "test", "e2e/faults.spec.ts", "e2e/page-faults.spec.ts", "e2e/faults.webgpu.spec.ts"], { env: { ...process.env, CHROMIUM_PATH: chromium } });
