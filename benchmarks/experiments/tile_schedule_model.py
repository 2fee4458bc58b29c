"""A model of the ragged kernel's tile schedule (NOTES 133): what a dynamic schedule would take off the MoE GEMMs.

The kernel hands tiles out in a static round robin: the cluster at index u (of 132 / cluster) takes tiles u, u + units,
u + 2 units, ... of the ragged order (groups in turn, each a banded grid of ceil(rows / 256) x N-block columns, bands
of 16 / cluster columns, M blocks inside a band). A group's last M block is a tail tile of 1-256 rows, which costs
less than a full one but not in proportion (NOTES 124: a one-row tile 0.63-0.70 of a full tile, a 128-row one
~0.71-0.83). With a static round robin the clusters that draw more full tiles set the kernel's time; a dynamic
schedule (each cluster takes the next tile in order when it is free, e.g. from an atomic counter) would balance them.

Each tile costs COSTS[waves] by the count of its 64-row waves with rows: one and two waves between NOTES 124's two
measurements of each, three assumed halfway from two to four (not measured); the makespan is the busiest cluster's
sum. Printed per shape: static and dynamic makespans over the lower bound (the
work spread evenly), and both against the same shape without tails (16 groups of 1024 rows), averaged over multinomial
router draws. NOTES 124 measured the static kernel at +9.2% / +7.5% on a draw (N, K = 4096, 7168 / 7168, 2048) and
+8.7% / +7.9% with one-row tails, which the model should reproduce before its dynamic column is believed.

    python benchmarks/experiments/tile_schedule_model.py [draws]
"""

import heapq
import sys

import numpy as np

BLOCK_M, SMS, BAND_BLOCKS = 256, 132, 16
COSTS = {1: 0.67, 2: 0.78, 3: 0.9, 4: 1.0}  # by 64-row waves with rows


def tile_costs(sizes, n, cluster):
    """The ragged order's tile costs, one per cluster tile."""
    cols, band = n // 128 // cluster, BAND_BLOCKS // cluster
    costs = []
    for rows in sizes:
        m_blocks = -(-rows // BLOCK_M)
        for first in range(0, cols, band):
            width = min(band, cols - first)
            for m in range(m_blocks):
                waves = -(-min(BLOCK_M, rows - m * BLOCK_M) // 64)
                costs += [COSTS[waves]] * width
    return costs


def static_makespan(costs, units):
    loads = np.zeros(units)
    for t, c in enumerate(costs):
        loads[t % units] += c
    return loads.max()


def dynamic_makespan(costs, units):
    free = [(0.0, u) for u in range(units)]
    for c in costs:
        at, u = heapq.heappop(free)
        heapq.heappush(free, (at + c, u))
    return max(at for at, _ in free)


def main():
    draws = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    rng = np.random.default_rng(0)
    print("N, cluster | static / even, dynamic / even | vs 16 x 1024: draw static, dynamic | one-row tails static, "
          "dynamic")
    for n, cluster in [(4096, 2), (7168, 2), (2048, 2)]:
        units = SMS // cluster
        base = static_makespan(tile_costs([1024] * 16, n, cluster), units)
        rows = []
        for _ in range(draws):
            c = tile_costs(rng.multinomial(16384, [1 / 16] * 16), n, cluster)
            even = sum(c) / units
            rows.append((static_makespan(c, units) / even, dynamic_makespan(c, units) / even,
                         static_makespan(c, units) / base, dynamic_makespan(c, units) / base))
        s, d, sb, db = np.mean(rows, axis=0)
        one = tile_costs([1025, 1023] * 8, n, cluster)
        print(f"{n}, {cluster} | {s:.3f}, {d:.3f} | {sb:.3f}, {db:.3f} | "
              f"{static_makespan(one, units) / base:.3f}, {dynamic_makespan(one, units) / base:.3f}")


if __name__ == "__main__":
    main()
