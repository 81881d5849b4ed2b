#!/bin/bash
# ctest reports:sweep (issue #16): `dyncheck sweep` writes sweep.json, sweep.csv and sweep.svg; a sweep
# killed with SIGKILL after its first points and resumed gives byte-identical files; so does a resume
# with another thread count; a resume with another grid, or of a corrupted journal, exits 2 and leaves
# the journal untouched; invalid axes exit 2 before any work.
# Usage: sweep_test.sh <dyncheck> <work dir>
set -u
dyncheck=$1
work=$2
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
claim=calib.sgd_mean_matches_gradient_flow
grid=(--grid eta=0.01:0.2:6:log --grid batch=4,16)
"$dyncheck" sweep $claim "${grid[@]}" --budget smoke --out whole --threads 1 --quiet || fail "uninterrupted sweep exited $?"
for f in sweep.json sweep.csv sweep.svg points.jsonl; do [ -s whole/$f ] || fail "no whole/$f"; done
[ "$(grep -c '^[0-9]' whole/sweep.csv)" -ge 12 ] || fail "sweep.csv has fewer than 12 rows"

# SIGKILL once the header and two points are on disk, then resume (with 2 threads).
"$dyncheck" sweep $claim "${grid[@]}" --budget smoke --out killed --threads 1 --quiet &
pid=$!
for _ in $(seq 1 6000); do
  [ "$(wc -l < killed/points.jsonl 2>/dev/null || echo 0)" -ge 3 ] && break
  sleep 0.01
done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
lines=$(wc -l < killed/points.jsonl)
echo "killed after $((lines - 1)) of 12 points"
[ "$lines" -lt 13 ] || echo "note: the sweep finished before it was killed; the resume below only re-reads it"
"$dyncheck" sweep $claim "${grid[@]}" --budget smoke --out killed --threads 2 --quiet --resume || fail "resume exited $?"
for f in sweep.json sweep.csv sweep.svg; do cmp whole/$f killed/$f || fail "$f differs after kill and resume"; done

# A resume with another grid: exit 2, journal untouched.
cp killed/points.jsonl before.jsonl
"$dyncheck" sweep $claim --grid eta=0.01:0.2:5:log --grid batch=4,16 --budget smoke --out killed --quiet --resume
[ $? -eq 2 ] || fail "a mismatched resume did not exit 2"
cmp before.jsonl killed/points.jsonl || fail "a mismatched resume changed the journal"
# Another seed is another sweep too.
"$dyncheck" sweep $claim "${grid[@]}" --budget smoke --seed 7 --out killed --quiet --resume
[ $? -eq 2 ] || fail "a resume with another seed did not exit 2"
# A corrupted line: exit 2, untouched.
mkdir corrupt && head -2 before.jsonl > corrupt/points.jsonl && echo '{"index": 99, "outcome"' >> corrupt/points.jsonl
cp corrupt/points.jsonl corrupt.before
"$dyncheck" sweep $claim "${grid[@]}" --budget smoke --out corrupt --quiet --resume
[ $? -eq 2 ] || fail "a corrupted journal did not exit 2"
cmp corrupt.before corrupt/points.jsonl || fail "resuming a corrupted journal changed it"
# Without --resume an existing journal is refused.
"$dyncheck" sweep $claim "${grid[@]}" --budget smoke --out whole --quiet
[ $? -eq 2 ] || fail "an existing journal without --resume did not exit 2"
# Invalid axes exit 2 before any work (no directory created).
for bad in "eta=0:0.2:5" "eta=0.1,0.1" "etax=1" "eta=0.1:0.2" "eta=0.1:0.2:0" "eta=0x1" "batch=1.5"; do
  "$dyncheck" sweep $claim --grid "$bad" --out "bad" --quiet
  [ $? -eq 2 ] || fail "--grid $bad did not exit 2"
  [ ! -e bad ] || fail "--grid $bad created its output directory"
done
"$dyncheck" sweep $claim --grid eta=0.1 --param eta=0.2 --out bad --quiet
[ $? -eq 2 ] || fail "an axis that is also a --param did not exit 2"
echo "sweep test passed"
