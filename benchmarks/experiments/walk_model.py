"""A model of the ragged and masked tile walk (fp8_gemm_tiles.cuh, TileScheduler::seek_group) against the
plain walk it replaced (one group per step), on random hostile group sizes, and of the contiguous segments' walk
(seek_segment) against one segment per step, on random expert ids: both must leave the cursor (group, first row,
rows, first tile) in the same state for every tile a CTA visits. The warp's 32 lanes are lists here; the shuffles
are index shifts, the saturating running sums are the kernel's, ballots are bit masks. No GPU needed (NOTES 88, 89).

    python3 benchmarks/experiments/walk_model.py [trials]
"""

import random
import sys

BLOCK_M, TILE_COLS = 128, 3
INT32_MAX, INT32_MIN = 2**31 - 1, -2**31


def m_blocks(rows):
    return -(-rows // BLOCK_M)


class Walk:
    """The cursor: its group, first row (ragged), rows and first tile."""

    def __init__(self, sizes, m, group_m, ragged):
        self.sizes, self.m, self.group_m, self.ragged = sizes, m, group_m, ragged
        self.last = len(sizes) if ragged else len(sizes) - 1  # ragged: the tail segment too
        self.group, self.start, self.first = 0, 0, 0
        self.rows = self.group_rows()

    def group_rows(self):
        g, big = self.group, len(self.sizes)
        if self.ragged:
            left = self.m - self.start
            return left if g >= big else max(0, min(self.sizes[g], left))
        return 0 if g >= big else max(0, min(self.sizes[g], self.group_m))

    def state(self):  # a masked group's first row is group * group_m: `start` counts for ragged only
        return self.group, self.start if self.ragged else 0, self.rows, self.first

    def past_cursor(self, t):
        """True if the cursor's group holds tile t, False past the last group, else None after moving past it (its
        first row and tile; the kernel moves `start` for ragged only, which is all that reads it)."""
        if self.group > self.last:
            return False
        count = m_blocks(self.rows) * TILE_COLS
        if t < self.first + count:
            return True
        self.first += count
        self.start += self.rows
        return None

    def next_group(self):
        self.group += 1
        self.rows = self.group_rows()

    def plain(self, t):
        """The walk before NOTES 88: one group per step."""
        while (found := self.past_cursor(t)) is None:
            self.next_group()
        return found

    def seek(self, t):
        """seek_group: the cursor's group and the next one alone, then windows of 32 groups."""
        for step in range(2):
            if (found := self.past_cursor(t)) is not None:
                return found
            if step == 0:
                self.next_group()
        window = self.group + 1
        while True:
            if window > self.last:
                self.group = self.last + 1
                return False
            cap = self.m - self.start if self.ragged else self.group_m
            own = []
            for lane in range(32):
                g = window + lane
                if g > self.last:
                    own.append(0)
                else:
                    size = self.m if self.ragged and g == len(self.sizes) else self.sizes[g]
                    own.append(max(0, min(size, cap)))
            to_end = own[:]
            if self.ragged:
                for d in (1, 2, 4, 8, 16):  # saturating running sums, as the shuffles form them
                    to_end = [min(to_end[i - d] + to_end[i], cap) if i >= d else to_end[i] for i in range(32)]
            before = [0] + to_end[:31] if self.ragged else [0] * 32
            my_rows = [e - b for e, b in zip(to_end, before)]
            my_tiles = [m_blocks(r) * TILE_COLS for r in my_rows]
            tiles_to_end = my_tiles[:]
            for d in (1, 2, 4, 8, 16):
                tiles_to_end = [tiles_to_end[i - d] + tiles_to_end[i] if i >= d else tiles_to_end[i] for i in range(32)]
            assert all(x < 2**31 for x in tiles_to_end), "a tile sum overflows int32"
            holds = [j for j in range(32) if window + j <= self.last and t < self.first + tiles_to_end[j]]
            if holds:
                j = holds[0]
                self.group, self.rows = window + j, my_rows[j]
                self.first += tiles_to_end[j] - my_tiles[j]
                if self.ragged:
                    self.start += before[j]
                return True
            self.first += tiles_to_end[31]
            if self.ragged:
                self.start += to_end[31]
            window = self.last + 1 if self.last - window < 32 else window + 32


SEGMENT_ROWS, SEGMENT_TILE_BLOCKS = 128, 2  # contiguous segments: 128-row blocks, 256-row tiles


class SegmentWalk:
    """The contiguous cursor: its segment's first row, rows and first tile; keys[b] is block b's expert id (-1 if
    not one), the runs of equal keys are the segments."""

    def __init__(self, keys, m):
        self.keys, self.m, self.blocks = keys, m, len(keys)
        self.start, self.first = 0, 0
        self.rows = self.group_rows()

    def group_rows(self):
        if self.start >= self.m:
            return 0
        b = self.start // SEGMENT_ROWS + 1
        while b < self.blocks and self.keys[b] == self.keys[self.start // SEGMENT_ROWS]:
            b += 1
        return min(b * SEGMENT_ROWS, self.m) - self.start

    def state(self):
        return self.start, self.rows, self.first

    def past_cursor(self, t):
        if self.start >= self.m:
            return False
        count = -(-self.rows // (SEGMENT_ROWS * SEGMENT_TILE_BLOCKS)) * TILE_COLS
        if t < self.first + count:
            return True
        self.first += count
        self.start += self.rows
        return None if self.start < self.m else False

    def plain(self, t):
        """One segment per step (group_rows' rounds), the walk before NOTES 89."""
        while (found := self.past_cursor(t)) is None:
            self.rows = self.group_rows()
        return found

    def seek(self, t):
        """seek_segment: past the cursor's segment, the next 32 blocks' keys at once."""
        while True:
            if (found := self.past_cursor(t)) is not None:
                return found
            first = self.start // SEGMENT_ROWS
            real = [lane < self.blocks - first for lane in range(32)]
            key = [self.keys[first + lane] if real[lane] else -2 for lane in range(32)]
            opens = [lane == 0 or key[lane] != key[lane - 1] for lane in range(32)]
            my_first = [max(j for j in range(lane + 1) if opens[j]) for lane in range(32)]
            starts = [real[lane] and (lane - my_first[lane]) % SEGMENT_TILE_BLOCKS == 0 for lane in range(32)]
            wanted = (t - self.first) // TILE_COLS
            if wanted < sum(starts):
                j = [lane for lane in range(32) if starts[lane] and sum(starts[:lane]) == wanted][0]
                s = my_first[j]
            elif self.blocks - first <= 32:
                self.start = self.m
                return False
            else:
                s = max(j for j in range(32) if opens[j])
            self.first += TILE_COLS * sum(starts[:s])
            self.start = (first + s) * SEGMENT_ROWS
            later = [j for j in range(s + 1, 32) if opens[j]]
            self.rows = min((first + later[0]) * SEGMENT_ROWS, self.m) - self.start if later else self.group_rows()


def hostile_sizes(rng, g, m):
    if rng.random() < 0.3:
        return [rng.choice([rng.randint(-5, 300), rng.randint(0, 3), 0, INT32_MAX, INT32_MIN, rng.randint(0, 1000)])
                for _ in range(g)]
    return [rng.randint(0, 2 * m // g + 1) for _ in range(g)]


def agree(trial, rng, plain, seek, visits):
    """One CTA's visits (a random grid stride: its next tile is that many on) through both walks."""
    stride = rng.randint(1, 140)
    for t in range(rng.randrange(stride), stride * visits, stride):
        found = plain.plain(t)
        assert seek.seek(t) == found, (trial, t)
        if not found:
            break
        assert seek.state() == plain.state(), (trial, t, seek.state(), plain.state())


def main(trials):
    rng = random.Random(1)
    for trial in range(trials):
        g, m, group_m, ragged = rng.randint(1, 150), rng.randint(1, 4000), rng.randint(1, 500), rng.random() < 0.6
        sizes = hostile_sizes(rng, g, m)
        agree(trial, rng, Walk(sizes, m, group_m, ragged), Walk(sizes, m, group_m, ragged), 200)
    for trial in range(trials):
        m, g = rng.randint(1, 12000), rng.randint(1, 40)
        blocks = -(-m // SEGMENT_ROWS)
        run = rng.choice([1, 2, 3, 5, 40])  # mean segment length in blocks
        keys, key = [], rng.randint(-1, g)
        for _ in range(blocks):
            if rng.random() < 1 / run:
                key = rng.choice([rng.randint(-1, g), key + 1, -1])
            keys.append(key)
        agree(trial, rng, SegmentWalk(keys, m), SegmentWalk(keys, m), 300)
    print(f"{trials} draws of each: the walks agree")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3000)
