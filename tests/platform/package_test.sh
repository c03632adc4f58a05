#!/usr/bin/env bash
# package_test.sh BUILD_DIR FIXTURES VERSION ARCH [EMULATOR|ARGS]
# Builds the .deb with CPack into a scratch directory, checks its metadata and contents, unpacks it
# with dpkg -x into a scratch root, runs the packaged sparkops there (through EMULATOR, '|'-separated,
# in a cross build) and runs lintian. Exit 77 (skipped) when dpkg-deb or cpack is missing.
set -euo pipefail
build=$1 fixtures=$2 version=$3 arch=$4
IFS='|' read -r -a emu <<<"${5:-}"
case "$arch" in aarch64) deb_arch=arm64 ;; x86_64) deb_arch=amd64 ;; *) deb_arch=$arch ;; esac

for tool in dpkg-deb cpack; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed"; exit 77; }
done
fail() { echo "FAIL: $*" >&2; exit 1; }

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
(cd "$build" && cpack -G DEB -B "$scratch/out" >"$scratch/cpack.log" 2>&1) || { cat "$scratch/cpack.log"; fail "cpack"; }
deb="$scratch/out/sparkops_${version}_${deb_arch}.deb"
[ -f "$deb" ] || { ls "$scratch/out"; fail "no $deb"; }
echo "built $(basename "$deb") ($(stat -c %s "$deb") bytes)"

# Metadata: the right architecture; the binary needs glibc only (cmake/static_deps.cmake), so the
# package depends on libc6 alone, never on NVIDIA's packages.
[ "$(dpkg-deb -f "$deb" Architecture)" = "$deb_arch" ] || fail "Architecture is not $deb_arch"
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
[[ "$depends" =~ ^libc6\ \(\>=\ 2\.[0-9]+\)$ ]] || fail "Depends is not libc6 (>= 2.x) alone: $depends"
grep -qiE 'nvidia|cuda|nvml' <<<"$depends" && fail "Depends names an NVIDIA package"
# Every dependency is a Debian package present on this (build) system for the package's architecture.
for pkg in $(sed 's/([^)]*)//g; s/[,|]/ /g' <<<"$depends"); do
  dpkg-query -W -f='${Status}' "$pkg:$deb_arch" 2>/dev/null | grep -q "install ok installed" ||
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
    fail "dependency $pkg:$deb_arch is not an installed Debian package"
done

# Contents.
contents=$(dpkg-deb -c "$deb")
for f in ./usr/bin/sparkops ./usr/share/man/man1/sparkops.1.gz ./usr/share/doc/sparkops/copyright \
         ./usr/share/doc/sparkops/changelog.gz ./lib/systemd/system/sparkops-exporter.service \
         ./usr/lib/tmpfiles.d/sparkops.conf ./usr/share/sparkops/python/sparkops_callbacks.py; do
  grep -q " $f\$" <<<"$contents" || fail "package lacks $f"
done
# No maintainer script enables or starts the exporter: it is installed disabled.
dpkg-deb -e "$deb" "$scratch/control"
for s in postinst preinst prerm postrm; do
  [ -e "$scratch/control/$s" ] && fail "unexpected maintainer script $s"
done

root="$scratch/root"
dpkg -x "$deb" "$root"
unit="$root/lib/systemd/system/sparkops-exporter.service"
grep -q '^ExecStart=/usr/bin/sparkops exporter --listen 127\.0\.0\.1:' "$unit" || fail "unit not bound to loopback"
man=$(zcat "$root/usr/share/man/man1/sparkops.1.gz")  # captured: grep -q would end zcat early (SIGPIPE, pipefail)
grep -q '^\.SS preflight' <<<"$man" || fail "man page lacks preflight"

bin="$root/usr/bin/sparkops"
out=$("${emu[@]}" "$bin" --version) || fail "--version exited $?"
echo "$out"
grep -q "^sparkops $version (git .*, $arch, GNU " <<<"$out" || fail "--version: $out"

for fx in gb10 discrete laptop; do
  rc=0
  out=$("${emu[@]}" "$bin" --root "$fixtures/$fx" preflight 2>&1) || rc=$?
  # 0: all fine, 1: a problem found; 2 or a signal would mean the packaged binary is broken.
  [ "$rc" -le 1 ] || { echo "$out"; fail "preflight on $fx exited $rc"; }
  grep -q 'G3' <<<"$out" || { echo "$out"; fail "preflight on $fx did not report G3"; }
  echo "preflight --root fixtures/$fx: exit $rc"
done

if command -v lintian >/dev/null; then
  # Errors fail the test; warnings are printed for the log.
  # TMPDIR: lintian leaves its MLDBM scratch files (mldbm-elf-*) behind; keep them in ours.
  TMPDIR="$scratch" lintian --fail-on error --tag-display-limit 0 "$deb" || fail "lintian reports errors"
  echo "lintian: no errors"
else
  echo "SKIP: lintian not installed"; exit 77
fi
