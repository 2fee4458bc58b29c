// Part of fp8_gemm.cuh (which includes it after checking the JDG_* macros): the kernel's configuration from the
// macros (tile sizes, shared-memory layout, register split, each feature's constants), the static_asserts that keep
// it consistent, and small compile-time helpers.
#pragma once

namespace jdg {
namespace fp8_gemm {

// ------------------------------------------------------------------------------------------------ configuration

constexpr int kN = JDG_N;
constexpr int kK = JDG_K;
constexpr int kBlockM = JDG_BLOCK_M;
constexpr int kBlockN = JDG_BLOCK_N;
constexpr int kBlockK = kFp8BlockK;  // 128 FP8 = 128 bytes: one swizzled row, one scale block
constexpr int kStages = JDG_STAGES;
constexpr bool kAE5M2 = JDG_A_E5M2 != 0;
constexpr bool kBE5M2 = JDG_B_E5M2 != 0;
constexpr bool kBScalePerRow = JDG_B_SCALE_PER_ROW != 0;
constexpr bool kOutF32 = JDG_OUT_F32 != 0;
constexpr int kCKind = JDG_C_KIND;  // 0 none, 1 bf16, 2 f32
#ifndef JDG_GROUPED_MODE
#define JDG_GROUPED_MODE 0
#endif
constexpr int kMode = JDG_GROUPED_MODE;  // kFp8GemmDense / Contiguous / Ragged / Masked / KGrouped
#ifndef JDG_CLUSTER
#define JDG_CLUSTER 1
#endif
constexpr int kCluster = JDG_CLUSTER;  // CTAs per cluster, sharing A (or, kMulticastB, B) through multicast
#ifndef JDG_MULTICAST_B
#define JDG_MULTICAST_B 0
#endif
// Clusters of 2 that share B instead (dense): the two CTAs take adjacent M blocks of the same N block, each loading
// half of the B tile for both and its own A tile.
constexpr bool kMulticastB = JDG_MULTICAST_B != 0;
#ifndef JDG_TMA_STORE
#define JDG_TMA_STORE 0
#endif
constexpr bool kTmaStore = JDG_TMA_STORE != 0;  // epilogue through shared memory and TMA stores
#ifndef JDG_C_PREFETCH
#define JDG_C_PREFETCH 0
#endif
constexpr int kCPrefetch = JDG_C_PREFETCH;  // C into L2 this many K blocks before a tile's end (0: not at all)
#ifndef JDG_ACC_PIPELINE
#define JDG_ACC_PIPELINE 0
#endif
#ifndef JDG_SPLIT_HALVES
#define JDG_SPLIT_HALVES 0
#endif
constexpr bool kAccPipeline = JDG_ACC_PIPELINE != 0;  // two accumulators: K block kb+1's wgmmas run while kb promotes
#ifndef JDG_SPLIT_K
#define JDG_SPLIT_K 1
#endif
// CTAs of a cluster sharing one tile's K blocks (see split_k_exchange in fp8_gemm_ring.cuh)
constexpr int kSplitK = JDG_SPLIT_K;
#ifndef JDG_TAIL_SPLIT
#define JDG_TAIL_SPLIT 0
#endif
constexpr bool kTailSplit = JDG_TAIL_SPLIT != 0;  // a short last round's tiles split over K in pairs (tail_exchange)
#ifndef JDG_DYNAMIC_TILES
#define JDG_DYNAMIC_TILES 0
#endif
// After the first round (cluster c takes tile c), each cluster takes the next tile of the order when it is free, from
// a device counter (TileQueue), instead of every tile_step-th one.
constexpr bool kDynamicTiles = JDG_DYNAMIC_TILES != 0;
// Tile indices in flight between a cluster's two tile ids' warps: CTA 0's takes tile i + 1 once CTA 1's took tile
// i + 1 - kTileSlots, so with one slot as CTA 1's publishes tile i (see TileQueue).
constexpr int kTileSlots = 1;
#ifndef JDG_PAIRED_STAGES
#define JDG_PAIRED_STAGES 0
#endif
// Paired stages: the ring's slots go in pairs (s, s + 1), s even, that share slot s's full and empty barriers, so
// two K blocks cost one barrier round trip (one empty wait and expect-tx by the producer, one full wait and release
// per consumer warp); a pass's odd last K block takes a pair alone. kRingSlots: the slots in use (an odd stage count
// leaves its last one idle).
constexpr int kKPerRound = JDG_PAIRED_STAGES != 0 ? 2 : 1;
constexpr int kRingSlots = kStages / kKPerRound * kKPerRound;
constexpr int kTileCtas = kCluster * kSplitK;    // CTAs that walk the same tiles (tail split: each CTA its own)
constexpr int kLaunchCluster = fp8_gemm_cluster_ctas(kCluster, kSplitK, kTailSplit);  // the launch's cluster size
#ifndef JDG_PROFILE_WAITS
#define JDG_PROFILE_WAITS 0
#endif
constexpr bool kProfileWaits = JDG_PROFILE_WAITS != 0;  // count the cycles spent in pipeline barrier waits
#if JDG_PROFILE_WAITS
// JDG_PROFILE_WAITS: what a CTA's first consumer thread ([cta][0]), TMA-issuing producer lane ([cta][1]) and second
// consumer warpgroup's first thread ([cta][2], two consumer warpgroups only) measured (see the end of fp8_gemm.cuh),
// kept in the module for jdg_fp8_gemm_profile_report.
struct Fp8GemmProfileRecord {
  unsigned long long waited, cycles, ns, epilogue_cycles;
  int k_blocks, written;
};
constexpr int kFp8GemmProfileMaxCtas = 1024;
constexpr int kFp8GemmProfileRoles = 3;
__device__ Fp8GemmProfileRecord jdg_fp8_gemm_profile_records[kFp8GemmProfileMaxCtas][kFp8GemmProfileRoles];
// A timeline of the two-wave K loop (256-row tiles): the first kTraceEvents events of each consumer warpgroup's first
// thread in the first kTraceCtas CTAs, each (cycles since the kernel's start, tile * 4096 + K block of the pass * 16 +
// wave * 4 + event: 0 wgmmas issued, 1 done, 2 promoted; and event 3 with K block kTraceStageWait / kTraceStageReady:
// a pass's first stage about to be waited for / waited for, ahead of its K loop; with kTraceEpilogueDone: the epilogue
// done, tagged with the next tile); count, then the events.
constexpr int kTraceCtas = 2, kTraceEvents = 640;
__device__ int jdg_fp8_gemm_trace_count[kTraceCtas][2];
__device__ unsigned int jdg_fp8_gemm_trace[kTraceCtas][2][kTraceEvents][2];
#endif
constexpr int kTraceStageWait = 253, kTraceStageReady = 254, kTraceEpilogueDone = 255;  // the timeline's (above)
#if JDG_PROFILE_WAITS
// A traced K block takes at least 6 events (3 per wave), so no real K block reaches the markers' numbers before the
// trace is full.
static_assert(kTraceEvents / 6 < kTraceStageWait, "the timeline's tile-boundary markers would collide with K blocks");
#endif
constexpr bool kContiguous = kMode == kFp8GemmContiguous;
constexpr bool kKGrouped = kMode == kFp8GemmKGrouped;
constexpr bool kWalksGroups = kMode == kFp8GemmRagged || kMode == kFp8GemmMasked;
#ifndef JDG_CONTIGUOUS_SEGMENTS
#define JDG_CONTIGUOUS_SEGMENTS 0
#endif
// Contiguous 256-row tiles walk *segments* (runs of 128-row blocks whose first rows have the same expert id) the way
// ragged tiles walk groups, so that a tile does not straddle two experts' blocks (fp8_gemm_tiles.cuh).
constexpr bool kContiguousSegments = JDG_CONTIGUOUS_SEGMENTS != 0;
constexpr int kSegmentBlockRows = 128;

constexpr int kNumKBlocks = (kK + kBlockK - 1) / kBlockK;  // kb; the K tail of the last block is TMA zero fill
constexpr int kNumNBlocks = (kN + kBlockN - 1) / kBlockN;  // N tiles
constexpr int kNumTileCols = kMulticastB ? kNumNBlocks : kNumNBlocks / kCluster;  // scheduler columns
// Dense GEMMs in clusters of 2 with an odd N-block count: the last N block has no neighbour to share A with, so its
// tiles pair along M instead (the cluster's CTAs take adjacent M blocks of it, each loading its own whole A tile) and
// come after all the paired columns. An odd M-block count leaves the last such pair a tile wholly past M, which
// streams zero fill and stores nothing: the two CTAs of a cluster must move through the same number of stages.
constexpr bool kLoneColumn = kCluster == 2 && !kMulticastB && kNumNBlocks % 2 == 1;
constexpr int kNumScaleNBlocks = (kN + 127) / 128;         // nb: rows of the 128x128 B-scale grid

constexpr int kNumMathWarpgroups = fp8_gemm_math_warpgroups(kBlockM);
constexpr int kNumMathThreads = 128 * kNumMathWarpgroups;
constexpr int kWaves = kBlockM / 64 / kNumMathWarpgroups;  // 64-row wgmma waves per consumer warpgroup (1 or 2)
constexpr int kNumThreads = fp8_gemm_num_threads(kBlockM);

// Shared memory, carved as fp8_gemm_smem_bytes() describes (every part 1024-byte aligned: the 128-byte swizzle
// pattern repeats every 8 rows = 1024 bytes, and TMA and wgmma must agree on where it starts).
constexpr int kSmemABytes = kBlockM * kBlockK;  // one stage of A
constexpr int kSmemBBytes = kBlockN * kBlockK;  // one stage of B
constexpr int kSmemSABytes = fp8_gemm_sa_stage_bytes(kBlockM);                 // one stage of A scales
constexpr int kSABoxes = fp8_gemm_sa_boxes(kBlockM);                           // A-scale boxes per stage
constexpr int kSABoxRows = kBlockM / kSABoxes;                                 // tile rows per A-scale box
constexpr int kSASlotFloats = fp8_gemm_sa_slot_bytes(kBlockM) / 4;            // one box's slot
constexpr int kSmemSBBytes = fp8_gemm_sb_stage_bytes(kBlockN, kBScalePerRow);  // one stage of per-row B scales
constexpr int kSmemBOffset = fp8_gemm_align(kStages * kSmemABytes, 1024);
constexpr int kSmemSAOffset = kSmemBOffset + fp8_gemm_align(kStages * kSmemBBytes, 1024);
constexpr int kSmemSBOffset = kSmemSAOffset + fp8_gemm_align(kStages * kSmemSABytes, 1024);
constexpr int kSmemDOffset = kSmemSBOffset + fp8_gemm_align(kStages * kSmemSBBytes, 1024);
constexpr int kSmemDBytes = kTmaStore ? kBlockM * kBlockN * 2 : 0;  // the bf16 output tile (TMA store)
constexpr int kSmemPartialOffset = kSmemDOffset + fp8_gemm_align(kSmemDBytes, 1024);
constexpr int kSmemPartialBytes = fp8_gemm_split_k_partial_bytes(kBlockM, kBlockN, kSplitK);  // split K: CTA 0 only
constexpr int kSmemBarOffset = kSmemPartialOffset + fp8_gemm_align(kSmemPartialBytes, 1024);
// Grouped GEMMs, and dense ones with dynamic tiles: the next tile (kTileIdWords ints: k-grouped tiles' K range and
// D rows too) and, contiguous only, its expert ids in the barrier area, published by a warp of their own (TileIds).
constexpr int kTileIdRows = kContiguous ? kBlockM : 0;
constexpr int kTileIdWords = kKGrouped ? 10 : 7;
constexpr bool kTileIdsWarp = kMode != kFp8GemmDense || kDynamicTiles;
constexpr int kSmemBytes =
    fp8_gemm_smem_bytes(kBlockM, kBlockN, kStages, kBScalePerRow, kTmaStore, kSplitK, kTileIdRows);
// The output tile in shared memory: kBlockN / kDAtomCols atoms of [BLOCK_M rows x kDAtomCols columns] bf16, one TMA
// store per atom (fp8_gemm_d_atom_cols). An atom's row is one swizzle span (128 / 64 / 32 bytes): the swizzle XORs a
// 16-byte chunk's index with the address bits from bit 7 up, so chunk c of row r lands at chunk c ^ d_swizzle(r).
constexpr int kDAtomCols = fp8_gemm_d_atom_cols(kBlockN);
constexpr int kDAtomRowBytes = kDAtomCols * 2;
constexpr int kDAtomChunks = kDAtomRowBytes / 16;  // 8 / 4 / 2
constexpr int kDAtomBytes = kBlockM * kDAtomRowBytes;
__device__ __forceinline__ int d_swizzle(int r) { return (r * kDAtomRowBytes / 128) % kDAtomChunks; }
// Bytes one stage receives: full boxes, OOB zero fill included.
constexpr unsigned int kStageTxBytes =
    kSmemABytes + kSmemBBytes + kSABoxes * fp8_gemm_sa_box(kBlockM) * 4 + (kBScalePerRow ? kBlockN * 4 : 0);

// Register split (setmaxnreg): the producer thread needs few registers; the consumers hold 1 + kWaves BLOCK_N/2
// float arrays (wgmma accumulator + promoted result per wave). The pool is 64K registers per SM (per CTA here); at entry every
// warp holds the count ptxas chose: 168 for 384 threads (65536 / 384 rounded down to a multiple of 8), or the
// consumers' count for 256 threads (ptxas then compiles the whole kernel at it). 40 x 128 + 232 x 256 = 64512 fits.
constexpr int kProducerRegs = 40;
constexpr int kMathRegs = kNumMathWarpgroups == 1 ? 248 : 232;

// Tile order: bands of kBandN columns (N blocks, or N-block pairs of a cluster); inside a band the column index runs
// fastest, then M. The CTAs working at the same time then share a few A row-blocks and B column-blocks in L2.
constexpr int kBandN = kFp8BandNBlocks / kCluster;

// wgmma accumulator fragment: N/2 floats per thread, 4 per 8-column chunk.
constexpr int kAccRegs = kBlockN / 2;
constexpr int kNumChunks = kBlockN / 8;

// 128x128 B scales: how many 128-column scale blocks can one BLOCK_N-wide tile touch? Tile starts are multiples
// of g = gcd(BLOCK_N, 128) modulo 128, so the worst start is 128 - g.
constexpr int gcd(int a, int b) { return b == 0 ? a : gcd(b, a % b); }
constexpr int kMaxBScaleBlocks = (128 - gcd(kBlockN, 128) + kBlockN - 1) / 128 + 1;
// The one-accumulator K loop takes a tile's B scales 32 K blocks per load (load_b_scale_chunk) where the tile lies in
// one scale block. Tiles that may straddle two or three would hold that many more registers across the loop (ptxas
// spills at 128 x 176, and the promotion's FFMA interleave moves at contiguous 128 x 160), so they load per K block.
constexpr bool kBScaleChunks = !kBScalePerRow && kMaxBScaleBlocks == 1;
// Tiles that straddle scale blocks start at a multiple of kScaleOffsetStep in their first one: kScaleOffsets
// possible offsets. The half-width loop is compiled once per offset where there are at most
// kMaxCompiledScaleOffsets (192 wide: 2; 160 and 224 wide: 4 copies of the loop, NOTES 33; 144 / 176 / 208 / 240
// wide would take 8 and keep the run-time selection).
constexpr int kScaleOffsetStep = gcd(kBlockN, 128);
constexpr int kScaleOffsets = 128 / kScaleOffsetStep;
constexpr int kMaxCompiledScaleOffsets = 4;

// JDG_SPLIT_HALVES: tiles too wide for two accumulators (one 64-row wave of BLOCK_N 160 / 192 per consumer) issue each
// K block's wgmmas as two BLOCK_N/2-wide groups into two half accumulators (the registers of one), so that each half
// is promoted while the other half's group, or the next K block's first, runs on the tensor cores (split_pass).
constexpr bool kSplitHalves = JDG_SPLIT_HALVES != 0;
constexpr int kHalfN = kBlockN / 2;
constexpr int kHalfChunks = kNumChunks / 2;
static_assert(!kSplitHalves || (fp8_gemm_split_halves_supported(kBlockM, kBlockN, kBScalePerRow) && !kAccPipeline),
              "JDG_SPLIT_HALVES takes BLOCK_M <= 128, BLOCK_N 160 / 192 / 224 / 256, 128x128 B scales, no "
              "accumulator pipeline");

static_assert(fp8_gemm_block_m_supported(kBlockM), "BLOCK_M must be 64, 128 or 256");
static_assert(kWaves * 64 * kNumMathWarpgroups == kBlockM && kSABoxRows % 64 == 0, "");
static_assert(fp8_gemm_block_n_supported(kBlockN), "BLOCK_N must be a multiple of 16 in [16, 256]");
static_assert(kStages >= 2, "the pipeline needs at least 2 stages");
static_assert(kSmemBytes <= kMaxDynamicSmemBytes, "stages x (A + B tiles) do not fit in shared memory");
static_assert(kCluster == 1 || (kCluster == 2 && (kNumNBlocks % 2 == 0 || kMode == kFp8GemmDense)),
              "a cluster of 2 needs an even N-block count (dense GEMMs: any)");
// (BLOCK_N is a multiple of 16: each half of the B tile is whole 8-row swizzle atoms, 1024-byte aligned.)
static_assert(!kMulticastB || (kCluster == 2 && kMode == kFp8GemmDense),
              "JDG_MULTICAST_B takes dense GEMMs in clusters of 2");
static_assert(kKPerRound == 1 || fp8_gemm_paired_stages_supported(kAccPipeline, kStages),
              "paired stages take the accumulator pipeline and at least 4 stages");
static_assert(!kAccPipeline || fp8_gemm_acc_pipeline_supported(kBlockM, kBlockN),
              "the accumulator pipeline takes one 64-row wave per warpgroup (BLOCK_M <= 128) and BLOCK_N <= 128");
static_assert(!kTmaStore || fp8_gemm_tma_store_supported(kN, kBlockN, kOutF32, kCKind),
              "the TMA-store epilogue takes bf16 out without C, BLOCK_N % 16 == 0, N % 8 == 0");
static_assert(kWaves * 64 == fp8_gemm_d_box_rows(kBlockM), "a consumer warpgroup's rows are one D box");
static_assert(kSmemBarOffset + fp8_gemm_barrier_area_bytes(kStages, kTileIdRows) + 1024 <= kSmemBytes,
              "layout disagrees with fp8_gemm_smem_bytes()");
// The tile queue's barriers and slots sit after the exchange barriers, in the barrier area's padding, then
// (kTileIdsWarp) the tile ids' two barriers, tile and (contiguous) rows (8-byte aligned: the queue's 20 * kTileSlots
// bytes rounded up; without rows they need no more than the padding of at most 16 stages' barriers).
constexpr int kTileIdsBarOffset = 2 * kStages * 8 + 16 + (kTileSlots * 20 + 7) / 8 * 8;  // from the barrier area
static_assert(kTileIdsBarOffset + 16 + 4 * (kTileIdWords + kTileIdRows) <=
                  fp8_gemm_barrier_area_bytes(kStages, kTileIdRows),
              "the tile queue and the tile ids do not fit in the barrier area");
static_assert(!kDynamicTiles || (kSplitK == 1 && !kTailSplit && kTileCtas <= 2),
              "JDG_DYNAMIC_TILES takes no split K and no tail split");
static_assert(fp8_gemm_split_k_supported(kMode, kBlockM, kCluster, kSplitK),
              "JDG_SPLIT_K takes 1, or 2 / 4 for dense GEMMs with BLOCK_M <= 128 and no multicast (JDG_CLUSTER 1)");
static_assert(!kTailSplit || fp8_gemm_tail_split_supported(kMode, kK, kBlockM, kBlockN, kStages, kCluster, kSplitK),
              "JDG_TAIL_SPLIT takes dense, contiguous or masked GEMMs without multicast or split K, K > 128, and a "
              "partial tile that fits into the A and B stages");
static_assert(!kTailSplit || kBlockM * kBlockN * 4 <= kSmemSAOffset, "");
static_assert(!kContiguousSegments || fp8_gemm_segments_supported(kMode, kBlockM, kTailSplit),
              "JDG_CONTIGUOUS_SEGMENTS takes contiguous GEMMs with BLOCK_M 256, without JDG_TAIL_SPLIT");
static_assert(kN >= 1, "N must be >= 1");
static_assert(kK >= 16 && kK % 16 == 0, "K must be a positive multiple of 16 (TMA row stride)");
static_assert(kCKind >= 0 && kCKind <= 2, "JDG_C_KIND must be 0, 1 or 2");
static_assert(kCPrefetch >= 0, "JDG_C_PREFETCH must be >= 0");
static_assert(kCPrefetch == 0 || fp8_gemm_c_prefetch_supported(kCKind, kTmaStore, kN),
              "JDG_C_PREFETCH needs a C read by the register epilogue, rows of 16-byte strides");
static_assert(kMode >= kFp8GemmDense && kMode <= kFp8GemmKGrouped, "JDG_GROUPED_MODE must be 0, 1, 2, 3 or 4");
static_assert(kMode == kFp8GemmDense || kKGrouped || kCKind == 0, "M-grouped GEMMs take no C");
static_assert(!kKGrouped || (kBScalePerRow && kCKind != 1 && (kOutF32 || kCKind == 0)),
              "k-grouped is 1x128 x 1x128 with f32 out and C, or bf16 out without C");
static_assert(kMaxBScaleBlocks >= 1 && kMaxBScaleBlocks <= 3, "");
static_assert(kProducerRegs * 128 + kMathRegs * kNumMathThreads <= 65536, "register split exceeds the register file");

// ------------------------------------------------------------------------------------------------ helpers

// A compile-time bool as a type, to instantiate a generic lambda twice.
template <bool B>
struct BoolConstant {
  static constexpr bool value = B;
  __device__ constexpr operator bool() const { return B; }
};

// A compile-time int as a type (see its use for the scale-block offset of 160- and 192-wide tiles).
template <int V>
struct IntConstant {
  static constexpr int value = V;
  __device__ constexpr operator int() const { return V; }
};

// run(IntConstant<kStep * i>{}) for the i < kCount with n_off == kStep * i (n_off must be one of them).
template <int kStep, int kCount, int I = 0, typename Run>
__device__ __forceinline__ void with_constant_offset(int n_off, Run&& run) {
  if constexpr (I + 1 == kCount) {
    run(IntConstant<kStep * I>{});
  } else if (n_off == kStep * I) {
    run(IntConstant<kStep * I>{});
  } else {
    with_constant_offset<kStep, kCount, I + 1>(n_off, run);
  }
}

struct alignas(8) Float2 {
  float x, y;
};

}  // namespace fp8_gemm
}  // namespace jdg
