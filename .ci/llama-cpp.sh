#!/usr/bin/env bash
# Builds llama.cpp's `llama-server` and `ggml-rpc-server` (CPU backend, RPC on, no curl) from the source that the npm
# package node-llama-cpp@3.22.1 ships as llama/gitRelease.bundle, once, and caches the result outside the checkout by
# the bundle's commit id and the recipe: ${MACFLEET_CACHE:-$HOME/.cache/macfleet}/llama.cpp/<commit>-r<recipe>/bin.
# Prints that bin directory.
# A warm cache costs nothing; a cold build takes about 15 CPU-minutes on the 2-core CI machine.
# Used by .ci/run (before the tests), by the llama.cpp runtime tests and by `./macfleet demo --runtime llama.cpp`.
set -euo pipefail
version=3.22.1
# Bumped whenever the build recipe below changes, so a cache built the old way is not taken (2: RUNPATH $ORIGIN).
recipe=2
cache_root="${MACFLEET_CACHE:-$HOME/.cache/macfleet}/llama.cpp"
mkdir -p "$cache_root"
# The commit id is known only after unpacking the npm package; a small index maps the package version to it so a
# warm cache needs no npm at all.
index="$cache_root/node-llama-cpp-$version.commit"
if [[ -f "$index" ]]; then
    build="$(cat "$index")"
    if [[ "$build" == *-r$recipe && -x "$cache_root/$build/bin/llama-server" && -x "$cache_root/$build/bin/ggml-rpc-server" ]]; then
        echo "$cache_root/$build/bin"
        exit 0
    fi
fi
for tool in npm git cmake g++; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo ".ci/llama-cpp.sh: $tool is missing; install it (Debian: apt-get install nodejs npm git cmake g++)" >&2
        exit 2
    fi
done
work="$(mktemp -d "$cache_root/build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "node-llama-cpp@$version" >/dev/null \
    && tar xzf "node-llama-cpp-$version.tgz" package/llama/gitRelease.bundle)
commit="$(git bundle list-heads "$work/package/llama/gitRelease.bundle" | awk '$2 == "HEAD" { print $1 }')"
if [[ -z "$commit" ]]; then
    echo ".ci/llama-cpp.sh: the bundle in node-llama-cpp@$version names no HEAD commit" >&2
    exit 2
fi
build="$commit-r$recipe"
if [[ ! -x "$cache_root/$build/bin/llama-server" || ! -x "$cache_root/$build/bin/ggml-rpc-server" ]]; then
    echo ".ci/llama-cpp.sh: building llama.cpp $commit (about 15 CPU-minutes)" >&2
    git -c advice.detachedHead=false clone -q "$work/package/llama/gitRelease.bundle" "$work/llama.cpp"
    # RUNPATH $ORIGIN: the programs find their libraries next to them once moved out of the (deleted) build tree.
    cmake -S "$work/llama.cpp" -B "$work/build" -DGGML_RPC=ON -DLLAMA_CURL=OFF -DGGML_NATIVE=OFF \
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DCMAKE_BUILD_TYPE=Release '-DCMAKE_BUILD_RPATH=$ORIGIN' >"$work/cmake.log" 2>&1 \
        || { tail -n 30 "$work/cmake.log" >&2; exit 1; }
    cmake --build "$work/build" --target llama-server ggml-rpc-server -j "$(nproc)" >"$work/build.log" 2>&1 \
        || { tail -n 30 "$work/build.log" >&2; exit 1; }
    # Binaries and the libggml*/libllama shared libraries they load (RPATH $ORIGIN) move into place together.
    rm -rf "$cache_root/$build.partial"
    mkdir -p "$cache_root/$build.partial/bin"
    cp -a "$work/build/bin/." "$cache_root/$build.partial/bin/"
    find "$work/build" -name '*.so*' -exec cp -a {} "$cache_root/$build.partial/bin/" \;
    rm -rf "$cache_root/$build"
    mv "$cache_root/$build.partial" "$cache_root/$build"
fi
echo "$build" > "$index"
echo "$cache_root/$build/bin"
