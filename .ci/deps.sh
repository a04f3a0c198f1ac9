#!/usr/bin/env bash
# Installs what zyx-tt's build and tests need on a fresh Debian machine.
# Idempotent: packages already present are not reinstalled.
# clang-15 builds the runtime's libFuzzer targets (make fuzz-test, build/fuzz);
# on Debian 12 its libFuzzer runtime (libclang_rt.fuzzer) comes with it, in
# libclang-common-15-dev. The runtime itself builds with g++. zsh and fish
# run the completion scripts in cmd/zyx-tt's tests. gdb replays the kernel
# debugging recipe of docs/emulator.md (cmd/zyx-tt's TestDebugRecipe).
set -euo pipefail

pkgs=(
  build-essential g++ cmake pkg-config git
  nlohmann-json3-dev
  clang-15
  libopenblas0 libopenblas-dev
  ocl-icd-libopencl1 ocl-icd-opencl-dev pocl-opencl-icd clinfo
  libvulkan1 mesa-vulkan-drivers vulkan-tools glslang-tools
  zsh fish
  gdb
)

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "deps: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "deps: all packages present"
fi

if ! command -v go >/dev/null 2>&1; then
  echo "deps: go is not on PATH; install Go 1.26 or newer" >&2
  exit 1
fi
