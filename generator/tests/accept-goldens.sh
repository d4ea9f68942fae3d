#!/bin/sh
# Regenerates cases/<case>/expected/ from the current cubind-gen build, after
# you have reviewed the differences (ctest --output-on-failure shows them).
#
#   generator/tests/accept-goldens.sh            # every case
#   generator/tests/accept-goldens.sh case_enum  # only the named cases
#
# The generator used is $CUBIND_GEN, else generator/build/cubind-gen; build it
# first (ninja -C generator/build). Review with `git diff generator/tests/cases`.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
gen=${CUBIND_GEN:-$root/generator/build/cubind-gen}
if [ ! -x "$gen" ]; then
  echo "accept-goldens: $gen not found: build the generator first (ninja -C generator/build)" >&2
  exit 1
fi
if [ $# -eq 0 ]; then
  set -- $(cd "$here/cases" && for d in */; do [ -f "$d/spec.toml" ] && echo "${d%/}"; done)
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for case in "$@"; do
  case=${case#golden_}
  if [ ! -f "$here/cases/$case/spec.toml" ]; then
    echo "accept-goldens: no case $case (expected $here/cases/$case/spec.toml)" >&2
    exit 1
  fi
  cmake -DGEN="$gen" -DCASE="$here/cases/$case" -DTEMPLATES="$root/generator/templates" \
        -DWORK="$work/$case" -DACCEPT=ON -P "$here/run_case.cmake"
done
