#!/usr/bin/env bash
# Packs what bench/device/model-rollout-webgpu.sh needs on a GPU machine that has no Node, no node_modules and no
# network (the workplace's `device` tool lends such machines): into .devpack/ (git-ignored), to be named in `carry`.
#
#   .devpack/runtime.tar.xz   unpacked into .devpack/ there:
#     bench/node/model-rollout.mjs        bench/model-rollout.ts, bundled (esbuild, which tsx brings)
#     bench/node/model-rollout-node.mjs   bench/model-rollout-node.ts, bundled; three folders down, as
#                                         src/policy/llm/node.ts is, so that the built-in models' root resolves to
#                                         the repository's public/models
#     bin/node, node_modules/             Node itself and what the bundles load at run time: onnxruntime-node
#                                         (transformers.js loads the model on the CPU first), onnxruntime-web's
#                                         WebGPU build and its WebAssembly, Dawn's Node binding (webgpu)
#   .devpack/libvulkan1.deb   the Vulkan loader, for a machine without one
# About 44 MiB: with the repository's tracked files under the tool's 64 MiB.
#
# Run from anywhere: bash bench/device/pack.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
out=.devpack
rm -rf "$out"
mkdir -p "$out/stage/bench/node" "$out/stage/bin" "$out/stage/node_modules"

# transformers.js imports sharp (images) at load; the benchmark reads no images, and sharp is a native package.
bundle() {
  node_modules/.bin/esbuild "$1" --bundle --platform=node --format=esm --target=node20 --log-level=warning \
    --outfile="$2" --external:onnxruntime-node --external:onnxruntime-web --external:webgpu --external:playwright-core \
    --alias:sharp=./bench/device/no-sharp.mjs \
    --banner:js="import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);"
}
bundle bench/model-rollout.ts "$out/stage/bench/node/model-rollout.mjs"
bundle bench/model-rollout-node.ts "$out/stage/bench/node/model-rollout-node.mjs"

cp "$(command -v node)" "$out/stage/bin/node"
copy() { mkdir -p "$out/stage/node_modules/$(dirname "$1")" && cp -r "node_modules/$1" "$out/stage/node_modules/$1"; }
for f in package.json dist bin/napi-v6/linux/x64; do copy "onnxruntime-node/$f"; done
for f in package.json dist; do copy "onnxruntime-common/$f"; done
for f in package.json dist/ort.webgpu.bundle.min.mjs dist/ort-wasm-simd-threaded.asyncify.mjs dist/ort-wasm-simd-threaded.asyncify.wasm; do
  copy "onnxruntime-web/$f"
done
for f in package.json index.js dist/linux-x64/dawn.node; do copy "webgpu/$f"; done
tar -C "$out/stage" -cf - bench bin node_modules | xz -T0 -9 >"$out/runtime.tar.xz"
rm -rf "$out/stage"

(cd "$out" && apt-get download -q libvulkan1 >/dev/null && mv libvulkan1_*.deb libvulkan1.deb)
du -sh "$out"/* | sed 's/^/packed: /'
