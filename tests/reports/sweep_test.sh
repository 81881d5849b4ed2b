#!/bin/bash
# ctest reports:sweep (issue #16): `dyncheck sweep` writes sweep.json, sweep.csv and sweep.svg; a sweep
# killed with SIGKILL after its first points and resumed gives byte-identical files; so does a resume
# with another thread count; a resume with another grid, or of a corrupted journal, exits 2 and leaves
# the journal untouched; invalid axes exit 2 before any work.
# With an mpiexec (MPI built in): the same sweep under `mpiexec -n 2` gives identical files, and a
# run whose rank 1 is killed exits non-zero, keeps its journal, and resumes to identical files; a
# one-point sweep under 2 ranks splits the point's replicates and gives the serial run's files.
# Usage: sweep_test.sh <dyncheck> <work dir> [mpiexec]
set -u
dyncheck=$1
work=$2
mpiexec=${3:-}
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
claim=calib.sgd_mean_matches_gradient_flow
grid=(--grid eta=0.01:0.2:6:log --grid batch=4,16)
"$dyncheck" sweep $claim "${grid[@]}" --budget ci --out whole --threads 1 --quiet || fail "uninterrupted sweep exited $?"
for f in sweep.json sweep.csv sweep.svg points.jsonl; do [ -s whole/$f ] || fail "no whole/$f"; done
[ "$(grep -c '^[0-9]' whole/sweep.csv)" -ge 12 ] || fail "sweep.csv has fewer than 12 rows"

# SIGKILL once the header and two points are on disk, then resume (with 2 threads).
"$dyncheck" sweep $claim "${grid[@]}" --budget ci --out killed --threads 1 --quiet &
pid=$!
for _ in $(seq 1 6000); do
  [ "$(wc -l 2>/dev/null < killed/points.jsonl || echo 0)" -ge 3 ] && break
  sleep 0.01
done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
lines=$(wc -l < killed/points.jsonl)
echo "killed after $((lines - 1)) of 12 points"
[ "$lines" -lt 13 ] || echo "note: the sweep finished before it was killed; the resume below only re-reads it"
"$dyncheck" sweep $claim "${grid[@]}" --budget ci --out killed --threads 2 --quiet --resume || fail "resume exited $?"
for f in sweep.json sweep.csv sweep.svg; do cmp whole/$f killed/$f || fail "$f differs after kill and resume"; done

# A resume with another grid: exit 2, journal untouched.
cp killed/points.jsonl before.jsonl
"$dyncheck" sweep $claim --grid eta=0.01:0.2:5:log --grid batch=4,16 --budget ci --out killed --quiet --resume
[ $? -eq 2 ] || fail "a mismatched resume did not exit 2"
cmp before.jsonl killed/points.jsonl || fail "a mismatched resume changed the journal"
# Another seed is another sweep too.
"$dyncheck" sweep $claim "${grid[@]}" --budget ci --seed 7 --out killed --quiet --resume
[ $? -eq 2 ] || fail "a resume with another seed did not exit 2"
# A corrupted line: exit 2, untouched.
mkdir corrupt && head -2 before.jsonl > corrupt/points.jsonl && echo '{"index": 99, "outcome"' >> corrupt/points.jsonl
cp corrupt/points.jsonl corrupt.before
"$dyncheck" sweep $claim "${grid[@]}" --budget ci --out corrupt --quiet --resume
[ $? -eq 2 ] || fail "a corrupted journal did not exit 2"
cmp corrupt.before corrupt/points.jsonl || fail "resuming a corrupted journal changed it"
# Without --resume an existing journal is refused.
"$dyncheck" sweep $claim "${grid[@]}" --budget ci --out whole --quiet
[ $? -eq 2 ] || fail "an existing journal without --resume did not exit 2"
# Invalid axes exit 2 before any work (no directory created).
for bad in "eta=0:0.2:5" "eta=0.1,0.1" "etax=1" "eta=0.1:0.2" "eta=0.1:0.2:0" "eta=0x1" "batch=1.5"; do
  "$dyncheck" sweep $claim --grid "$bad" --out "bad" --quiet
  [ $? -eq 2 ] || fail "--grid $bad did not exit 2"
  [ ! -e bad ] || fail "--grid $bad created its output directory"
