#!/usr/bin/env bash
# A kernel patch's dense rows in one device call: the headers as sent (old) against them with PATCH applied (new),
# alternating, two rounds (dense_rows.py; lines "side rR M N K us TFLOPS"), into $OUT/<patch name>.txt. What a patch
# tries and what it predicts is written at its top (git apply skips text before the first diff).
#   bash benchmarks/experiments/patch_rows.sh benchmarks/experiments/X.patch M,N,K [M,N,K ...]
set -uo pipefail
patch=$1
shift
. benchmarks/experiments/ab_headers.sh
ab_setup
ab_sent
ab_side new "$patch" || exit 1
ab_dense 2 "$@" | tee "$OUT/$(basename "$patch" .patch).txt"
ab_use old
echo "elapsed $((SECONDS - start)) s"
