#!/usr/bin/env bash
# Installs what sparkops needs to build and test, from Debian packages only (run as root).
# Idempotent: packages already present are skipped by apt-get.
#   scripts/setup.sh           native build + tests + .deb packaging (dpkg-dev, lintian)
#   scripts/setup.sh --cross   also the aarch64 cross build run under qemu (adds dpkg architecture
#                              arm64, g++-aarch64-linux-gnu, qemu-user, the :arm64 libraries)
set -euo pipefail
PKGS=(
  build-essential cmake ninja-build pkg-config git
  python3  # the layer check and the checkpoint hooks' test
  libcli11-dev nlohmann-json3-dev libfmt-dev libyaml-cpp-dev
  libgtest-dev googletest
  clang-16 libclang-rt-16-dev  # libFuzzer targets (fuzz/run.sh); clang 14 cannot compile std::expected
  clang-tidy-16 clang-format-16  # the lint stage (scripts/lint.sh): 14 cannot parse std::expected either
  prometheus  # promtool + prometheus: exporter rule tests, metric lint and the scrape integration test
  dpkg-dev lintian
  systemd  # systemd-analyze verify of the shipped units (test systemd_units)
  chromium  # headless render test of the analyze HTML report
)
# Cross build for DGX Spark (aarch64). libyaml-cpp-dev is not Multi-Arch: same in Debian 12, so
# :arm64 of it would replace the native one: its arm64 .deb is downloaded and only unpacked, under
# /opt/sparkops-cross (cmake/static_deps.cmake links its libyaml-cpp.a; the headers are
# architecture-independent and come from the native package).
CROSS_PKGS=(
  g++-aarch64-linux-gnu binutils-aarch64-linux-gnu qemu-user
  libfmt-dev:arm64 libgtest-dev:arm64 libyaml-cpp0.7:arm64
)
CROSS_YAML_A=/opt/sparkops-cross/aarch64-linux-gnu/usr/lib/aarch64-linux-gnu/libyaml-cpp.a
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
APT_OPTS=(-o DPkg::Lock::Timeout=600 -y -qq --no-install-recommends)

updated=0
if [ "${1:-}" = "--cross" ]; then
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    $SUDO dpkg --add-architecture arm64
    $SUDO apt-get update -qq
    updated=1
  fi
  PKGS+=("${CROSS_PKGS[@]}")
fi

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  ((updated)) || $SUDO apt-get update -qq
  $SUDO apt-get install "${APT_OPTS[@]}" "${missing[@]}"
fi

if [ "${1:-}" = "--cross" ] && [ ! -f "$CROSS_YAML_A" ]; then
  # The same version as the native headers.
  ver=$(dpkg-query -W -f='${Version}' libyaml-cpp-dev)
  tmp=$(mktemp -d)
  chmod 755 "$tmp"  # apt's download user must be able to write there
  (cd "$tmp" && apt-get download "libyaml-cpp-dev:arm64=$ver")
  $SUDO mkdir -p /opt/sparkops-cross/aarch64-linux-gnu
  $SUDO dpkg-deb -x "$tmp"/libyaml-cpp-dev_*_arm64.deb /opt/sparkops-cross/aarch64-linux-gnu
  rm -rf "$tmp"
  test -f "$CROSS_YAML_A"
fi
