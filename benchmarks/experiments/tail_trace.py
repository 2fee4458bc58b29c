"""Where a ragged group's one-row last tile spends its K blocks (NOTES 124 left this open): the profile build's
timeline (DG_PROFILE_WAITS) of CTAs 0 and 1, whose first tile is such a tile, against their later, full tiles.

Group sizes [1, 1023, 1024 x 14] (M = 16384, G = 16, the MoE step's shape and kernel): group 0's tiles, the first
of the walk, hold one row each, so the traced CTAs (a cluster pair) start with one.

    DG_PROFILE_WAITS=1 python benchmarks/experiments/tail_trace.py run [N,K] > trace.log
    python benchmarks/experiments/tail_trace.py summarize < trace.log

summarize: per traced CTA and tile, the K blocks traced and, for each warpgroup's waves that ran, the medians of the
K block's period (one wgmma issue to the next of wave 0), issue -> done, done -> promoted, and promoted -> the next
issue (the wait for the next stage and the loop's own work); then the CTAs' "waits" records (consumer cycles waited on
full stages, producer cycles on empty ones).
"""

import collections
import statistics
import sys

from wave_trace import last_launch  # (this folder)

BOUNDARY_KB = 253  # K blocks 253-255: the tile-boundary events (tile_gaps.py), not K-loop ones


def run(spec: str) -> None:
    import jax
    import jax.numpy as jnp

    from jax_deepgemm import fp8_grouped_gemm_nt, per_block_cast_to_fp8, per_token_cast_to_fp8

    n, k = (int(v) for v in spec.split(","))
    m, g = 16384, 16
    sizes = jnp.asarray([1, 1023] + [1024] * 14, jnp.int32)
    a = jax.jit(per_token_cast_to_fp8)(jax.random.normal(jax.random.key(0), (m, k), jnp.bfloat16))
    b = jax.jit(jax.vmap(per_block_cast_to_fp8))(jax.random.normal(jax.random.key(1), (g, n, k), jnp.bfloat16))
    gemm = jax.jit(fp8_grouped_gemm_nt)
    for _ in range(3):  # the last launch's timeline is summarized
        jax.block_until_ready(gemm(a, b, sizes))


def summarize(lines) -> None:
    lines = list(lines)
    launch = last_launch(lines)
    med = lambda xs: f"{statistics.median(xs):.0f}" if xs else "-"  # noqa: E731
    for cta in sorted({c for c, _ in launch}):
        events = collections.defaultdict(dict)  # (tile, wg, wave) -> {(kb, kind): cycles}
        for wg in (0, 1):
            for t, tag in launch.get((cta, wg), []):
                tile, kb, wave, kind = tag // 4096, (tag // 16) % 256, (tag // 4) % 4, tag % 4
                if kb < BOUNDARY_KB and kind < 3:
                    events[tile, wg, wave][kb, kind] = t
        for tile in sorted({key[0] for key in events}):
            row = []
            for wg in (0, 1):
                for wave in (0, 1):
                    ev = events.get((tile, wg, wave))
                    if not ev:
                        continue
                    kbs = sorted({kb for kb, _ in ev if all((kb, x) in ev for x in (0, 1, 2))})
                    inner = kbs[1:-1]  # the first and last K blocks carry the tile's boundary
                    period = [ev[kb + 1, 0] - ev[kb, 0] for kb in inner if (kb + 1, 0) in ev]
                    row.append(f"wg{wg}.w{wave}: {len(kbs)} K blocks, period {med(period)}, issue->done "
                               f"{med([ev[kb, 1] - ev[kb, 0] for kb in inner])}, done->promoted "
                               f"{med([ev[kb, 2] - ev[kb, 1] for kb in inner])}, promoted->next issue "
                               f"{med([ev[kb + 1, 0] - ev[kb, 2] for kb in inner if (kb + 1, 0) in ev])}")
            print(f"cta {cta} tile {tile}: " + ("; ".join(row) if row else "no K-loop events"))
    for line in lines:
        if "jax_deepgemm waits: cta 0 " in line or "jax_deepgemm waits: cta 1 " in line:
            print(line.strip())


if __name__ == "__main__":
    if sys.argv[1:2] == ["run"]:
        run(sys.argv[2] if len(sys.argv) > 2 else "4096,7168")
    elif sys.argv[1:2] == ["summarize"]:
        summarize(sys.stdin)
    else:
        sys.exit(__doc__)
