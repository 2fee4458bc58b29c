#!/usr/bin/env bash
# session 78, call 5: dense GEMMs with 1x128 B scales (the weight gradients' kind), bf16 and f32 out: the model's
# tile width (256-row tiles of 96 / 112 columns on most of these shapes) against every 256-row width forced, HEAD's
# package, two rounds. Shapes: the first eight the model's picks listed on the CPU, the last four held out.
set -u
cp .run5.sh "$OUT/run.sh"
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1 DG_JIT_CACHE_DIR=/tmp/c5
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee $OUT/machine.txt
t0=$(date +%s); T() { echo "t $(( $(date +%s) - t0 )) s $*"; }
python -m pip install -q --no-build-isolation --no-deps --target /tmp/pkg . > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
T build
P=$PWD/benchmarks/experiments
SHAPES="7168,2048,8192 2048,7168,8192 7168,2048,4096 7168,1536,8192 4096,1536,8192 7168,3072,8192 7168,2112,8192"
SHAPES="$SHAPES 4096,2048,16384 7168,4096,8192 2048,2048,16384 5120,1536,4096 3072,7168,8192"
VARIANTS="pick N96 N112 N128 N144 N160"
run_variant() {  # variant, out kind ("" or out=f32), then dense_rows.py's output with both in front
  local v=$1 o=$2 env=()
  [ "$v" != pick ] && env=(DG_TUNE_BLOCK_M=256 DG_TUNE_BLOCK_N=${v#N})
  ( cd /tmp && env "${env[@]}" PYTHONPATH=/tmp/pkg timeout -k 5 100 python $P/dense_rows.py b=rows $o $SHAPES 2>&1 |
      grep " us " | sed "s/^/$v ${o:-bf16} /" )
}
for o in "" out=f32; do for v in $VARIANTS; do run_variant $v "$o" > /dev/null & done; done; wait
T compiles
for round in 1 2; do
  for o in "" out=f32; do for v in $VARIANTS; do run_variant $v "$o" | sed "s/^/r$round /" >> $OUT/rows.txt; done; done
  T round $round
done
python - "$OUT/rows.txt" <<'PY' | tee $OUT/summary.txt
import collections, sys
t = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()  # r1 N128 bf16 m n k [out=f32] us us TFLOPS
    us = float(f[f.index("us") - 1])
    t[(f[2], f[3], f[4], f[5]), f[1]].append(us)
keys = sorted({k for k, _ in t})
for k in keys:
    pick = sum(t[k, "pick"]) / len(t[k, "pick"])
    row = [f"{'x'.join(k[1:])} {k[0]:5s} pick {pick:8.1f}"]
    for v in ("N96", "N112", "N128", "N144", "N160"):
        if t.get((k, v)):
            us = sum(t[k, v]) / len(t[k, v]); row.append(f"{v} {us:8.1f} ({100 * (us / pick - 1):+5.1f}%)")
    print("  ".join(row))
PY
