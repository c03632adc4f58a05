#!/usr/bin/env bash
# Checks on the shipped (stripped) binary, registered by tests/release.cmake. Exit 0 pass, 1 fail,
# 77 skip (the machine cannot run the check).
#   release_check.sh needed   OBJDUMP BIN           NEEDED entries: libc.so.6, libm.so.6, the loader only
#   release_check.sh glibc    OBJDUMP BIN MAXVER    no GLIBC_x.y newer than MAXVER; no GLIBCXX/CXXABI/GCC_ versions
#   release_check.sh debug    READELF BIN DEBUG     stripped, a .gnu_debuglink naming DEBUG, DEBUG has .debug_info
#   release_check.sh scratch  BIN FIXTURES ARCH [EMULATOR...]
#        runs --version, preflight and plan in a root that holds nothing but glibc (amd64: chroot,
#        or unshare -r chroot when not root; arm64: EMULATOR -L ROOT) and compares each with the
#        same command outside it.
set -euo pipefail
mode=$1
shift
fail() { echo "FAIL: $*" >&2; exit 1; }

case $mode in
needed)
  objdump=$1 bin=$2
  needed=$("$objdump" -p "$bin" | awk '$1=="NEEDED" {print $2}' | sort)
  echo "NEEDED: $(echo $needed)"
  [ -n "$needed" ] || fail "no NEEDED entries: not a dynamic glibc binary"
  grep -qx 'libc.so.6' <<<"$needed" || fail "libc.so.6 missing from NEEDED"
  bad=$(echo "$needed" | grep -Evx 'libc\.so\.6|libm\.so\.6|ld-linux-(x86-64|aarch64)\.so\.[12]' || true)
  [ -z "$bad" ] || fail "needs more than glibc: $bad"
  ;;
glibc)
  objdump=$1 bin=$2 max=$3
  versions=$("$objdump" -T "$bin" | grep -oE '\((GLIBC|GLIBCXX|CXXABI|GCC)_[0-9.]+\)' | tr -d '()' | sort -u)
  echo "symbol versions: $(echo $versions)"
  grep -q '^GLIBC_' <<<"$versions" || fail "no GLIBC_ symbol versions found: objdump -T output not understood"
  other=$(echo "$versions" | grep -v '^GLIBC_' || true)
  [ -z "$other" ] || fail "libstdc++/libgcc symbols are imported: $other"
  newest=$(echo "$versions" | sed 's/^GLIBC_//' | sort -V | tail -1)
  echo "newest GLIBC_ version required: $newest (allowed: $max)"
  [ "$(printf '%s\n%s\n' "$newest" "$max" | sort -V | tail -1)" = "$max" ] || fail "GLIBC_$newest > GLIBC_$max"
  ;;
debug)
  readelf=$1 bin=$2 debug=$3
  sections=$("$readelf" -S -W "$bin")
  ! grep -qE '\.debug_info|\.symtab' <<<"$sections" || fail "$bin is not stripped"
  link=$("$readelf" --string-dump=.gnu_debuglink "$bin" 2>/dev/null | awk '/\]/ {print $3}' | head -1)
  [ "$link" = "$(basename "$debug")" ] || fail ".gnu_debuglink is '$link', expected $(basename "$debug")"
  # Captured first: `readelf | grep -q` under pipefail fails when grep exits before readelf is done.
  debug_sections=$("$readelf" -S -W "$debug")
  grep -q '\.debug_info' <<<"$debug_sections" || fail "$debug holds no .debug_info"
  # The binary and the debug file come from the same link (same build id).
  build_id() { "$readelf" -n "$1" 2>/dev/null | awk '/Build ID/ {print $3}'; }
  [ -n "$(build_id "$bin")" ] && [ "$(build_id "$bin")" = "$(build_id "$debug")" ] || fail "build ids differ"
  echo "stripped $(stat -c %s "$bin") bytes, debug file $(stat -c %s "$debug") bytes, build id $(build_id "$bin")"
  ;;
