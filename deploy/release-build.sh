#!/usr/bin/env bash
# The release build of watchdogd that ships — the .deb (deploy/deb/build.sh), the container
# (deploy/Dockerfile) — and that the benchmarks measure (Tests/Benchmarks/lib.sh). Prints the
# binary's path on stdout; swift build's output goes to stderr.
#   deploy/release-build.sh [swift build options, e.g. --scratch-path DIR]
#
# Beyond `swift build -c release --static-swift-stdlib` (the Swift runtime and Foundation linked
# in), it lays the code out so that the daemon maps less of it (docs/performance.md, memory):
# - every Swift and C function in a section of its own (-function-sections, -ffunction-sections),
#   so that the linker can move each one;
# - linked by lld (the toolchain's ld.lld) with deploy/link/watchdogd.order, the functions that
#   start, idle and serve first, and deploy/link/watchdogd.sections.ld, the code among them that
#   has no name of its own to order by (deploy/link/order.sh writes both): the kernel maps code
#   in 64 KiB windows around each page touched, and code spread over 23 MiB kept ~14 MiB mapped
#   at idle;
# - relative relocations packed (-z pack-relative-relocs, DT_RELR: glibc ≥ 2.36): the position-
#   independent executable keeps its address randomisation, and its 104 k relocations take
#   19 KiB instead of 2.4 MiB read at every start;
# - no dynamic symbol table of its own (--no-export-dynamic; the toolchain's static-stdlib link
#   exports every symbol of our objects, 22 k of them, 1.7 MiB that nothing looks up);
# - libstdc++ linked in (the C++ inside the static Swift runtime and Foundation's ICU needs it):
#   only the code used, laid out with ours, instead of loading all of libstdc++.so, its symbol
#   tables and relocations (0.8-1 MiB less at idle). The toolchain's link asks for -lstdc++; a
#   directory holding only libstdc++.a, searched first, makes that the archive. It is GCC's,
#   from the libstdc++-12-dev the toolchain needs, under the GCC Runtime Library Exception.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
swift_bin=$(dirname "$(readlink -f "$(command -v swift)")")
libstdcxx=$("$swift_bin/clang" -print-file-name=libstdc++.a)
[ -f "$libstdcxx" ] || { echo "release-build.sh: no libstdc++.a (install libstdc++-12-dev)" >&2; exit 1; }
flags=(-c release --static-swift-stdlib --package-path "$repo"
  -Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections
  -Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs -Xlinker --no-export-dynamic
  -Xlinker "--symbol-ordering-file=$repo/deploy/link/watchdogd.order" -Xlinker --no-warn-symbol-ordering
  -Xlinker -T -Xlinker "$repo/deploy/link/watchdogd.sections.ld"
  "$@")
bin=$(swift build "${flags[@]}" --show-bin-path)
mkdir -p "$bin/static-libstdc++"
ln -sf "$libstdcxx" "$bin/static-libstdc++/libstdc++.a"
flags+=(-Xlinker "-L$bin/static-libstdc++")
# The link map, which deploy/link/order.sh reads to find the sections of the code that ran.
flags+=(-Xlinker "-Map=$bin/watchdogd.map")
# SwiftPM does not know the order file is an input of the link: removing the binary makes it
# link again (seconds), so a build after the file changed is laid out by it.
rm -f "$bin/watchdogd"
swift build "${flags[@]}" --product watchdogd >&2
echo "$bin/watchdogd"
