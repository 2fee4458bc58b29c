// Part of fp8_gemm.cuh (included after fp8_gemm_config.cuh): which tiles a CTA takes and in what order. The banded
// tile order, the scheduler that the producer and the consumers run identically, each mode's walk over the device
// data, and the contiguous mode's passes per expert.
#pragma once

namespace jdg {
namespace fp8_gemm {

// Tile t of a grid of num_m_blocks x kNumTileCols -> (m_block, n_block) in banded order; identical in the producer
// and the consumers. With a cluster, t numbers the cluster's tiles: its CTA of rank r takes N block
// kCluster * column + r (kMulticastB: the caller pairs M blocks instead; column = N block).
__device__ __forceinline__ void tile_coords(int t, int num_m_blocks, int rank, int& m_block, int& n_block) {
  const int tiles_per_band = num_m_blocks * kBandN;
  const int band = t / tiles_per_band;
  const int first_col = band * kBandN;
  const int band_width = kNumTileCols - first_col < kBandN ? kNumTileCols - first_col : kBandN;
  const int in_band = t - band * tiles_per_band;
  m_block = in_band / band_width;
  n_block = kMulticastB ? first_col + in_band % band_width : (first_col + in_band % band_width) * kCluster + rank;
}

// One output tile: rows [row0, row0 + rows) of A (rows <= BLOCK_M are the tile's own, stored ones; the A box
// always holds BLOCK_M rows from row0), stored to D rows from d_row0 (row0 but for k-grouped), columns of N block
// n_block, multiplied with group `group`'s B (dense, k-grouped: 0; contiguous: decided per pass, see expert ids
// below; ragged tail: -1, nothing is loaded and zeros are stored) over K blocks [kb0, kb0 + num_kb). shared_a: the
// cluster's CTAs take the same rows, each loading half of the A tile for both (false without a cluster, and for the
// lone column's tiles, see kLoneColumn, and with kMulticastB). rows <= 0: a tile past M that stores nothing (the
// second of a pair along M: kLoneColumn, kMulticastB).
// part: -1, or (tail split) which half of the tile's K blocks this CTA of the pair takes.
struct Tile {
  int row0, rows, n_block, group, d_row0, kb0, num_kb, part;
  bool shared_a;
};

// body(tile), where a tile that is not a tail split's half has its K range as compile-time constants: the K loops
// of whole tiles then compile to nearly the instructions they have without the tail split (SASS: 216 against 215 per
// K block of the two-wave loop; a runtime K start added a signed modulo), and a split half takes a second copy. It
// did not remove the ~0.5 us per tile that tail-split kernels lose on an H200 (NOTES 27): that cost is elsewhere.
template <typename Body>
__device__ __forceinline__ void with_k_range(const Tile& tile, Body&& body) {
  if (kTailSplit && tile.part < 0) {
    Tile whole = tile;
    whole.kb0 = 0;
    whole.num_kb = kNumKBlocks;
    body(whole);
  } else {
    body(tile);
  }
}

// The tile's K blocks: split K's part-th run, a tail split's half (tile.part >= 0), or all of them (compile-time
// constants there, which the K loops' code depends on: see with_k_range).
__device__ __forceinline__ void set_k_blocks(Tile& tile, int part) {
  if constexpr (kSplitK > 1) {  // the part-th of kSplitK near-equal runs of the K blocks
    tile.kb0 = part * kNumKBlocks / kSplitK;
    tile.num_kb = (part + 1) * kNumKBlocks / kSplitK - tile.kb0;
  } else if (kTailSplit && tile.part >= 0) {  // (K > 128: both halves have K blocks)
    tile.kb0 = tile.part * kNumKBlocks / 2;
    tile.num_kb = (tile.part + 1) * kNumKBlocks / 2 - tile.kb0;
  } else {
    tile.kb0 = 0;
    tile.num_kb = kNumKBlocks;
  }
}

// ceil(rows / BLOCK_M) without forming rows + BLOCK_M - 1 (rows may be close to 2^31).
__device__ __forceinline__ int m_blocks_of(int rows) { return rows / kBlockM + (rows % kBlockM != 0); }

// Contiguous segments (kContiguousSegments): the 128-row blocks of M, and the expert id of block b's first row, -1 if
// it is not in [0, G).
__device__ __forceinline__ int segment_blocks(const Fp8GemmArgs& args) {
  return args.m / kSegmentBlockRows + (args.m % kSegmentBlockRows != 0);
}

__device__ __forceinline__ int segment_key(const Fp8GemmArgs& args, int block) {
  const int id = ptx::ldg_s32(args.groups + static_cast<long long>(block) * kSegmentBlockRows);
  return (id >= 0 && id < args.num_groups) ? id : -1;
}

// JDG_DYNAMIC_TILES: the module's counters, zero at load, a pair per call site (Fp8GemmArgs::tile_queue): the tiles
// handed out past the first round, and the clusters done fetching. The last cluster resets both, so that the call
// site's next launch starts from zero. (One call site's launches run in stream order; two launches of one call site
// at once, on two streams, would share its pair.)
__device__ unsigned int jdg_fp8_gemm_tile_counters[kFp8GemmTileQueues][2];

// JDG_DYNAMIC_TILES: a cluster takes tile c of the first round (c = its index), then, each time its tile ids' warps
// (TileIds) are free to publish the next tile, the next index of the counter: CTA 0's warp takes it and, in a cluster
// of 2, hands it to CTA 1's through kTileSlots slots of shared memory (slot i % kTileSlots holds the cluster's tile
// i + 1; indices increase, as the scheduler's cursor needs). The tile ids' warp runs a tile ahead of the readers, so
// the counter's round trip delays no copy; a warp taking the indices for the cluster's readers (until NOTES 144-147)
// took them another tile ahead of their start, holding each cluster's tiles longer from the others, and taken by the
// producer warp the atomic followed the tile's expert-id loads (benchmarks/NOTES.md 138).
//  - full[s], in CTA 1, completes on CTA 0's st.async bytes and CTA 1's arrival expecting them.
//  - empty[s], in CTA 0, completes on CTA 1's warp's arrival once it read slot s.
struct TileQueue {
  unsigned int full, empty, slots;  // shared addresses: kTileSlots barriers each, kTileSlots ints
  unsigned int* counters;           // the call site's pair of jdg_fp8_gemm_tile_counters

