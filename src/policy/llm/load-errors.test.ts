/** Load failures name the model, the file and the reason, whatever transformers.js or onnxruntime said. */

import { describe, expect, it } from "vitest";
import { describeLoadError, jsonProblem, resolveModelSource } from "./model-source.js";

const hub = resolveModelSource("org/model");

describe("describeLoadError", () => {
  it("a JSON file that does not parse is named (transformers.js's own message names none)", () => {
    const bad = jsonProblem("config.json", '{"a": 1,, oops');
    expect(bad?.file).toBe("config.json");
    const error = new SyntaxError("Expected double-quoted property name in JSON at position 8 (line 1 column 9)");
    expect(describeLoadError(hub, error, { badJson: [bad!] }).message).toBe(`could not load model 'org/model' (file config.json): not valid JSON: ${bad!.reason}`);
    expect(jsonProblem("tokenizer.json", "{}")).toBeNull();
  });

  it("a session onnxruntime cannot create names the dtype's ONNX file", () => {
    const error = new Error("Can't create a session. ERROR_CODE: 7, ERROR_MESSAGE: Failed to load model because protobuf parsing failed.");
    expect(describeLoadError(hub, error).message).toBe(
      "could not load model 'org/model' (file onnx/model.onnx): onnxruntime cannot load it (a truncated or corrupt file?): Can't create a session. ERROR_CODE: 7, ERROR_MESSAGE: Failed to load model because protobuf parsing failed.",
    );
    expect(describeLoadError(hub, error, { dtype: "q4" }).message).toContain("(file onnx/model_q4.onnx)");
  });

  it("an unknown model type names config.json", () => {
    expect(describeLoadError(hub, new Error("Unsupported model type: nonsense_model")).message).toBe(
      "could not load model 'org/model' (file config.json): Unsupported model type: nonsense_model (its model_type is not one transformers.js can load as a causal LM)",
    );
  });

  it("a file the message names is kept; an already described error is passed on; anything else keeps its words", () => {
    expect(describeLoadError(hub, new Error("404 for tokenizer_config.json")).message).toBe("could not load model 'org/model' (file tokenizer_config.json): 404 for tokenizer_config.json");
    const described = new Error("could not load model 'org/model' (file x.json): y");
    expect(describeLoadError(hub, described)).toBe(described);
    expect(describeLoadError(hub, "out of memory").message).toBe("could not load model 'org/model': out of memory");
  });
});
