#!/usr/bin/env bash
# Where ragged's extra consumer cycles come from (NOTES 91). ragged_vs_contiguous.sh found, on the same 128 x 192
# tiles, 16 groups of 500 rows x 3072 x 4096: ragged 1128 consumer cycles per K block at 1526 MHz, contiguous (each
# group padded to 512) 985 at 1447 MHz, with similar waits (12% / 10%) and nearly the same K-loop SASS; register
# stores everywhere did not close the gap. Profiles (DG_PROFILE_WAITS) of:
#  - aligned groups (512 rows: every tile whole, every row0 a multiple of 128) in both modes: the same gap means the
#    ragged kernel's own code; none means the data's placement (partial tiles, unaligned rows);
#  - 500 rows again (the noise between calls) and 508 rows (row0 a multiple of 4: the A-scale box aligned);
#  - 500 rows with every input element 1 (JDG_PROFILE_DATA=const): a gap that moves with the data is power / clock.
# `ragged_gap.sh groups`: whether crossing groups between tiles is the cost: one group of 8192 rows (no crossing) in
# ragged and contiguous, 16 x 512 masked (the same walk as ragged) and the dense kernel on the same 8192 rows.
#   bash benchmarks/experiments/ragged_gap.sh [groups]
. "$(dirname "$0")/prelude.sh"
build
export DG_TUNE_BLOCK_M=128 DG_TUNE_BLOCK_N=192 DG_PROFILE_WAITS=1 DG_PRINT_CONFIGS=1 JDG_PROFILE_RUNS=10
profile() {  # label, op, shape, [env]
  echo "## $1"
  env "${@:4}" timeout -k 5 90 python tools/profile_one.py "$2" "$3" 2>&1 | grep -vE "^(W|I)[0-9]{4}|absl"
}
if [ "${1:-}" = groups ]; then
  {
    profile "ragged 1x8192" ragged 1,8192,3072,4096
    profile "contiguous_padded 1x8192" contiguous_padded 1,8192,3072,4096
    profile "ragged 16x512" ragged 16,512,3072,4096
    profile "contiguous_padded 16x512" contiguous_padded 16,512,3072,4096
    profile "masked 16x512" masked 16,512,3072,4096,512,512
    profile "dense 8192" dense 8192,3072,4096
  } >"$OUT/waits.log"
  python tools/waits_summary.py <"$OUT/waits.log" | tee "$OUT/waits_summary.txt"
  exit
fi
{
  for rows in 512 500; do
    profile "contiguous_padded 16x$rows" contiguous_padded 16,$rows,3072,4096
    profile "ragged 16x$rows" ragged 16,$rows,3072,4096
  done
  profile "ragged 16x508" ragged 16,508,3072,4096
  profile "contiguous_padded 16x500 const" contiguous_padded 16,500,3072,4096 JDG_PROFILE_DATA=const
  profile "ragged 16x500 const" ragged 16,500,3072,4096 JDG_PROFILE_DATA=const
} >"$OUT/waits.log"
python tools/waits_summary.py <"$OUT/waits.log" | tee "$OUT/waits_summary.txt"