  __device__ void init() const {
    // (alone in its cluster: no slot, and no arrivals for its barriers to count)
    for (int s = 0; kTileCtas == 2 && s < kTileSlots; ++s) {
      ptx::mbarrier_init(full + 8 * s, 1);
      ptx::mbarrier_init(empty + 8 * s, 1);
    }
  }

  // CTA 0's tile ids' warp (every lane), once CTA 1's took tile i + 1 - kTileSlots: tile i + 1 from the counter, into
  // CTA 1's slot i % kTileSlots. Returns the tile. The warp waits as one and one lane is elected for the rest (not a
  // branch on the lane id), so that ptxas sees the warp's tile walk warp-uniform.
  __device__ int publish(int i, int first_index) const {
    const int s = i % kTileSlots;
    if constexpr (kTileCtas == 2)
      ptx::mbarrier_wait_warp(empty + 8 * s, ((i / kTileSlots) & 1) ^ 1u);  // a fresh barrier passes at once
    unsigned int t = 0;
    if (ptx::elect_one_sync()) {
      // Past the last tile by at most one index per cluster (each one's last fetch), held at 2^31 - 1, past every
      // tile (tiles < 2^31, checked by the host), so that the index stays a non-negative int.
      t = min(static_cast<unsigned int>(first_index) + atomicAdd(&counters[0], 1u), 0x7FFFFFFFu);
      if constexpr (kTileCtas == 2)
        ptx::st_async_b32(ptx::cluster_smem_addr(slots + 4 * s, 1), t, ptx::cluster_smem_addr(full + 8 * s, 1));
    }
    __syncwarp();
    return ptx::redux_max(static_cast<int>(t));
  }

  // CTA 1's tile ids' warp (every lane): the cluster's tile i + 1. It arms its full barrier for the st.async bytes and
  // waits as one (mbarrier_wait_warp), so that ptxas keeps the index in uniform registers.
  __device__ int read(int i, int lane) const {
    const int s = i % kTileSlots;
    if (lane == 0) ptx::mbarrier_arrive_expect_tx(full + 8 * s, 4);
    __syncwarp();
    ptx::mbarrier_wait_warp<true>(full + 8 * s, (i / kTileSlots) & 1);
    const int t = static_cast<int>(ptx::ld_shared_b32(slots + 4 * s));
    __syncwarp();
    if (lane == 0) ptx::mbarrier_arrive_cluster(empty + 8 * s, 0);
    return t;
  }

