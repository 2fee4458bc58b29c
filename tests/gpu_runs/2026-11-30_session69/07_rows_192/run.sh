# Session 69 call 7: 128 x 192 rows (the model's pick) with the half-width groups off, and in clusters of 2 sharing B
# on all SMs (DeepGEMM's choice at 4096 x 2112 x 7168 by its heuristics), same build, two rounds.
set -uo pipefail
source benchmarks/experiments/ab_headers.sh
python -c "import flatbuffers" 2>/dev/null || python -m pip install -q --no-deps .whl/flatbuffers-*.whl
ab_setup; cp .run4.sh "$OUT/run.sh"
ab_env_rows 2 "4096,2112,7168 2048,7168,7168 8192,2112,7168" model "whole DG_TUNE_SPLIT_HALVES=0" \
  "c2b DG_TUNE_CLUSTER=2 DG_TUNE_MULTICAST_B=1"
rm -f "$OUT/build.log"; (cd "$OUT" && tar czf configs.tgz configs_*.txt && rm -f configs_*.txt)
echo "done $SECONDS s"
