# The two commands of README.md. Both install missing Debian packages first
# (scripts/install-deps.sh; as root it runs apt-get, otherwise it prints the command).
JOBS ?= $(shell nproc)
BUDGET ?= ci

.PHONY: all deps test report coverage build-ci build-release clean

all: test

deps:
	scripts/install-deps.sh

build-ci: deps
	cmake --preset ci
	cmake --build --preset ci -j $(JOBS)

# Builds with warnings as errors and runs the whole ctest suite ($(JOBS) tests at a time; results
# do not depend on it): unit and property tests,
# every claim at the ci budget, every mutant (must FAIL), golden report, install + find_package.
test: build-ci
	ctest --preset ci --parallel $(JOBS)

build-release: deps
	cmake --preset release
	cmake --build --preset release -j $(JOBS) --target dyncheck

# Runs every claim and its mutants at $(BUDGET), and each family's assumption-breaking sweeps;
# writes reports/latest/{REPORT.md,report.json,claims/,plots/,sweeps/}. The data step fetches the Brown
# corpus for the real-text claims (scripts/fetch-corpus.sh; a no-op when it is already there).
report: build-release
	scripts/fetch-corpus.sh || echo "dyncheck: warning: no Brown corpus; the real-text claims will be ERROR" >&2
	build/release/reports/dyncheck report --budget $(BUDGET) --sweeps --out reports/latest

# Line and branch coverage of theory/ and sim/ by the claims at ci and the unit tests (gcovr), and
# the functions nothing executes (scripts/coverage.sh); fails when one of them is in theory/.
# Builds only what it runs (target coverage_build: the dyncheck CLI and the tests of tests/theory,
# tests/sim, tests/checks).
coverage: deps
	cmake --preset coverage
	cmake --build --preset coverage -j $(JOBS) --target coverage_build
	JOBS=$(JOBS) scripts/coverage.sh

clean:
	rm -rf build reports/latest
