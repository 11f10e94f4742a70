// A user environment module's thread (./module-threads.ts): its host is TypeScript, run through tsx's loaders for
// ES modules and CommonJS (as `tsx` gives the main thread: a module file outside a "type": "module" package is read
// as tsx reads it there); a loader registered in the main thread does not reach a worker thread.
import { register as registerCommonJs } from "tsx/cjs/api";
import { register } from "tsx/esm/api";

registerCommonJs();
register();
await import("./module-thread-host.ts");
