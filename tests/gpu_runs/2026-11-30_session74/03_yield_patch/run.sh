set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/machine.txt; date -u | tee -a $OUT/machine.txt
only=tall-ss,tall-q-ss,tall-q-c1,tall-q-c2,tall-q-c4,tall-q-r
for round in 1 2; do
  for b in a_reuse_ring a_reuse_ring_yield; do
    echo "== $b round $round" | tee -a $OUT/ring_yield.txt
    timeout 120 benchmarks/experiments/$b.bin only $only 2>&1 | tee -a $OUT/ring_yield.txt | grep -E "yes|check"
  done
done