scratch)
  bin=$1 fixtures=$2 arch=$3
  shift 3
  emulator=("$@")
  root=$(mktemp -d)
  trap 'rm -rf "$root"' EXIT
  case $arch in
  x86_64) triplet=x86_64-linux-gnu loader=/lib64/ld-linux-x86-64.so.2 ;;
  aarch64) triplet=aarch64-linux-gnu loader=/lib/ld-linux-aarch64.so.1 ;;
  *) echo "no scratch root for $arch"; exit 77 ;;
  esac
  libdir=
  for d in /lib/$triplet /usr/lib/$triplet; do [ -e "$d/libc.so.6" ] && libdir=$d && break; done
  [ -n "$libdir" ] || { echo "no $triplet glibc on this machine"; exit 77; }
  mkdir -p "$root/lib/$triplet" "$root$(dirname $loader)" "$root/fixtures"
  cp -L "$libdir/libc.so.6" "$libdir/libm.so.6" "$root/lib/$triplet/"
  cp -L "$loader" "$root$loader" 2>/dev/null || cp -L "$libdir/$(basename $loader)" "$root$loader"
  cp "$bin" "$root/sparkops"
  cp -r "$fixtures/gb10" "$root/fixtures/gb10"
  echo "scratch root (besides fixtures/): $(cd "$root" && find . -path ./fixtures -prune -o -type f -print | sort | tr '\n' ' ')"
  chroot_bin=$(PATH=/usr/sbin:/sbin:$PATH command -v chroot || true)
  unshare_bin=$(command -v unshare || true)
  if [ ${#emulator[@]} -gt 0 ]; then
    inside() { (cd "$root" && env -i PATH=/nonexistent "${emulator[@]}" -L "$root" "$root/sparkops" "$@"); }
  elif [ -z "$chroot_bin" ]; then
    echo "no chroot on this machine"
    exit 77
  elif [ "$(id -u)" = 0 ] && "$chroot_bin" / true >/dev/null 2>&1; then  # may chroot (into / for the probe)
    inside() { env -i PATH=/nonexistent "$chroot_bin" "$root" /sparkops "$@"; }
  elif [ -n "$unshare_bin" ] && "$unshare_bin" -r "$chroot_bin" / true >/dev/null 2>&1; then
    inside() { env -i PATH=/nonexistent "$unshare_bin" -r "$chroot_bin" "$root" /sparkops "$@"; }
  else
    echo "cannot chroot here (not root, no user namespaces)"
    exit 77
  fi
  outside() { (cd "$root" && env -i PATH=/nonexistent "${emulator[@]}" "$root/sparkops" "$@"); }
  check() {
    local rc_in=0 rc_out=0 out_in out_out
    out_in=$(inside "$@" 2>&1) || rc_in=$?
    out_out=$(outside "$@" 2>&1) || rc_out=$?
    echo "== sparkops $* -> exit $rc_in, $(wc -l <<<"$out_in") lines"
    [ "$rc_in" -le 2 ] || fail "sparkops $* exited $rc_in in the scratch root: $out_in"
    [ -n "$out_in" ] || fail "sparkops $* printed nothing in the scratch root"
    [ "$rc_in" = "$rc_out" ] || fail "sparkops $*: exit $rc_in in the root, $rc_out outside"
    [ "$out_in" = "$out_out" ] || { diff <(echo "$out_in") <(echo "$out_out") >&2 || true; fail "sparkops $*: output differs"; }
  }
  check --version
  version=$(inside --version)
  grep -q "^sparkops .*$arch" <<<"$version" || fail "--version does not name $arch"
  check --root fixtures/gb10 preflight
  check plan llama-3.3-70b --method qlora --seq 4096 --root fixtures/gb10
  ;;
*) echo "usage: see the header of $0" >&2; exit 2 ;;
esac
echo PASS