done
"$dyncheck" sweep $claim --grid eta=0.1 --param eta=0.2 --out bad --quiet
[ $? -eq 2 ] || fail "an axis that is also a --param did not exit 2"

if [ -n "$mpiexec" ]; then
  # Root on one host needs these (specs/integration.md); vader: shared memory, no TCP listeners.
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
  start=$(date +%s.%N)
  "$mpiexec" --oversubscribe -n 2 "$dyncheck" sweep $claim "${grid[@]}" --budget ci --out mpi --quiet ||
    fail "mpiexec -n 2 sweep exited $?"
  end=$(date +%s.%N)
  for f in sweep.json sweep.csv sweep.svg; do cmp whole/$f mpi/$f || fail "$f differs between 1 process and 2 ranks"; done
  echo "2 ranks: 12 points in $(awk "BEGIN { printf \"%.2f\", $end - $start }") s (identical files)"

  # One point, fewer points than ranks: the ranks split the point's replicates; identical files.
  one=(--grid eta=0.05 --param batch=4)
  "$dyncheck" sweep $claim "${one[@]}" --budget ci --out one --threads 1 --quiet || fail "one-point sweep exited $?"
  "$mpiexec" --oversubscribe -n 2 "$dyncheck" sweep $claim "${one[@]}" --budget ci --out one_mpi --quiet \
    > one_mpi.log 2>&1 || { cat one_mpi.log; fail "one-point sweep under mpiexec -n 2 exited $?"; }
  cat one_mpi.log
  grep -Eq 'replicates split over 2 ranks in [1-9][0-9]* exchange' one_mpi.log ||
    fail "the one-point sweep under 2 ranks did not split its replicates"
  for f in sweep.json sweep.csv sweep.svg; do cmp one/$f one_mpi/$f || fail "$f differs between 1 process and 2 ranks splitting replicates"; done

  # Kill rank 1 once a few points are journaled: the job must exit non-zero, the journal stays.
  "$mpiexec" --oversubscribe -n 2 "$dyncheck" sweep $claim "${grid[@]}" --budget ci --out rankdied --quiet \
    > rankdied.log 2>&1 &
  pid=$!
  rank1=""
  for _ in $(seq 1 6000); do
    if [ "$(wc -l 2>/dev/null < rankdied/points.jsonl || echo 0)" -ge 3 ]; then
      for p in $(pgrep -f "sweep $claim.*--out rankdied"); do
        if tr '\0' '\n' < /proc/$p/environ 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=1'; then rank1=$p; fi
      done
      [ -n "$rank1" ] && break
    fi
    sleep 0.01
  done
  if [ -n "$rank1" ]; then
    kill -9 "$rank1"
    wait $pid
    status=$?
    if [ $status -eq 0 ] && [ ! -s rankdied/sweep.json ]; then fail "a job whose rank 1 died exited 0 without output"; fi
    if [ $status -ne 0 ]; then
      echo "rank 1 killed: mpiexec exited $status; journal kept with $(($(wc -l < rankdied/points.jsonl) - 1)) points"
    else
      echo "note: the sweep finished before rank 1 was killed"
    fi
    "$dyncheck" sweep $claim "${grid[@]}" --budget ci --out rankdied --quiet --resume || fail "resume after a dead rank exited $?"
    for f in sweep.json sweep.csv sweep.svg; do cmp whole/$f rankdied/$f || fail "$f differs after a dead rank and resume"; done
  else
    wait $pid
    echo "note: rank 1 was not found before the sweep ended; dead-rank case not exercised"
  fi
fi
echo "sweep test passed"
