import { describe, expect, it } from "vitest";
import { viewOf } from "../EnvView.js";

describe("viewOf", () => {
  it("uses the environment's own view", () => {
    const view = viewOf("sliding_puzzle", {
      game_state: { size: 2, grid: [[1, 2], [0, 3]], solution: [[1, 2], [3, 0]], empty_pos: [1, 0], commands: {} },
      num_moves: 1,
      max_moves: 3,
    });
    expect(view).toMatchObject({ kind: "grid", size: 2, cells: [[1, 2], [null, 3]], caption: "Moves made: 1 of 3" });
  });

  it("falls back to the metadata as JSON text for an unknown environment", () => {
    expect(viewOf("nope", { a: "<b>" })).toEqual({ kind: "text", title: "Environment state (nope)", text: '{\n  "a": "<b>"\n}' });
    expect(viewOf(null, null)).toEqual({ kind: "text", title: "Environment state", text: "null" });
  });

  it("shows what the environment says of unusable metadata", () => {
    const view = viewOf("calculator", { problem: 5 } as never);
    expect(view).toMatchObject({ kind: "text" });
  });

  it("waits for a user environment's view, and shows the metadata when that view fails or is missing", async () => {
    const env = (view?: () => Promise<unknown>) =>
      ({ name: "mine", title: "Mine", ...(view ? { view } : {}) }) as never;
    const lookup = (definition: unknown) => (name: string) => (name === "mine" ? (definition as never) : undefined);
    const text = { kind: "text", title: "Mine", text: "drawn" };
    expect(await viewOf("mine", { a: 1 }, lookup(env(async () => text)))).toEqual(text);
    expect(await viewOf("mine", { a: 1 }, lookup(env(async () => Promise.reject(new Error("boom")))))).toEqual({
      kind: "text",
      title: "Mine",
      text: 'The view failed: boom\n\n{\n  "a": 1\n}',
    });
    expect(viewOf("mine", { a: 1 }, lookup(env()))).toEqual({ kind: "text", title: "Mine", text: '{\n  "a": 1\n}' });
  });
});
