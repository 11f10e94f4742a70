// `npm test`: every test. Installs what a fresh machine lacks, then: typecheck, lint (ESLint, zero warnings), unit and conformance tests
// (vitest), the Python bridge's own tests (unittest, where there is a python3), the conformance runner, the sample regression suite against its goldens, the static build, the sample
// suite again in the built app (--backend wasm), and the end-to-end tests in headless Chromium.
import { spawnSync } from "node:child_process";
import { ensureChromium, ensureDependencies, ensureTorchPython, mustRun } from "./setup.mjs";

ensureDependencies();
const chromium = ensureChromium();
mustRun("npm", ["run", "typecheck"]);
mustRun("npm", ["run", "lint"]);
mustRun("npx", ["vitest", "run"]);
// The Python environment bridge (python/): its unittest suite, with whatever python3 this machine has.
if (spawnSync("python3", ["--version"]).status === 0) mustRun("python3", ["-m", "unittest", "discover", "-s", "python/tests", "-t", "python"]);
else console.log("python3 is not on the PATH: the Python bridge's tests (python/tests) are skipped");
// The training pipeline (training/): its unittest suite where python3 has PyTorch (docs/training.md).
// Debian's python3-torch is for /usr/bin/python3, which may not be the python3 on the PATH; installed when missing.
const torchPython = ensureTorchPython();
if (torchPython) mustRun(torchPython, ["-m", "unittest", "discover", "-s", "training/tests", "-t", "."]);
else console.log("no python3 here can import torch: the training pipeline's tests (training/tests) are skipped");
mustRun("npm", ["run", "conformance"]);
mustRun("npm", ["run", "regress", "--", "regress/sample-suite.json"]);
mustRun("npm", ["run", "build"]);
// The same suite in the built app in headless Chromium (WASM), against the same goldens (measured 18–36 s).
mustRun("npm", ["run", "regress", "--", "regress/sample-suite.json", "--backend", "wasm", "--out", "regress/out/wasm"], { env: { ...process.env, CHROMIUM_PATH: chromium } });
mustRun("npx", ["playwright", "test"], { env: { ...process.env, CHROMIUM_PATH: chromium } });
