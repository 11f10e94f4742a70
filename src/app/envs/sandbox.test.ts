/**
 * The sandboxed host's start, with the frame stood in for (the real frame, its relay and its opaque origin are
 * driven in e2e/user-environments.spec.ts): what it does when the host's code cannot be read, whenever that is found.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { startSandboxedWorker } from "./sandbox.js";

class FakeFrame {
  static made: FakeFrame[] = [];
  hidden = false;
  tabIndex = 0;
  srcdoc = "";
  contentWindow = { postMessage: vi.fn() };
  removed = false;
  private onLoad: (() => void) | null = null;
  setAttribute() {}
  addEventListener(type: string, listener: () => void) {
    if (type === "load") this.onLoad = listener;
  }
  remove() {
    this.removed = true;
  }
  load() {
    this.onLoad?.();
  }
}

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

beforeEach(() => {
  FakeFrame.made = [];
  unhandled.length = 0;
  process.on("unhandledRejection", onUnhandled);
  vi.stubGlobal("document", {
    createElement: () => {
      const frame = new FakeFrame();
      FakeFrame.made.push(frame);
      return frame;
    },
    documentElement: { append() {} },
  });
  vi.stubGlobal("addEventListener", () => {});
  vi.stubGlobal("removeEventListener", () => {});
});
afterEach(() => {
  process.off("unhandledRejection", onUnhandled);
  vi.unstubAllGlobals();
});

/** Long enough for Node to report a rejection nobody handled (it checks after the microtasks run out). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

describe("startSandboxedWorker", () => {
  it("a code read that fails before the frame has loaded is the host's failure, once the frame loads, never an unhandled rejection", async () => {
    const host = startSandboxedWorker(Promise.reject(new Error("HTTP 404 for /assets/env-host-worker.js")));
    const errors: string[] = [];
    host.onerror = (e) => errors.push(e.message);
    await settle();
    expect(unhandled).toEqual([]);
    FakeFrame.made[0]!.load();
    await settle();
    expect(errors).toEqual(["the environment host's code could not be read: HTTP 404 for /assets/env-host-worker.js"]);
    expect(FakeFrame.made[0]!.contentWindow.postMessage).not.toHaveBeenCalled();
  });

  it("ended before its frame loaded: the failed read is dropped quietly", async () => {
    const host = startSandboxedWorker(Promise.reject(new Error("gone")));
    const errors: string[] = [];
    host.onerror = (e) => errors.push(e.message);
    host.terminate();
    // (A removed frame never loads; were its load still to fire, nothing would be reported either.)
    FakeFrame.made[0]!.load();
    await settle();
    expect(FakeFrame.made[0]!.removed).toBe(true);
    expect(unhandled).toEqual([]);
    expect(errors).toEqual([]);
  });

  it("hands the code and the page's port to the frame once it loads", async () => {
    startSandboxedWorker(Promise.resolve("/* host */"));
    FakeFrame.made[0]!.load();
    await settle();
    const [message, target, transfer] = FakeFrame.made[0]!.contentWindow.postMessage.mock.calls[0]!;
    expect(message).toMatchObject({ code: "/* host */" });
    expect(target).toBe("*");
    expect(transfer).toEqual([(message as { port: unknown }).port]);
  });
});