  // CTA 0's tile ids' warp's lane 0 after its last fetch: one more cluster done; the last one resets the counters.
  __device__ void finish(unsigned int clusters) const {
    __threadfence();
    if (atomicAdd(&counters[1], 1u) == clusters - 1) {
      atomicExch(&counters[0], 0u);
      atomicExch(&counters[1], 0u);
    }
  }
};

// Maps the tile indices a CTA visits (increasing) to tiles. Dense and contiguous: the banded order over the whole
// [M, N] grid. Ragged and masked: groups in order, each a banded grid of ceil(rows_g / BLOCK_M) x N blocks; a cursor
// keeps the group of the last tile, so a CTA reads every group's size once (O(G + tiles) per CTA), 32 at a time where
// it passes more than one group between tiles (seek_group). Contiguous with 256-row tiles and JDG_CONTIGUOUS_SEGMENTS
// (the host's choice over long K, heuristics.cc step 11): the same walk over segments, the runs of 128-row blocks whose
// first rows have the same expert id. A fixed grid of 256-row tiles puts every expert boundary that is not a multiple
// of 256 inside a tile, which then takes two passes (first_pass) with one warpgroup idle in each; a static round robin
// makes the CTAs holding such tiles the kernel's critical path (one more K loop: +3.4-3.9% on a 4-group draw,
// NOTES 63). A segment's tiles start at its first row, like a ragged group's, and its last one may own only 128 rows.
// Any ids are still fine: a tile's passes come from its own rows' ids, the keys only place the tiles (and every row of
// [0, M) is some tile's own).
struct TileScheduler {
  int rank = 0;                 // the CTA's rank in its multicast pair (0 without one)
  int part = 0;                 // split K: the CTA's run of each tile's K blocks (its rank in the cluster)
  int group = 0;                // the cursor's group (ragged: G is the zero tail)
  int start = 0;                // ragged: the group's first row
  int rows = 0;                 // the group's rows (clamped)
  int first_tile = 0;           // index of the group's first tile (tiles < 2^31: checked by the host)
  int num_tiles = 0;            // tail split: the problem's tiles
  static constexpr int kNoSplit = 0x7FFFFFFF;  // past every tile
  int split_from = kNoSplit;    // tail split: the first tile of the last round if it is split

  // Warp-collective (tail split). `lane`: the thread's lane.
  __device__ __forceinline__ void init(const Fp8GemmArgs& args, int cta_rank, int k_part, int lane) {
    rank = cta_rank;
    if constexpr (kSplitK > 1) part = k_part;
    group = 0;
    start = 0;
    first_tile = 0;
    if constexpr (kWalksGroups || kContiguousSegments) rows = group_rows(args);
    if constexpr (kKGrouped) rows = segment_length(args);  // k-grouped: `start` and `rows` count K columns
    if constexpr (kTailSplit) plan_tail(args, lane);
  }

  // Tail split: whether this CTA's pair takes a tile of the split last round (and so exchanges a partial tile).
  __device__ __forceinline__ bool pair_exchanges() const {
    return split_from != kNoSplit && static_cast<int>(blockIdx.x) / 2 < num_tiles - split_from;
  }

  // Tail split: the problem's tiles (masked: from every group's masked_m, the warp's lanes taking every 32nd group),
  // and whether the last round is short enough to split: at most half the grid's CTAs, so that each takes half of
  // a tile with its cluster partner. Warp-collective; tiles < 2^31 (checked by the host).
  __device__ __forceinline__ void plan_tail(const Fp8GemmArgs& args, int lane) {
    int m_blocks;
    if constexpr (kMode == kFp8GemmMasked) {
      m_blocks = 0;
      for (int g = lane; g < args.num_groups; g += 32) {
        const int size = ptx::ldg_s32(args.groups + g);
        m_blocks += m_blocks_of(size <= 0 ? 0 : (size < args.group_m ? size : args.group_m));
      }
      m_blocks = ptx::redux_add(m_blocks);
    } else {
      m_blocks = m_blocks_of(args.m);
    }
    num_tiles = m_blocks * kNumTileCols;
    const int grid = static_cast<int>(gridDim.x);
    const int whole_rounds = num_tiles / grid * grid;
    const int left = num_tiles - whole_rounds;
    if (left > 0 && 2 * left <= grid) split_from = whole_rounds;
  }

