#!/usr/bin/env bash
# Installs what sparkops needs to build and test, from Debian packages only (run as root).
# Idempotent: packages already present are skipped by apt-get.
set -euo pipefail
PKGS=(
  build-essential cmake ninja-build pkg-config git
  libcli11-dev nlohmann-json3-dev libfmt-dev libelf-dev libyaml-cpp-dev libcpp-httplib-dev
  libgtest-dev googletest
  clang-16 libclang-rt-16-dev  # libFuzzer targets (fuzz/run.sh); clang 14 cannot compile std::expected
  prometheus  # promtool + prometheus: exporter rule tests, metric lint and the scrape integration test
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
