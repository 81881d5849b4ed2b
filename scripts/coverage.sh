#!/usr/bin/env bash
# make coverage: line and branch coverage of theory/ and sim/ by every claim at the ci budget (with
# its mutants, evaluated from the same measurement) and by the unit and property tests of
# tests/theory, tests/sim and tests/checks; then the functions of theory/ and sim/ that nothing
# executes. Needs the `coverage` preset built (target coverage_build; see cmake/DyncheckCoverage.cmake).
#
# Writes build/coverage/coverage/:
#   lines.txt, branches.txt    gcovr tables (per file, then TOTAL)
#   coverage.json              gcovr JSON (per-line counts, per-function-instantiation counts)
#   functions.txt              every function defined in theory/ and sim/ (universal-ctags) with its
#                              status: executed, NEVER EXECUTED (compiled, count 0) or NEVER COMPILED
#                              (a template no translation unit instantiates: gcov has no record of it)
#   unexecuted_functions.txt   the last two kinds only
#   timings.txt                wall time of each phase
# Exit 1 when a function in theory/ is never executed or never compiled (issue #10: leave none in
# theory/), or when a unit test failed; unexecuted functions in sim/ are listed, not fatal.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/coverage
out=$build/coverage
jobs=${JOBS:-2}
mkdir -p "$out"
rm -rf "$out/report"
find "$build" -name '*.gcda' -delete
: > "$out/timings.txt"
phase() {  # phase <name> <command...>: run, append its wall time to timings.txt, keep its status
  local name=$1 start status=0
  shift
  start=$(date +%s)
  "$@" || status=$?
  echo "$name: $(( $(date +%s) - start )) s (exit $status)" | tee -a "$out/timings.txt"
  return 0
}

# 1. Unit and property tests of the theory, the simulator and the claim core (not the claims',
#    golden, fuzz, seeds or calibration tests: the claims run once each in step 2). Not
#    checks_stats_test either (tests `checks:Stats*`, 2 of the 2.4 minutes of tests/checks at ci, most
#    of it the coverage calibration of the confidence intervals): it includes only checks/ headers, so
#    it executes nothing in theory/ or sim/, which is all this report counts.
tests_failed=0
for layer in theory sim checks; do
  exclude=()
  [ "$layer" = checks ] && exclude=(-E '^checks:Stats|^checks_stats_test_NOT_BUILT')
  rm -f "$out/ctest_$layer.log"
  phase "unit tests of tests/$layer" \
    ctest --test-dir "$build/tests/$layer" --parallel "$jobs" --timeout 900 --output-on-failure \
      "${exclude[@]}" --quiet --output-log "$out/ctest_$layer.log"
  if ! grep -q '100% tests passed' "$out/ctest_$layer.log"; then
    tests_failed=1
    echo "coverage: unit tests in tests/$layer failed (see $out/ctest_$layer.log)" >&2
  fi
  grep -E 'tests passed|tests failed' "$out/ctest_$layer.log" | tail -n 1
done

# 2. Every claim at ci, once, with all its mutants evaluated from that one measurement (what
#    `dyncheck report` does; its exit status is the suite's verdict, which coverage does not judge).
#    One process per family: its wall time goes to timings.txt, and a process writes its counts when
#    it exits, so a family that crashes loses only its own.
dyncheck=$build/reports/dyncheck
for family in $("$dyncheck" list | grep -oE '^[a-z0-9_]+\.' | tr -d . | sort -u); do
  phase "claims of $family at ci (dyncheck report, with mutants)" \
    "$dyncheck" report "$family" --budget ci --quiet --threads "$jobs" --out "$out/report/$family"
done

# 3. gcovr 5.2 (Debian 12): one pass over the .gcda files (gcov on every object, the slow part) to the
#    JSON with per-line counts and branches (without the compiler's exception edges), then the per-file
#    tables rendered from that JSON.
filters=(-r . --filter 'theory/' --filter 'sim/')
phase "gcovr" bash -c "
  gcovr ${filters[*]} --exclude-throw-branches -j $jobs --json '$out/coverage.json' $build &&
  gcovr -a '$out/coverage.json' > '$out/lines.txt' &&
  gcovr -a '$out/coverage.json' --branches > '$out/branches.txt'"