  // K-grouped: the cursor group's segment length, max(size, 0) cut at K - start (no overflow: start <= K).
  __device__ __forceinline__ int segment_length(const Fp8GemmArgs& args) const {
    if (group >= args.num_groups) return 0;
    const int size = ptx::ldg_s32(args.groups + group);
    const int left = kK - start;
    return size <= 0 ? 0 : (size < left ? size : left);
  }

  // K-grouped: group-major over full M x N grids; the cursor walks the segments to tile t's group.
  __device__ __forceinline__ bool get_k_grouped(int t, const Fp8GemmArgs& args, Tile& tile) {
    const int num_m_blocks = m_blocks_of(args.m);
    const int tiles_per_group = num_m_blocks * kNumTileCols;
    if (t >= tiles_per_group * args.num_groups) return false;  // < 2^31: checked by the host
    while (t >= first_tile + tiles_per_group) {
      first_tile += tiles_per_group;
      start += rows;
      ++group;
      rows = segment_length(args);
    }
    int m_block;
    tile_coords(t - first_tile, num_m_blocks, rank, m_block, tile.n_block);
    tile.shared_a = kCluster > 1;
    const int left = args.m - m_block * kBlockM;
    tile.row0 = m_block * kBlockM;
    tile.rows = left < kBlockM ? left : kBlockM;
    tile.group = 0;
    tile.d_row0 = group * args.m + tile.row0;  // G * M < 2^31: checked by the host
    // The 128-wide K blocks the segment [start, start + rows) touches (start + rows <= K).
    tile.kb0 = start / kBlockK;
    tile.num_kb = rows == 0 ? 0 : (start + rows + kBlockK - 1) / kBlockK - tile.kb0;
    return true;
  }

  // Rows of the cursor's group. Ragged: max(size, 0) cut at M - start (no overflow: start <= M); the tail segment
  // (group == G) runs to M. Masked: clamp(masked_m, 0, group_m). Contiguous segments: from `start` (a multiple of
  // 128, < M, or M: none) to the first later block whose key differs, or M; warp-collective (128 keys per round trip).
  __device__ __forceinline__ int group_rows(const Fp8GemmArgs& args) const {
    if constexpr (kContiguousSegments) {
      if (start >= args.m) return 0;
      const int blocks = segment_blocks(args);
      const int first = start / kSegmentBlockRows;
      const int lane = static_cast<int>(ptx::lane_id());
      constexpr int kNone = 0x7FFFFFFF, kLoads = 4;  // keys per lane and round: one memory round trip per 128 blocks
      int key = 0, end = kNone;                       // the segment's key (block `first`'s) and end block
      for (int b = first; end == kNone && b < blocks; b += 32 * kLoads) {
        int keys[kLoads];
#pragma unroll
        for (int j = 0; j < kLoads; ++j) {  // independent loads, all in flight together
          const int block = b + 32 * j + lane;
          keys[j] = block < blocks ? segment_key(args, block) : 0;
        }
        if (b == first) key = ptx::shfl0(keys[0]);
        int differs = kNone;
#pragma unroll
        for (int j = kLoads - 1; j >= 0; --j) {  // this lane's first block past `first` whose key differs
          const int block = b + 32 * j + lane;
          if (block > first && block < blocks && keys[j] != key) differs = block;
        }
        end = ptx::redux_min(differs);
      }
      const long long end_row = end == kNone ? args.m : static_cast<long long>(end) * kSegmentBlockRows;
      return static_cast<int>((end_row < args.m ? end_row : args.m) - start);
    } else if constexpr (kMode == kFp8GemmRagged) {
      const int left = args.m - start;
      if (group >= args.num_groups) return left;
      const int size = ptx::ldg_s32(args.groups + group);
      return size <= 0 ? 0 : (size < left ? size : left);
    } else {
      if (group >= args.num_groups) return 0;
      const int size = ptx::ldg_s32(args.groups + group);
      return size <= 0 ? 0 : (size < args.group_m ? size : args.group_m);
    }
  }

