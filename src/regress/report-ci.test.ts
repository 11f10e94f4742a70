import { XMLParser, XMLValidator } from "fast-xml-parser";
import { describe, expect, it } from "vitest";
import { compareScenario, skippedScenario, toJsonl, type ScenarioComparison } from "./compare.js";
import { escapeXml, markdownCell, renderJunit, renderMarkdownSummary } from "./report-ci.js";
import { REPORT_FORMAT, type RegressReport } from "./report-json.js";

const hostile = `<script>alert("x")</script> & | \`code\` **bold** \u0001\u0000 \ud800 ]]>`;

function sample(content: string, logprob = -0.5) {
  return { idx: 4, message_log: [{ role: "user", content: "p" }, { role: "assistant", content, token_ids: [1], generation_logprobs: [logprob] }] };
}

function report(comparisons: ScenarioComparison[], failed: RegressReport["failed"] = []): RegressReport {
  const names = [...comparisons.map((c) => c.name), ...failed.map((f) => f.name)];
  return {
    format: REPORT_FORMAT,
    suite: { file: "ci/suite.json", scenarios: names, tolerances: {} },
    backend: "wasm",
    defaultTolerance: 1e-3,
    repeat: 1,
    shard: null,
    comparisons,
    failed,
    seconds: 2.5,
  };
}

const ok = compareScenario("ok-one", { samplesJsonl: toJsonl([sample("a")]), metrics: {} }, { samplesJsonl: toJsonl([sample("a", -0.5001)]), metrics: {} });
const float = compareScenario("float-one", { samplesJsonl: toJsonl([sample("a", -0.55)]), metrics: {} }, { samplesJsonl: toJsonl([sample("a")]), metrics: {} });
const text = compareScenario("text-one", { samplesJsonl: toJsonl([sample(`${hostile} run`)]), metrics: {} }, { samplesJsonl: toJsonl([sample(`${hostile} gold`)]), metrics: {} });
const skipped = skippedScenario("skipped-one", "model policy with a local folder");
const all = report([ok, float, text, skipped], [{ name: "bad-one", kind: "input", detail: "damaged golden g/metrics.json: not valid JSON" }]);

const parse = (xml: string) => new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "", isArray: (name) => name === "testcase" }).parse(xml);

describe("JUnit XML (--junit)", () => {
  it("is well-formed XML with one testcase per scenario, named by it, with the counts", () => {
    const xml = renderJunit(all);
    expect(XMLValidator.validate(xml)).toBe(true);
    const suite = parse(xml).testsuites.testsuite;
    expect(suite).toMatchObject({ tests: "5", failures: "2", errors: "1", skipped: "1" });
    expect(suite.testcase.map((t: { name: string }) => t.name)).toEqual(["ok-one", "float-one", "text-one", "skipped-one", "bad-one"]);
  });

  it("gives a failure the first divergence as its message, and says what kind it is", () => {
    const cases = parse(renderJunit(all)).testsuites.testsuite.testcase;
    const byName = (n: string) => cases.find((t: { name: string }) => t.name === n);
    expect(byName("ok-one").failure).toBeUndefined();
    expect(byName("float-one").failure.message).toBe(
      "float beyond tolerance: sample idx 4, turn 0, message 1 (assistant), token 0, generation_logprobs[0]: golden -0.5, run -0.55 (|Δ| 0.05 > tolerance 0.001)",
    );
    expect(byName("float-one").failure.type).toBe("regressed");
    expect(byName("text-one").failure.message).toMatch(/^text differs: sample idx 4, turn 0, message 1 \(assistant\), content at char \d+$/);
    expect(byName("skipped-one").skipped.message).toBe("model policy with a local folder");
    expect(byName("bad-one").error).toMatchObject({ type: "bad input", message: "damaged golden g/metrics.json: not valid JSON" });
  });

  it("carries hostile model text as text: escaped, control characters and lone surrogates made visible", () => {
    const xml = renderJunit(report([text]));
    expect(XMLValidator.validate(xml)).toBe(true);
    expect(xml).not.toContain("<script>");
    const body: string = parse(xml).testsuites.testsuite.testcase[0].failure["#text"];
    expect(body).toContain("</script> & | `code`");
    expect(escapeXml("\u0001\ud800x")).toBe("\\u0001\\ud800x");
  });
});

describe("the Markdown step summary (--summary)", () => {
  it("tabulates every scenario with its verdict and first divergence", () => {
    const md = renderMarkdownSummary(all);
    expect(md).toContain("### Regression report: ci/suite.json, backend wasm");
    expect(md).toContain("**5 scenarios: 1 ok, 2 regressed, 1 skipped, 1 bad input** (2.5 s)");
    expect(md).toContain("| ok-one | ✅ ok | floats within 1.00e-4 of the golden (generation\\_logprobs) |");
    expect(md).toContain(
      "| float-one | ❌ regressed | float beyond tolerance: sample idx 4, turn 0, message 1 (assistant), token 0, generation\\_logprobs\\[0\\]: golden -0.5, run -0.55 (\\|Δ\\| 0.05 &gt; tolerance 0.001) |",
    );
    expect(md).toContain("| bad-one | ❌ bad input | damaged golden g/metrics.json: not valid JSON |");
  });

  it("cannot be broken out of its table or into HTML by hostile text", () => {
    const cell = markdownCell(hostile);
    expect(cell).not.toMatch(/<|(?<!\\)\||(?<!\\)`/);
    expect(cell).toContain("&lt;script&gt;");
    const rows = renderMarkdownSummary(report([text])).split("\n").filter((l) => l.startsWith("| text-one"));
    expect(rows).toHaveLength(1);
  });
});
