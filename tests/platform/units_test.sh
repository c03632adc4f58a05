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
# The ledger paths (issue 29): the guard may write /run/sparkops/guard under ProtectSystem=strict and
# keeps it; the spool for users' run guards is created by the tmpfiles snippet, sticky and 1777;
# the exporter reads both without a capability. The paths are the ones src/guard/ledger.h names.
g="$src/packaging/sparkops-guard.service" e="$src/packaging/sparkops-exporter.service" t="$src/packaging/sparkops.tmpfiles"
need() { grep -Eq "$2" "$1" || { echo "FAIL: $(basename "$1") lacks /$2/"; exit 1; }; }
need "$g" '^RuntimeDirectory=sparkops/guard$'
need "$g" '^RuntimeDirectoryPreserve=yes$'
need "$g" '^RuntimeDirectoryMode=0755$'
need "$t" '^d /run/sparkops/guard +0755 root root -$'
need "$t" '^d /run/sparkops/runs +1777 root root -$'
need "$src/src/guard/ledger.h" 'kRunLedgerSpool = "/run/sparkops/runs"'
need "$src/src/guard/ledger.cc" '"/run/sparkops/guard"'
if [ "$(id -u)" = 0 ] && command -v systemd-tmpfiles >/dev/null; then  # the snippet as systemd applies it
  systemd-tmpfiles --root="$tmp/root" --create "$(realpath "$t")" >/dev/null
  [ "$(stat -c '%a %u' "$tmp/root/run/sparkops/runs")" = "1777 0" ] || { echo "FAIL: tmpfiles: runs not 1777 root"; exit 1; }
  [ "$(stat -c '%a %u' "$tmp/root/run/sparkops/guard")" = "755 0" ] || { echo "FAIL: tmpfiles: guard not 0755 root"; exit 1; }
fi
if grep -Eq '^(AmbientCapabilities|CapabilityBoundingSet)=.*CAP_DAC' "$e"; then
  echo "FAIL: the exporter must not need CAP_DAC_* to read ledgers"; exit 1
fi
echo "ok: ${#units[@]} units verified: $(basename -a "${units[@]}" | tr '\n' ' '); ledger paths checked"
