#!/usr/bin/env bash
# a_scale_index.patch: ragged and masked 128- and 64-row passes read their A scales at an index computed once per
# tile, row0 & 3 included (pass_a_scales), instead of adding row0 & 3 (known at run time only there) to the stage's
# address inside the K loops (NOTES 91). Why: on the same 128 x 192 tiles and one group, the ragged kernel ran 8-9%
# longer than the dense and contiguous ones (dense_as_grouped.sh), whose K loops are the same source.
# Session 51 ran a wider form (6c8e57f's script, the change applied in every pass and the two-wave loop): ragged
# 128 x 192 -3.4%, ragged 256 x 128 rows and the table's masked rows within +-0.8%; ragged and masked GPU tests
# passed (28 + 102). It was not landed, as it also moved dense and contiguous K loops that were not timed. This form
# leaves the SASS of every dense, contiguous and k-grouped kernel of the benchmark table as it was, and ragged's
# and masked's 256-row ones (cuobjdump over the table's 36 kernels); its ragged 128 x 192 kernel's SASS is the wider
# form's. It moves the masked 128- and 64-row kernels and ragged's 128-row ones (DeepSeek-V3 layers at 4k tokens).
# This script, in two device calls (each estimated at under 10 minutes): `tests`, the ragged and masked GPU tests;
# `rows`, those rows against HEAD, same build, two rounds.
# Predicted: ragged 128 x 192 -3.4% again; DeepSeek-V3's ragged rows and the masked rows within +-1.5%.
#   bash benchmarks/experiments/a_scale_index.sh tests|rows
# Run in session 52 (NOTES 92): ragged 128 x 192 -4.1%, the other rows -1.7% to +0.5%, tests passed; landed in
# 6d866b0. Since then HEAD has the patch and both sides would be the same: check out 596fd8a to repeat this.
. "$(dirname "$0")/ab_headers.sh"
ab_ragged_masked "$(dirname "$0")/a_scale_index.patch" "${1:-rows}" idx masked \
  dsv3_up_4k dsv3_down_4k dsv3_up_dec dsv3_down_dec qwen30_up_dec gptoss_up_dec
