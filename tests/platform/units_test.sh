#!/usr/bin/env bash
# The shipped systemd units (packaging/*.service) pass `systemd-analyze verify` with the built binary
# in ExecStart and the built man page for Documentation=: every directive known, the command
# executable, nothing warned. Any line it prints fails the test. Skipped (77) without systemd-analyze.
#   units_test.sh SOURCE_DIR BINARY MANPAGE_GZ
set -euo pipefail
src=$1 bin=$2 man=$3
command -v systemd-analyze >/dev/null || { echo "SKIP: systemd-analyze not installed (Debian package systemd)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/man/man1"
cp "$man" "$tmp/man/man1/sparkops.1.gz"
units=()
for u in "$src"/packaging/*.service; do
  sed "s#/usr/bin/sparkops#$bin#" "$u" >"$tmp/$(basename "$u")"
  units+=("$tmp/$(basename "$u")")
done
[ "${#units[@]}" -ge 2 ] || { echo "FAIL: expected the exporter and guard units, found ${#units[@]}"; exit 1; }
rc=0
out=$(MANPATH="$tmp/man" systemd-analyze verify "${units[@]}" 2>&1) || rc=$?
if [ "$rc" -ne 0 ] || [ -n "$out" ]; then
  echo "FAIL: systemd-analyze verify (exit $rc):"
  echo "$out"
  exit 1
fi
echo "ok: ${#units[@]} units verified: $(basename -a "${units[@]}" | tr '\n' ' ')"
