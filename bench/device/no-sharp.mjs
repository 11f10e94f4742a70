// Stands in for sharp (transformers.js's image library, native) in bench/device/pack.sh's bundles, which read no
// images. transformers.js refuses to load without an image library, so this is one that fails when used.
export default function sharp() {
  throw new Error("the device bundle has no image library (bench/device/no-sharp.mjs)");
}
