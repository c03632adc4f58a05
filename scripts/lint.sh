#!/usr/bin/env bash
# The lint stage of scripts/test.sh: the format check and clang-tidy, both must be clean.
#   scripts/lint.sh [format|tidy ...]   (default: both)
#   format: clang-format-16 --dry-run -Werror over every tracked .cc/.h/.c (style: .clang-format);
#           fix with: git ls-files '*.cc' '*.h' '*.c' | xargs clang-format-16 -i
#   tidy:   clang-tidy-16 with .clang-tidy over every src/ translation unit, from a compile database
#           configured in LINT_DIR (default build-lint). clang-tidy 16 parses libstdc++ 12's
#           <expected> only as C++2b with __cpp_concepts raised to 202002L (clang 16 reports
#           201907L; the header checks for the later value), and does not know GCC-only flags:
#           the database is rewritten accordingly.
# Exit 0 when clean, 1 with every finding printed otherwise, 2 when a tool is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
WHAT=("$@"); ((${#WHAT[@]})) || WHAT=(format tidy)
rc=0
for w in "${WHAT[@]}"; do
  case "$w" in
    format)
      command -v clang-format-16 >/dev/null || { echo "lint: clang-format-16 not found (scripts/setup.sh)" >&2; exit 2; }
      if ! git ls-files -z '*.cc' '*.h' '*.c' | xargs -0 clang-format-16 --dry-run -Werror; then
        echo "lint: format check failed (see above)"; rc=1
      else
        echo "lint: format clean ($(git ls-files '*.cc' '*.h' '*.c' | wc -l) files)"
      fi
      ;;
    tidy)
      command -v clang-tidy-16 >/dev/null || { echo "lint: clang-tidy-16 not found (scripts/setup.sh)" >&2; exit 2; }
      dir=${LINT_DIR:-build-lint}
      cmake -S . -B "$dir" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DSPARKOPS_TESTS=OFF >/dev/null
      python3 - "$dir/compile_commands.json" <<'PY'
import json, re, sys
p = sys.argv[1]
db = json.load(open(p))
for e in db:
    c = re.sub(r"-std=(gnu|c)\+\+23", "-std=c++2b", e["command"])
    c = re.sub(r"-mmemset-strategy=\S+", "", c)
    e["command"] = c + " -D__cpp_concepts=202002L"
json.dump(db, open(p, "w"))
PY
      out=$(mktemp) files=$(mktemp)
      python3 -c "import json,sys; [print(e['file']) for e in json.load(open(sys.argv[1])) if '/src/' in e['file']]" \
        "$dir/compile_commands.json" >"$files"
      # WarningsAsErrors: any finding (or a file clang-tidy cannot parse) is a non-zero exit.
      if xargs -P"$JOBS" -n4 clang-tidy-16 --quiet -p "$dir" <"$files" >"$out" 2>&1; then
        echo "lint: clang-tidy clean ($(wc -l <"$files") files)"
      else
        grep -v -E "^[0-9]+ (warnings?|errors?) generated\.$|__cpp_concepts' macro redefined|^note: previous definition is here" "$out"
        echo "lint: clang-tidy: $(grep -E '(warning|error):' "$out" | grep -v -c __cpp_concepts) findings"; rc=1
      fi
      rm -f "$out" "$files"
      ;;
    *) echo "usage: scripts/lint.sh [format|tidy ...]" >&2; exit 2 ;;
  esac
done
exit $rc
