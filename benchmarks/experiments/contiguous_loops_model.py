"""K loops per CTA of the contiguous kernel's 256-row tiles under the static round robin (benchmarks/NOTES.md 63): the
fixed grid (a tile holding two experts' rows takes two passes) against the segment walk (a segment's tiles start at
its first row), for the table's group-size draws. Clusters of 2: 66 tile slots over 132 SMs, bands of 8 columns.

    python benchmarks/experiments/contiguous_loops_model.py
"""

import numpy as np

SLOTS, BAND = 66, 8


def tile_m_block(t, m_blocks, cols):
    """The M block of tile t in the banded order (fp8_gemm_tiles.cuh, tile_coords)."""
    band = t // (m_blocks * BAND)
    width = min(BAND, cols - band * BAND)
    return (t - band * m_blocks * BAND) // width


def fixed_grid_loops(rows, cols):
    padded = [-(-r // 128) * 128 for r in rows]
    ids = np.concatenate([np.r_[np.full(r, e), np.full(p - r, -1)] for e, (r, p) in enumerate(zip(rows, padded))])
    m_blocks = -(-len(ids) // 256)
    passes = [max(len(set(ids[256 * i:256 * (i + 1)].tolist()) - {-1}), 1) for i in range(m_blocks)]
    loops = np.zeros(SLOTS)
    for t in range(m_blocks * cols):
        loops[t % SLOTS] += passes[tile_m_block(t, m_blocks, cols)]
    return loops.max()


def segment_loops(rows, cols):
    tiles = sum(-(-(-(-r // 128) * 128) // 256) * cols for r in rows)
    return -(-tiles // SLOTS)


rng = np.random.default_rng(1)
for g, per_group, n in [(4, 8192, 4096), (4, 8192, 7168), (8, 4096, 4096), (8, 4096, 7168)]:
    cols = n // 128 // 2
    ratio = np.array([segment_loops(rows, cols) / fixed_grid_loops(rows, cols)
                      for rows in ([int(per_group * rng.uniform(0.7, 1.3)) for _ in range(g)] for _ in range(60))])
    print(f"{g} x {per_group} x N {n}: segments / fixed grid mean {ratio.mean():.4f}, min {ratio.min():.3f}, "
          f"max {ratio.max():.3f}, fewer loops on {(ratio < 1).sum()} of 60 draws")
