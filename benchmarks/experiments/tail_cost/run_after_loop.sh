#!/usr/bin/env bash
# NOTES 27's addendum: the exchange out of the consumers' tile loop (exchange_after_loop.patch: the loop runs whole
# tiles only, a tail split's half tile, always a CTA's last, runs after it with the exchange). One device call each:
#   bash benchmarks/experiments/tail_cost/run_after_loop.sh tests   the patched kernel's tail-split, split-K and
#                                                                   masked GPU tests (four processes)
#   bash benchmarks/experiments/tail_cost/run_after_loop.sh ab      same-run A/B, patched / committed kernel headers
#       alternating, two rounds: three dense rows with the tail split forced on, the masked rows as the model picks
#       them (tail split at K >= 4096) and with it forced on (K = 2048 too)
#   bash benchmarks/experiments/tail_cost/run_after_loop.sh grouped the same A/B on the contiguous and ragged rows
#       (the 128-row ragged kernels' SASS moved a little with the patch; no tail split there)
set -uo pipefail
OUT="${OUT:-./gpu-out}"; mkdir -p "$OUT"
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
here=benchmarks/experiments/tail_cost
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/machine.txt"
python -m pip install --no-build-isolation -e . >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
# The committed headers are copied rather than checked out: the device copy's git HEAD may lag the working tree.
rm -rf /tmp/committed_cuda && cp -r cuda /tmp/committed_cuda
git apply "$here/exchange_after_loop.patch" || { echo "patch does not apply"; exit 1; }
phase="${1:-tests}"
t() {
  DG_JIT_CACHE_DIR=/tmp/jdg-cache-new timeout -k 5 240 python -I -m pytest "$@" -q -rs -p no:cacheprovider 2>&1 |
    grep -v -E "^E[0-9]{4} |^$"
}
if [ "$phase" = tests ]; then
t tests/test_gpu_configs.py -k "tail_split and (bm128 or bm64)" >"$OUT/t_tail1.log" &
t tests/test_gpu_configs.py -k "tail_split and bm256" >"$OUT/t_tail2.log" &
t tests/test_gpu_configs.py -k "split_k" >"$OUT/t_splitk.log" &
t tests/test_gpu_grouped.py tests/test_gpu_configs.py -k "masked and not tail_split" >"$OUT/t_masked.log" &
wait
for f in "$OUT"/t_*.log; do echo "$(basename "$f"): $(tail -1 "$f")"; grep -E "^FAILED|^ERROR" "$f" | head -5; done
rm -rf cuda && cp -r /tmp/committed_cuda cuda
exit 0
fi
rm -rf /tmp/after_loop_cuda && cp -r cuda /tmp/after_loop_cuda
for round in 1 2; do
  for kernel in new old; do
    rm -rf cuda
    if [ "$kernel" = new ]; then cp -r /tmp/after_loop_cuda cuda; else cp -r /tmp/committed_cuda cuda; fi
    export DG_JIT_CACHE_DIR="/tmp/jdg-cache-$kernel"
    if [ "$phase" = grouped ]; then
      timeout -k 5 200 python benchmarks/experiments/grouped_rows.py contiguous 2>&1 | grep -E " us " |
        sed "s/^/$kernel /"
      continue
    fi
    DG_TUNE_TAIL_SPLIT=1 timeout -k 5 120 python -m jax_deepgemm bench --only dense --iters 20 \
      --output "/tmp/dense_$kernel.json" --shape 4096,7168,2048 --shape 4096,24576,1536 --shape 4096,32768,512 2>&1 |
      grep -E "^ +[0-9]" | sed "s/^/$kernel tail=1 /"
    for tail in "" 1; do
      env ${tail:+DG_TUNE_TAIL_SPLIT=$tail} timeout -k 5 120 python benchmarks/experiments/grouped_rows.py masked 2>&1 |
        grep -E " us " | sed "s/^/$kernel tail=${tail:-model} /"
    done
  done
done 2>&1 | tee "$OUT/ab_$phase.txt"
rm -rf cuda && cp -r /tmp/committed_cuda cuda
