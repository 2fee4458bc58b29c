set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/machine.txt; date -u | tee -a $OUT/machine.txt
only=tall-ss,tall-q-ss,tall-q-c1,tall-q-c4,tall-q-r
for round in 1 2; do
  for b in a_reuse_ring a_reuse_ring_p2 a_reuse_ring_p3 a_reuse_ring_p4; do
    echo "== $b round $round" | tee -a $OUT/ring_period.txt
    timeout 120 benchmarks/experiments/$b.bin only $only 2>&1 | tee -a $OUT/ring_period.txt > /dev/null
  done
done