  // Ragged, masked: moves the cursor to the group that holds tile t (t >= the cursor's first tile), or returns false
  // when t is past the last group's tiles. The next group is read alone (where groups hold many tiles a CTA's next
  // tile is at most one group on, and one load costs least: NOTES 88); past it, the groups are read 32 at a time
  // (warp-collective: lane j reads the window's group j), so that crossing many small groups costs one memory round
  // trip per 32 groups, not one per group: a CTA's next tile is a grid of tiles on, which on 128 groups of ~256 rows
  // is 6-8 groups, and the consumers walk between their tiles. Ragged rows are each group's max(size, 0) cut at
  // what is left of M (the tail segment, group G, takes all of it), so the window's running sums saturate at
  // M - start: values <= that bound < 2^31 add in 32 unsigned bits without overflow, and a saturated running sum is
  // exactly the clamped one. Tile sums stay below the problem's tile count (< 2^31, checked by the host).
  __device__ __forceinline__ bool seek_group(int t, const Fp8GemmArgs& args) {
    constexpr bool kRagged = kMode == kFp8GemmRagged;
    const int last_group = kRagged ? args.num_groups : args.num_groups - 1;  // ragged: the tail segment too
    for (int step = 0; step < 2; ++step) {  // the cursor's group, then the next one
      if (group > last_group) return false;
      const int count = m_blocks_of(rows) * kNumTileCols;
      if (t < first_tile + count) return true;
      first_tile += count;
      if (kRagged) start += rows;  // <= M
      if (step == 0) {
        ++group;
        rows = group_rows(args);
      }
    }
    const int lane = static_cast<int>(ptx::lane_id());
    for (int window = group + 1;;) {  // the first group of 32 read together
      if (window > last_group) {
        group = last_group + 1;  // <= G + 1 < 2^31 (checked by the host)
        return false;
      }
      const bool in_range = lane <= last_group - window;  // window + lane <= last_group, without overflow
      const unsigned int cap = static_cast<unsigned int>(kRagged ? args.m - start : args.group_m);
      unsigned int rows_to_end = 0;  // this lane's group's rows; ragged: then those of the window up to its end
      if (in_range) {
        const int g = window + lane;
        const int size = kRagged && g == args.num_groups ? args.m : ptx::ldg_s32(args.groups + g);
        rows_to_end = size <= 0 ? 0u : (static_cast<unsigned int>(size) < cap ? static_cast<unsigned int>(size) : cap);
      }
      if constexpr (kRagged) {
#pragma unroll
        for (int d = 1; d < 32; d *= 2) {
          const unsigned int before = ptx::shfl_up_u32(rows_to_end, d);
          if (lane >= d) rows_to_end = before + rows_to_end < cap ? before + rows_to_end : cap;
        }
      }
      unsigned int rows_before = kRagged ? ptx::shfl_up_u32(rows_to_end, 1) : 0u;  // (every lane shuffles)
      if (lane == 0) rows_before = 0;
      const int my_rows = static_cast<int>(rows_to_end - rows_before);
      const int my_tiles = m_blocks_of(my_rows) * kNumTileCols;
      int tiles_to_end = my_tiles;  // the window's tiles up to and including this lane's group
#pragma unroll
      for (int d = 1; d < 32; d *= 2) {
        const int before = static_cast<int>(ptx::shfl_up_u32(static_cast<unsigned int>(tiles_to_end), d));
        if (lane >= d) tiles_to_end += before;
      }
      const unsigned int holds = ptx::ballot(in_range && t < first_tile + tiles_to_end);
      if (holds != 0) {
        const int j = __ffs(holds) - 1;
        group = window + j;
        rows = ptx::shfl_s32(my_rows, j);
        first_tile += ptx::shfl_s32(tiles_to_end - my_tiles, j);
        if (kRagged) start += ptx::shfl_s32(static_cast<int>(rows_before), j);
        return true;
      }
      first_tile += ptx::shfl_s32(tiles_to_end, 31);
      if (kRagged) start += ptx::shfl_s32(static_cast<int>(rows_to_end), 31);
      window = last_group - window < 32 ? last_group + 1 : window + 32;  // without overflow
    }
  }

