/** Rollout Lab's core: runs in Node, a Worker or the page; imports nothing but itself. */

export * from "./types.js";
export * from "./batch.js";
export * from "./json-value.js";
export * from "./tokenizer/byte-level.js";
export * from "./python/numbers.js";
export * from "./python/repr.js";
export * from "./python/text.js";
export * from "./protocol/hermes.js";
export * from "./protocol/schema.js";
export * from "./protocol/registry.js";
export * from "./protocol/structured.js";
export * from "./protocol/chat-template.js";
export * from "./assessment/violations.js";
export * from "./assessment/invalid-action.js";
export * from "./assessment/penalty.js";
export * from "./rollout/events.js";
export * from "./rollout/control.js";
export * from "./errors.js";
export * from "./rollout/options.js";
export * from "./rollout/generate.js";
export { ContextRows } from "./rollout/context-rows.js";
export * from "./rollout/rewards.js";
export * from "./rollout/turn.js";
export * from "./rollout/sync.js";
export * from "./rollout/async.js";
export * from "./rollout/stream.js";
export * from "./random/rng.js";
