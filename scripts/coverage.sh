#!/usr/bin/env bash
# make coverage: line and branch coverage of theory/ and sim/ by every claim at the ci budget and by
# the unit and property tests, and the list of functions in theory/ and sim/ that nothing executes.
# Writes build/coverage/coverage/{lines.txt,summary.txt (branches),coverage.json,unexecuted_functions.txt};
# exits 1 when a function in theory/ is never executed (issue #10: leave none in theory/).
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/coverage
out=$build/coverage
mkdir -p "$out"
find "$build" -name '*.gcda' -delete
# Unit and property tests, then every claim and its mutants at ci (one measurement each).
ctest --preset coverage -L 'theory|sim|checks' --parallel "${JOBS:-2}" --output-on-failure || true
"$build/reports/dyncheck" report --budget ci --quiet --out "$out/report" || true
# gcovr 5.2 (Debian 12): a summary table, then the JSON with per-function execution counts.
gcovr -r . --filter 'theory/' --filter 'sim/' --branches "$build" > "$out/summary.txt"
gcovr -r . --filter 'theory/' --filter 'sim/' "$build" > "$out/lines.txt"
gcovr -r . --filter 'theory/' --filter 'sim/' --json "$out/coverage.json" "$build"
tail -n 3 "$out/lines.txt"; tail -n 3 "$out/summary.txt"
/usr/bin/python3 - "$out/coverage.json" "$out/unexecuted_functions.txt" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
rows = []
for f in data.get("files", []):
    for fn in f.get("functions", []):
        if fn.get("execution_count", 0) == 0:
            rows.append((f["file"], fn.get("lineno", 0), fn.get("name", "?")))
rows.sort()
with open(sys.argv[2], "w") as out:
    for file, line, name in rows:
        out.write(f"{file}:{line}: {name}\n")
theory = [r for r in rows if r[0].startswith("theory/")]
print(f"functions never executed: {len(rows)} ({len(theory)} in theory/); list in {sys.argv[2]}")
for file, line, name in theory:
    print(f"  {file}:{line}: {name}")
sys.exit(1 if theory else 0)
PY