  // Contiguous segments: moves the cursor to the segment that holds tile t (t >= the cursor's first tile), or returns
  // false when t is past the last tile. Past the cursor's segment the next 32 blocks' keys are read at once
  // (warp-collective: lane j reads the window's block j), not segment by segment (group_rows: a memory round trip
  // each): where experts hold a few 128-row blocks, a CTA's next tile is several segments on (NOTES 89). A segment's
  // tiles start at its blocks whose offset from its first block is a multiple of BLOCK_M / 128, so the window's
  // tiles before block j are kNumTileCols per such start in lanes < j, counted without knowing where segments end.
  __device__ __forceinline__ bool seek_segment(int t, const Fp8GemmArgs& args) {
    constexpr int kTileBlocks = kBlockM > kSegmentBlockRows ? kBlockM / kSegmentBlockRows : 1;  // (segments: 256)
    // (Compiled in every mode, never called outside segments: a dense kernel of one N block in clusters of 2 has
    // kNumTileCols = 0, and a division by it would be a compiler warning.)
    constexpr int kSegmentTileCols = kNumTileCols > 0 ? kNumTileCols : 1;
    constexpr int kPastM = -2;  // a key no block has (segment_key: -1 .. G - 1)
    const int blocks = segment_blocks(args);
    const int lane = static_cast<int>(ptx::lane_id());
    const unsigned int up_to_lane = 0xFFFFFFFFu >> (31 - lane);
    for (;;) {
      if (start >= args.m) return false;
      const int count = m_blocks_of(rows) * kNumTileCols;
      if (t < first_tile + count) return true;
      first_tile += count;
      start += rows;  // <= M
      if (start >= args.m) return false;
      const int first = start / kSegmentBlockRows;  // the window's first block: a segment's first
      const bool real = lane < blocks - first;
      const int key = real ? segment_key(args, first + lane) : kPastM;
      const int key_before = static_cast<int>(ptx::shfl_up_u32(static_cast<unsigned int>(key), 1));
      const unsigned int opens = ptx::ballot(lane == 0 || key != key_before);  // a segment's first block, or M's end
      const int my_first = 31 - __clz(opens & up_to_lane);                     // this lane's segment's first lane
      const unsigned int tile_starts = ptx::ballot(real && (lane - my_first) % kTileBlocks == 0);
      const int wanted = (t - first_tile) / kSegmentTileCols;  // tile starts before t's in the window
      int s;                                               // the first lane of the segment the cursor moves to
      if (wanted < __popc(tile_starts)) {
        const bool starts_t = ((tile_starts >> lane) & 1) && __popc(tile_starts & (up_to_lane >> 1)) == wanted;
        const int j = __ffs(ptx::ballot(starts_t)) - 1;  // the lane whose block starts t's tile row
        s = 31 - __clz(opens & (0xFFFFFFFFu >> (31 - j)));
      } else if (blocks - first <= 32) {  // the window holds every block left, and t is past their tiles
        start = args.m;
        return false;
      } else {
        s = 31 - __clz(opens);  // the last segment opening in the window (t is in it or past it)
      }
      first_tile += kNumTileCols * __popc(tile_starts & ((1u << s) - 1));
      start = (first + s) * kSegmentBlockRows;  // < M
      const unsigned int later = s == 31 ? 0u : opens >> (s + 1);
      if (later != 0) {  // the segment ends in the window: at the next opening block, or M
        const long long end = static_cast<long long>(first + s + __ffs(later)) * kSegmentBlockRows;
        rows = static_cast<int>((end < args.m ? end : args.m) - start);
      } else {
        rows = group_rows(args);
      }
    }
  }

