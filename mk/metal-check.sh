#!/bin/sh
# metal-check: compiles the sources that -DZYX_TT_METAL=ON builds, syntax
# only, against one whole tt-metal tree (docs/runtime.md, "The metal check").
#
#   TT_METAL       a tt-metal tree at the pinned commit, with its UMD
#                  submodule checked out (required; unset: the check skips)
#   TT_METAL_DEPS  a directory holding the third-party source trees that
#                  tt-metal's CMake pins (fmt, enchantum, nlohmann json,
#                  spdlog, tt-logger), each found by its headers; default:
#                  the _deps of a build directory under TT_METAL
#   CXX            the compiler (default g++)
#
# Nothing is fetched: every input is a directory the caller names.
set -u

PIN_METAL=a8c5af0f5a26ef3d2b84fdfa998cab5dea376efd
PIN_UMD=453a1a1a91eaed19adb5508a946839685dacdb46
CXX=${CXX:-g++}
here=$(cd "$(dirname "$0")/.." && pwd)

if [ -z "${TT_METAL:-}" ]; then
  echo "metal-check: skipped: TT_METAL is unset (want a tt-metal tree at $PIN_METAL with its UMD submodule at $PIN_UMD; docs/runtime.md, \"The metal check\")"
  exit 0
fi

missing() {
  echo "metal-check: $*" >&2
  exit 2
}

[ -f "$TT_METAL/tt_metal/api/tt-metalium/host_api.hpp" ] ||
  missing "TT_METAL=$TT_METAL is not a tt-metal tree (no tt_metal/api/tt-metalium/host_api.hpp)"
umd="$TT_METAL/tt_metal/third_party/umd"
[ -f "$umd/device/api/umd/device/types/core_coordinates.hpp" ] ||
  missing "the UMD submodule is not checked out under $umd (want tenstorrent/tt-umd at $PIN_UMD)"

# The tree's commit: git's HEAD, or for a `git archive` export the hash
# tt-metal's cmake/version.cmake had substituted into it.
commit=
if git -C "$TT_METAL" rev-parse --git-dir >/dev/null 2>&1; then
  commit=$(git -C "$TT_METAL" rev-parse HEAD)
else
  commit=$(sed -n 's/.*set(fallbackHash "\([0-9a-f]\{7,\}\)").*/\1/p' "$TT_METAL/cmake/version.cmake" 2>/dev/null)
fi
if [ -z "$commit" ]; then
  echo "metal-check: warning: cannot tell the tree's commit; the pin is $PIN_METAL" >&2
else
  case "$PIN_METAL" in
    "$commit"*) echo "metal-check: tt-metal tree at $commit (the pinned commit)" ;;
    *) echo "metal-check: warning: the tree's commit is $commit, not the pinned $PIN_METAL" >&2 ;;
  esac
fi

# The third-party trees, each found by a header only it has.
deps=${TT_METAL_DEPS:-}
if [ -z "$deps" ]; then
  for d in "$TT_METAL"/build_Release/_deps "$TT_METAL"/build/_deps; do
    [ -d "$d" ] && deps=$d && break
  done
fi
[ -n "$deps" ] && [ -d "$deps" ] ||
  missing "no third-party headers: set TT_METAL_DEPS to a directory holding fmt, enchantum, nlohmann json, spdlog and tt-logger (docs/runtime.md lists their versions)"

incs=
for want in "fmt fmt/base.h" "enchantum enchantum/enchantum.hpp" "nlohmann-json nlohmann/json.hpp" \
  "spdlog spdlog/spdlog.h" "tt-logger tt-logger/tt-logger.hpp"; do
  name=${want%% *}
  header=${want#* }
  found=$(find -L "$deps" -maxdepth 6 -path "*/include/$header" -type f 2>/dev/null | sort | head -n 1)
  [ -n "$found" ] || missing "$name is missing: no include/$header under TT_METAL_DEPS=$deps"
  dir=${found%/"$header"}
  echo "metal-check: $name from $dir"
  incs="$incs -isystem $dir"
done

# TT::Metalium's public include directories and definitions, as its CMake
# exports them (tt_metal, tt_stl, hostdevcommon, umd; fmt header-only,
# spdlog on that fmt). System includes, as CMake gives an imported target's:
# warnings count in the runtime's own code only.
T=$TT_METAL
flags="-std=c++20 -fsyntax-only -Wall -Wextra -Werror -DFMT_HEADER_ONLY=1 -DSPDLOG_FMT_EXTERNAL
  -isystem $T/tt_metal/api -isystem $T/tt_stl -isystem $T/tt_metal/hostdevcommon/api -isystem $umd/device/api
  $incs -I$here/cpp/src"

status=0
# metal_layer.cpp, and layers.cpp as the metal build compiles it.
for src in "metal_layer.cpp" "layers.cpp -DZYX_HAVE_METAL=1" "metal_checks.cpp"; do
  file=${src%% *}
  extra=
  [ "$file" != "$src" ] && extra=${src#* }
  # shellcheck disable=SC2086 # flags are word lists
  if $CXX $flags $extra "$here/cpp/src/$file"; then
    echo "metal-check: $file: ok ($CXX)"
  else
    echo "metal-check: $file: FAILED ($CXX)" >&2
    status=1
  fi
done
exit $status
