#!/usr/bin/env bash
# tarball_test.sh BUILD_DIR VERSION ARCH [EMULATOR|ARGS]
# Builds the release tarball (target sparkops_tarball), checks that it holds exactly one top
# directory with the binary, man page, Prometheus rules, Grafana dashboard, both systemd units and
# the install notes, unpacks it into a scratch directory and runs the binary there (through
# EMULATOR, '|'-separated, in a cross build): --version must name the architecture.
set -euo pipefail
build=$1 version=$2 arch=$3
IFS='|' read -r -a emu <<<"${4:-}"
case "$arch" in aarch64) tar_arch=arm64 ;; x86_64) tar_arch=amd64 ;; *) tar_arch=$arch ;; esac
fail() { echo "FAIL: $*" >&2; exit 1; }

name="sparkops-${version}-linux-${tar_arch}"
cmake --build "$build" --target sparkops_tarball >/dev/null
tarball="$build/$name.tar.gz"
[ -f "$tarball" ] || fail "no $tarball"
echo "built $(basename "$tarball") ($(stat -c %s "$tarball") bytes)"

listing=$(tar tzf "$tarball")
for f in sparkops sparkops.1.gz sparkops-exporter.service sparkops-guard.service sparkops.tmpfiles INSTALL.md copyright \
         prometheus/sparkops-rules.yml prometheus/prometheus.yml grafana/dashboard.json python/sparkops_callbacks.py; do
  grep -qx "$name/$f" <<<"$listing" || fail "$f missing from the tarball"
done
tops=$(cut -d/ -f1 <<<"$listing" | sort -u)
[ "$tops" = "$name" ] || fail "more than one top directory: $tops"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
tar xzf "$tarball" -C "$scratch"
[ -x "$scratch/$name/sparkops" ] || fail "the binary is not executable"
version_line=$("${emu[@]}" "$scratch/$name/sparkops" --version)
echo "$version_line"
grep -q "^sparkops $version .*$arch" <<<"$version_line" || fail "--version does not say $version on $arch"
