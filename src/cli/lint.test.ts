/** The lint keeps the README's layout table: an import a layer may not make fails it; one it may make passes. */

import { resolve } from "node:path";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const eslint = new ESLint({ cwd: root });

async function problems(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: resolve(root, file) });
  return result!.messages.map((m) => `${m.ruleId}: ${m.message}`);
}

describe("the layout table as import rules", () => {
  it("fails an import a layer may not make, naming what it may import", async () => {
    const core = await problems("src/core/new-module.ts", 'import { x } from "../envs/index.js";\nexport const y = x;\n');
    expect(core).toHaveLength(1);
    expect(core[0]).toMatch(/no-restricted-imports: .*src\/core\/ may import nothing of ours .*not src\/envs\//);
    const policy = await problems("src/policy/oracle/new-module.ts", 'import { x } from "../../scenario/run.js";\nexport const y = x;\n');
    expect(policy[0]).toMatch(/src\/policy\/ may import src\/core\/ only; not src\/scenario\//);
    const regress = await problems("src/regress/new-module.ts", 'import { x } from "../app/store.js";\nexport const y = x;\n');
    expect(regress[0]).toMatch(/src\/regress\/ may import .*not src\/app\//);
    const app = await problems("src/app/new-module.ts", 'import { x } from "../cli/regress.js";\nexport const y = x;\n');
    expect(app[0]).toMatch(/src\/app\/ may import .*not src\/cli\//);
  });

  it("keeps transformers.js under src/policy/llm/ and React in src/app/", async () => {
    const env = await problems("src/envs/new-module.ts", 'import { AutoTokenizer } from "@huggingface/transformers";\nexport const y = AutoTokenizer;\n');
    expect(env.some((p) => p.includes("transformers.js is imported only under src/policy/llm/"))).toBe(true);
    const oracle = await problems("src/policy/oracle/new-module.ts", 'import { AutoTokenizer } from "@huggingface/transformers";\nexport const y = AutoTokenizer;\n');
    expect(oracle.some((p) => p.includes("transformers.js is imported only under src/policy/llm/"))).toBe(true);
    expect(await problems("src/policy/llm/new-module.ts", 'import { AutoTokenizer } from "@huggingface/transformers";\nexport const y = AutoTokenizer;\n')).toEqual([]);
    const core = await problems("src/core/new-module.ts", 'import { useState } from "react";\nexport const y = useState;\n');
    expect(core.some((p) => p.includes("React and the page's UI libraries belong to src/app/"))).toBe(true);
  });

  it("passes the imports the table allows", async () => {
    expect(await problems("src/envs/new-module.ts", 'import { LabError } from "../core/index.js";\nexport const y = LabError;\n')).toEqual([]);
    expect(await problems("src/scenario/new-module.ts", 'import { x } from "../envs/index.js";\nimport { z } from "../policy/scripted.js";\nexport const y = [x, z];\n')).toEqual([]);
    expect(await problems("src/cli/new-module.ts", 'import { x } from "../app/store.js";\nexport const y = x;\n')).toEqual([]);
  });
});

describe("React's hooks rules in src/app/", () => {
  it("fails a ref read during render, state set in an effect, and a memo whose dependencies do not match what it reads", async () => {
    const refInRender = await problems(
      "src/app/views/NewView.tsx",
      'import { useRef } from "react";\nexport function NewView({ f }: { f(): void }) {\n  const latest = useRef(f);\n  latest.current = f;\n  return <button onClick={() => latest.current()}>go</button>;\n}\n',
    );
    expect(refInRender.some((p) => p.startsWith("react-hooks/refs:"))).toBe(true);
    const stateInEffect = await problems(
      "src/app/views/NewView.tsx",
      'import { useEffect, useState } from "react";\nexport function NewView({ value }: { value: number }) {\n  const [shown, setShown] = useState(0);\n  useEffect(() => {\n    setShown(value);\n  }, [value]);\n  return <p>{shown}</p>;\n}\n',
    );
    expect(stateInEffect.some((p) => p.startsWith("react-hooks/set-state-in-effect:"))).toBe(true);
    const versionCounter = await problems(
      "src/app/views/NewView.tsx",
      'import { useMemo } from "react";\nexport function NewView({ samples, version }: { samples: number[]; version: number }) {\n  const total = useMemo(() => samples.reduce((a, b) => a + b, 0), [samples, version]);\n  return <p>{total}</p>;\n}\n',
    );
    expect(versionCounter.some((p) => p.startsWith("react-hooks/exhaustive-deps:"))).toBe(true);
  });

  it("passes a view that reads its run through a snapshot", async () => {
    expect(
      await problems(
        "src/app/views/NewView.tsx",
        'import { useMemo } from "react";\nimport type { RunModel } from "../run/run-model.js";\nimport { useRun } from "../session/hooks.js";\nexport function NewView({ model }: { model: RunModel }) {\n  const run = useRun(model);\n  const total = useMemo(() => run.model.samples.reduce((a, s) => a + s.totalReward, 0), [run]);\n  return <p>{total}</p>;\n}\n',
      ),
    ).toEqual([]);
  });
});