  // Tile t, or false when t is past the last tile.
  __device__ __forceinline__ bool get(int t, const Fp8GemmArgs& args, Tile& tile) {
    tile.part = -1;
    if constexpr (kKGrouped) return get_k_grouped(t, args, tile);
    if constexpr (kTailSplit) {
      // A CTA's first visit at or past split_from is split_from + blockIdx.x: CTA 2c + r takes half r of tile
      // split_from + c (the tiles before it are the whole rounds, one per CTA); the next visit ends its walk.
      if (t >= split_from) {
        const int slot = t - split_from;
        if (slot >= static_cast<int>(gridDim.x) || slot / 2 >= num_tiles - split_from) return false;
        tile.part = slot % 2;
        t = split_from + slot / 2;
      }
    }
    set_k_blocks(tile, part);
    int num_m_blocks, local = t, base_row = 0;
    if constexpr (kWalksGroups || kContiguousSegments) {
      if (!(kWalksGroups ? seek_group(t, args) : seek_segment(t, args))) return false;
      num_m_blocks = m_blocks_of(rows);
      local = t - first_tile;
      base_row = kMode == kFp8GemmMasked ? group * args.group_m : start;
    } else {
      num_m_blocks = m_blocks_of(args.m);
      const int lone_pairs = kLoneColumn ? num_m_blocks / 2 + num_m_blocks % 2 : 0;  // no overflow (M < 2^31)
      const int grid_rows = kMulticastB ? num_m_blocks / 2 + num_m_blocks % 2 : num_m_blocks;  // B: M-block pairs
      if (t >= grid_rows * kNumTileCols + lone_pairs) return false;
    }
    int m_block;
    tile.shared_a = kCluster > 1 && !kMulticastB;
    if (kMulticastB) {
      tile_coords(local, num_m_blocks / 2 + num_m_blocks % 2, 0, m_block, tile.n_block);
      m_block = 2 * m_block + rank;  // <= num_m_blocks: one past M at most
    } else if (kLoneColumn && local >= num_m_blocks * kNumTileCols) {
      m_block = 2 * (local - num_m_blocks * kNumTileCols) + rank;  // <= num_m_blocks: one past M at most
      tile.n_block = kNumNBlocks - 1;
      tile.shared_a = false;
    } else {
      tile_coords(local, num_m_blocks, rank, m_block, tile.n_block);
    }
    const int total_rows = kWalksGroups || kContiguousSegments ? rows : args.m;
    const int left = total_rows - m_block * kBlockM;  // < 0 only for a pair's tile past M
    tile.row0 = base_row + m_block * kBlockM;
    tile.d_row0 = tile.row0;
    tile.rows = left < kBlockM ? (left > 0 ? left : 0) : kBlockM;
    tile.group = (kMode == kFp8GemmRagged && group >= args.num_groups) ? -1 : (kWalksGroups ? group : 0);
    return true;
  }
};

// Contiguous: the expert ids of a tile's BLOCK_M rows as one warp holds them (row 32 * s + lane in slot s), -1 for
// ids outside [0, G) and for rows past the tile's own.
constexpr int kIdSlots = kBlockM / 32;

__device__ __forceinline__ int row_expert(const Fp8GemmArgs& args, const Tile& tile, int r) {
  if (r >= tile.rows) return -1;
  const int id = ptx::ldg_s32(args.groups + tile.row0 + r);
  return (id >= 0 && id < args.num_groups) ? id : -1;
}

__device__ __forceinline__ void load_tile_experts(const Fp8GemmArgs& args, const Tile& tile, int lane,
                                                  int (&ids)[kIdSlots]) {
#pragma unroll
  for (int s = 0; s < kIdSlots; ++s) ids[s] = row_expert(args, tile, 32 * s + lane);
}

// Grouped GEMMs, and dense ones with dynamic tiles (kTileIdsWarp): the tile ids' warp (the producer warpgroup's
// third) is the only one that walks the CTA's tiles (with dynamic tiles, taking their indices itself: see
// TileQueue): it publishes each tile, its coordinates (the group among them; k-grouped: its K range and D rows) and,
// contiguous, its rows' expert ids, into shared memory while the readers (the producer warp and every consumer
// thread) work on the tile before, so that no reader waits for a global load at the tile switch (the consumers' id
// loads came after the epilogue and before the first wgmma: ~900 cycles of the tile switch, NOTES 137) nor runs the
// scheduler (the segment walk's key loads; the group walk's size loads and warp-collective scans, NOTES 146). One
// slot: the warp stores tile i + 1 once every reader has copied tile i into its registers, at tile i's start; past
// the CTA's last tile it publishes an end mark.
//  - full completes on the warp's 32 lanes' arrivals, each after its own stores;
//  - empty completes on every reader thread's arrival, each after its own loads (so that no store of the next tile
//    overtakes a read, for compute-sanitizer's racecheck too: NOTES 140).
struct TileIds {
  // Shared addresses: two barriers; kTileIdWords ints: the fields a tile's scheduler leaves variable (take() rebuilds
  // the rest) and whether it is a tile (0: the end mark); contiguous: BLOCK_M ints, its rows' ids.
  unsigned int full, empty, fields, rows;
  static constexpr unsigned int kReaders = 32 + kNumMathThreads;

  __device__ void init() const {
    ptx::mbarrier_init(full, 32);
    ptx::mbarrier_init(empty, kReaders);
  }

  // The ids' warp (every lane): waits until every reader took tile i - 1 (the slot is free for tile i).
  __device__ void wait_free(int i) const { ptx::mbarrier_wait_warp(empty, (i & 1) ^ 1u); }  // a fresh one passes

