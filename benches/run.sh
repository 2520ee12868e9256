#!/bin/sh
# The full timed benchmark run (about 4 minutes on 2 cores) and its markdown report.
# Extra arguments go to pytest, e.g. `benches/run.sh -k step-1`. Run from anywhere.
set -eu
cd "$(dirname "$0")/.."
mkdir -p .benchmarks
python -m pytest benches --benchmark-only --benchmark-json=.benchmarks/run.json \
    --benchmark-columns=min,median,mean,stddev,rounds --benchmark-group-by=group \
    --benchmark-warmup=on --benchmark-disable-gc "$@"
python benches/report.py .benchmarks/run.json
