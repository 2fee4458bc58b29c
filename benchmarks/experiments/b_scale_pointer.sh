#!/usr/bin/env bash
# b_scale_pointer.patch: ragged and masked tiles hold each B-scale column block's pointer (group and N block folded)
# as one opaque register pair per tile, so that ptxas cannot rebuild it from the group's offset inside the K loops.
# Why (NOTES 92, offline with k_loop_sass.py): after 6d866b0 the ragged 128 x 192 loop still issues the wgmmas of a K
# block split by ~20 instructions, 64-bit address arithmetic and the B-scale loads between the first and the second;
# dense's loop takes the address in one UIMAD.WIDE. With the patch ragged takes it the same way (183 instructions per
# loop, from 186; dense 179): the loads sit after the first wgmma with ~10 instructions between it and the second.
# SASS of the other modes is unchanged by construction (the asm is in `if constexpr (kWalksGroups)`); every ragged and
# masked kernel moves: 256 x 128 0 to -4 instructions, ragged 128 x 128 -2, 128 x 160 -8, masked 64 x 128 -6, masked
# 128 x 128 -8 to -15 at K = 7168 but +9 at N = 7168, K = 2048 (its loads move before the first wgmma, the wgmmas
# 4-7 instructions apart, from 10 then 3).
# Two device calls (each estimated at under 5 minutes): `tests`, the ragged and masked GPU tests; `rows`, ragged 128 x
# 192 on one dense problem, DeepSeek-V3's ragged and decode rows, the table's contiguous rows with their ragged twins
# and its masked rows, against HEAD, same build, two rounds.
# Predicted: ragged 128 x 192 -1% to -3%; the others within +-1.5%, masked 128 x 128 rows unknown in sign.
#   bash benchmarks/experiments/b_scale_pointer.sh tests|rows
# Measured (NOTES 93, H200, 2026-11-29): ragged 128 x 192 -0.84%, the table's ragged K = 7168 rows +0.84% / +0.93%, its
# masked rows +0.24% to +2.18%: not taken.
. "$(dirname "$0")/ab_headers.sh"
ab_ragged_masked "$(dirname "$0")/b_scale_pointer.patch" "${1:-rows}" bsp "contiguous masked" \
  dsv3_up_4k dsv3_down_4k qwen235_up dsv3_up_dec dsv3_down_dec qwen30_up_dec gptoss_up_dec