  // The ids' warp (every lane), after wait_free: the tile and its ids (as load_tile_experts holds them) into the
  // slot; `is_tile` false: the end mark (the tile's fields and the ids unused).
  __device__ void publish(bool is_tile, const Tile& tile, const int (&ids)[kIdSlots], int lane) const {
    if (ptx::elect_one_sync()) {  // (not a branch on the lane id: see TileQueue::publish)
      const int words[] = {tile.row0, tile.rows, tile.n_block, tile.group, tile.shared_a, tile.part, is_tile,
                           tile.d_row0, tile.kb0, tile.num_kb};  // the first kTileIdWords (k-grouped: all)
      static_assert(kTileIdWords <= sizeof(words) / sizeof(words[0]), "take() reads words publish() does not write");
#pragma unroll
      for (int w = 0; w < kTileIdWords; ++w) ptx::st_shared_b32(fields + 4 * w, static_cast<unsigned int>(words[w]));
    }
    if (kContiguous && is_tile) {
#pragma unroll
      for (int s = 0; s < kIdSlots; ++s)
        ptx::st_shared_b32(rows + 4 * (32 * s + lane), static_cast<unsigned int>(ids[s]));
    }
    ptx::mbarrier_arrive(full);
  }

  // A reader (every lane of its warp): waits for slot i and returns whether it holds a tile, with its fields in
  // `tile` (made warp-uniform, as the scheduler's were; the constant ones as the scheduler sets them, so that the
  // K loops compile as with the scheduler's tiles). Contiguous: then row(r) reads its ids, and release() ends this
  // thread's reads of the slot; the other modes end them here.
  __device__ bool take(int i, Tile& tile) const {
    static_assert(!kTileIdsWarp || kSplitK == 1, "a published tile: all K blocks, or k-grouped's published run");
    ptx::mbarrier_wait_warp(full, i & 1);
    auto word = [&](int w) { return ptx::shfl0(static_cast<int>(ptx::ld_shared_b32(fields + 4 * w))); };
    tile.row0 = word(0);
    tile.rows = word(1);
    tile.n_block = word(2);
    tile.group = kContiguous ? 0 : word(3);
    tile.shared_a = kCluster > 1 && word(4) != 0;
    tile.part = kTailSplit ? word(5) : -1;
    if constexpr (kKGrouped) {  // its K range and D rows vary per tile
      tile.d_row0 = word(7);
      tile.kb0 = word(8);
      tile.num_kb = word(9);
    } else {
      tile.d_row0 = tile.row0;
      set_k_blocks(tile, 0);
    }
    const bool is_tile = word(6) != 0;
    if constexpr (!kContiguous) release();
    return is_tile;
  }
  __device__ int row(int r) const { return static_cast<int>(ptx::ld_shared_b32(rows + 4 * r)); }
  __device__ void release() const { ptx::mbarrier_arrive(empty); }

  // The producer warp: the ids of the tile it took, as load_tile_experts gives them.
  __device__ void read(int lane, int (&ids)[kIdSlots]) const {
#pragma unroll
    for (int s = 0; s < kIdSlots; ++s) ids[s] = row(32 * s + lane);
    release();
  }
};

// The smallest valid expert id of the tile greater than `prev`, or -1: the next pass. Warp-collective.
__device__ __forceinline__ int next_expert(const int (&ids)[kIdSlots], int prev) {
  constexpr int kNone = 0x7FFFFFFF;
  int best = kNone;
#pragma unroll
  for (int s = 0; s < kIdSlots; ++s)
    if (ids[s] > prev && ids[s] < best) best = ids[s];
  best = ptx::redux_min(best);
  return best == kNone ? -1 : best;
}

// The first group (pass) of a tile, and the one after `prev`: contiguous walks the experts present, every other
// mode has one pass (none for the ragged tail). Identical in the producer and the consumers.
__device__ __forceinline__ int first_pass(const Tile& tile, const int (&ids)[kIdSlots]) {
  if constexpr (kContiguous) return next_expert(ids, -1);
  return tile.group;
}

__device__ __forceinline__ int next_pass(const int (&ids)[kIdSlots], int prev) {
  if constexpr (kContiguous) return next_expert(ids, prev);
  return -1;
}

}  // namespace fp8_gemm
}  // namespace jdg