tail -n 2 "$out/lines.txt" | head -n 1 | sed 's/^TOTAL/lines    /'
tail -n 2 "$out/branches.txt" | head -n 1 | sed 's/^TOTAL/branches /'

# 4. Functions. gcovr 5.2's per-function records are not usable for this: it keeps one record per
#    template instantiation and drops some (measured: odeint_eigen_algebra::norm_inf listed once with
#    count 0 while its lines ran 56554 times), and a template no translation unit instantiates has no
#    record at all. So the list starts from the sources: every function definition in theory/ and
#    sim/ (universal-ctags: first and last line; lambdas are functions of their own), and a function
#    is executed when a line of its body ran. gcov counts the code of an inlined call at the callee's
#    own source lines, so this needs no -fno-inline (checked on a small example with g++ 12 -O1: an
#    inline function inlined at every call shows its lines run, one inlined only into a branch never
#    taken shows them at 0, one never called has no line at all). A lambda written on one line with
#    code of its enclosing function shares that line's count.
rm -f "$out/ctags.json"
ctags-universal --output-format=json --c++-kinds=f --fields=+ne --language-force=c++ -f "$out/ctags.json" \
  $(find theory sim -name '*.hpp' -o -name '*.cpp' | sort)
/usr/bin/python3 - "$out" "$tests_failed" <<'PY'
import json, sys
out, tests_failed = sys.argv[1], int(sys.argv[2])
cov = json.load(open(f"{out}/coverage.json"))
line_counts = {}
for f in cov.get("files", []):
    # gcovr also lists lines it calls non-code (a lone `}`, count 0) even in functions never compiled;
    # they would turn "never compiled" into "never executed", so they are left out.
    line_counts[f["file"]] = {l["line_number"]: l["count"] for l in f.get("lines", [])
                              if not l.get("gcovr/noncode")}
# Per directory: lines, and branches without the compiler's exception edges (gcovr's "throw" flag).
for prefix in ("theory/", "sim/"):
    lines = [l for f in cov.get("files", []) if f["file"].startswith(prefix) for l in f.get("lines", [])
             if not l.get("gcovr/noncode")]
    branches = [b for l in lines for b in l.get("branches", []) if not b.get("throw")]
    run_lines = sum(1 for l in lines if l["count"] > 0)
    run_branches = sum(1 for b in branches if b["count"] > 0)
    summary = (f"{prefix:8s} lines {run_lines}/{len(lines)} = {100 * run_lines / max(len(lines), 1):.1f}%, "
               f"branches (without exception edges) {run_branches}/{len(branches)} = "
               f"{100 * run_branches / max(len(branches), 1):.1f}%")
    print(summary)
    with open(f"{out}/timings.txt", "a") as fh:
        fh.write(summary + "\n")
defs = []
for row in open(f"{out}/ctags.json"):
    tag = json.loads(row)
    if tag.get("_type") != "tag" or tag.get("kind") != "function":
        continue
    start = tag["line"]
    defs.append((tag["path"], start, tag.get("end", start), tag.get("scope", ""), tag["name"]))
defs.sort()
rows, bad = [], []
for path, start, end, scope, name in defs:
    full = f"{scope}::{name}" if scope else name
    lines = line_counts.get(path, {})
    body = [lines[l] for l in range(start, end + 1) if l in lines]
    status = ("executed" if any(body) else "NEVER EXECUTED") if body else "NEVER COMPILED"
    rows.append(f"{path}:{start}-{end}: {full}: {status}")
    if status != "executed":
        bad.append((path, start, full, status))
open(f"{out}/functions.txt", "w").write("\n".join(rows) + "\n")
with open(f"{out}/unexecuted_functions.txt", "w") as fh:
    for path, start, full, status in bad:
        fh.write(f"{path}:{start}: {full}: {status}\n")
theory = [b for b in bad if b[0].startswith("theory/")]
sim = [b for b in bad if b[0].startswith("sim/")]
print(f"functions defined in theory/ and sim/: {len(defs)}; not executed: {len(bad)} "
      f"({len(theory)} in theory/, {len(sim)} in sim/); list in {out}/unexecuted_functions.txt")
for path, start, full, status in theory + sim:
    print(f"  {path}:{start}: {full}: {status}")
if tests_failed:
    print("coverage: a unit test failed (see the ctest logs above)")
sys.exit(1 if theory or tests_failed else 0)
PY
