// FP8 GEMM with fine-grained scaling for Hopper (sm_90a):
//
//   D[m, n] = C[m, n] + sum_kb a_scale[kb, m] * b_scale_of(n, kb) * sum_{k in block kb} A8[m, k] * B8[n, k]
//
// A8 [M, K] and B8 [N, K] are FP8 (e4m3 or e5m2), K-major; kb runs over 128-wide K blocks. The configuration comes
// from the JDG_* macros that the generated wrapper defines before including this file; fp8_gemm_abi.h is the
// contract with the host (macros, kernel signature, tensor maps, launch rules, shared-memory size).
//
// Structure (one CTA per SM, persistent):
//   warpgroups 0 .. W - 1   consumers ("math", W = 1 for BLOCK_M 64, else 2): each owns BLOCK_M / W rows of the
//                           tile as one or two 64-row *waves* and runs the wgmmas, the per-K-block promotion and
//                           the epilogue. BLOCK_M 256 (two waves per warpgroup, one shared wgmma accumulator)
//                           reads each B tile for 256 rows: a quarter fewer operand bytes per FLOP than 128
//   warpgroup W             producer: one elected thread issues all TMA loads
// connected by a ring of JDG_STAGES shared-memory stages (A tile BLOCK_M x 128 B, B tile BLOCK_N x 128 B), each with
// a "full" mbarrier (producer -> consumers: the TMA bytes landed) and an "empty" mbarrier (consumers -> producer:
// the stage was read and may be overwritten).
// Clusters: with JDG_CLUSTER 2 the two CTAs take adjacent N blocks of the same rows and multicast A halves into each
// other's stages (JDG_MULTICAST_B: adjacent M blocks of the same N block, multicasting B halves); with JDG_SPLIT_K
// they take the same tile, each a run of its K blocks, and the others' FP32 partial tiles are summed in CTA 0's
// shared memory before its epilogue (split_k_exchange).
//
// Grouped GEMMs (JDG_GROUPED_MODE, layouts in fp8_gemm_abi.h) are scheduling variants of the same kernel: a tile is
// (first row, rows it owns, N block, group), produced by one scheduler (TileScheduler below) that the producer and
// the consumers run identically over the same read-only device data, so they always agree on the sequence of
// pipeline stages. Device data is never trusted: ids, sizes and masks are clamped and every row and column index
// stays in bounds whatever the values (sizes are cut at M before they are added, so sums never overflow).
//  * masked:     group g contributes ceil(rows_g / BLOCK_M) x N-block tiles, rows_g = clamp(masked_m[g], 0, M);
//                A rows start at g * M; rows at or past rows_g are neither computed (a consumer warpgroup whose
//                64 rows all lie past it skips its wgmmas) nor stored.
//  * ragged:     the same walk over the G groups (group g starts where g - 1 ended) plus a tail segment from the
//                last group's end to M, whose tiles load nothing and store zeros. A tile's A box starts at its
//                first row, wherever that is: rows of the box that belong to the next group are loaded and
//                multiplied, but not stored.
//  * k-grouped:  group g has the full grid of M x N tiles (group-major order), storing into D rows g * M + r; its
//                K loop runs over the 128-wide K blocks of its segment only (none: the tile stores C[g] or zeros).
//                B has one group; K-segment bounds are clamped like ragged row counts.
//  * contiguous: tiles as dense. API.md does not promise one expert per block, so a tile is computed in one
//                *pass* (a full K loop) per distinct valid expert among its rows, in increasing id order; each
//                pass adds only into the rows of its expert (a select, so NaN/Inf from another expert's product
//                or a padding row's data cannot leak), and a consumer warpgroup with no row of the pass's expert
//                skips its wgmmas. Rows with an id outside [0, G) are never added to: they are stored as zeros.
//                The aligned layout (one id per 128-row block) costs one pass plus a warp reduction over the
//                block's ids; a tile with only padding rows loads nothing and stores zeros; the worst case (ids
//                changing on every row) is BLOCK_M passes, slow but correct.
//
// Limits (tests/cuda/compile_check.py reports the register ones; benchmarks/NOTES.md measures the rest):
//  * registers: a consumer thread holds (1 + waves) x BLOCK_N/2 floats, so BLOCK_N >= 224 (128x128 B scales) at
//    BLOCK_M <= 128, and >= 144 at BLOCK_M 256, spill to local memory: correct, but slow; the heuristics stay below.
//    With per-row B scales the contiguous mode's bookkeeping already spills a few bytes at 176 (the heuristics'
//    cap there; the other modes do not), and with C (its loads in flight, add_c) from 208;
//  * with one accumulator each wave waits for its own wgmmas (wait_group 0) before promoting: the tensor cores idle
//    during a warpgroup's promotion unless the other warpgroup's wgmmas run meanwhile (JDG_ACC_PIPELINE and
//    JDG_SPLIT_HALVES keep a group queued while promoting, where the registers allow);
//  * clusters of 2 (JDG_CLUSTER) share A (or B) through multicast, but every stage then waits for both CTAs' consumers;
//  * A scales and per-row B scales come with each stage through TMA into shared memory; 128x128 B scales (1-3 per
//    K block, the same for every thread) are read from global memory (L1); the epilogue stores from registers, or
//    (JDG_TMA_STORE, bf16 without C) through a swizzled shared tile and TMA stores. Pointers: D and C must be
//    4-byte (bf16) / 8-byte (f32) aligned.
#pragma once

#include <jax_deepgemm/fp8_gemm_abi.h>
#include <jax_deepgemm/ptx.cuh>

#if !defined(JDG_N) || !defined(JDG_K) || !defined(JDG_BLOCK_M) || !defined(JDG_BLOCK_N) || !defined(JDG_STAGES)
#error "define JDG_N, JDG_K, JDG_BLOCK_M, JDG_BLOCK_N and JDG_STAGES before including fp8_gemm.cuh"
#endif
#if !defined(JDG_A_E5M2) || !defined(JDG_B_E5M2) || !defined(JDG_B_SCALE_PER_ROW) || !defined(JDG_OUT_F32) || \
    !defined(JDG_C_KIND)
#error "define JDG_A_E5M2, JDG_B_E5M2, JDG_B_SCALE_PER_ROW, JDG_OUT_F32 and JDG_C_KIND before including fp8_gemm.cuh"
#endif

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
constexpr int kSplitK = JDG_SPLIT_K;  // CTAs of a cluster sharing one tile's K blocks (see split_k_exchange)
#ifndef JDG_TAIL_SPLIT
#define JDG_TAIL_SPLIT 0
#endif
constexpr bool kTailSplit = JDG_TAIL_SPLIT != 0;  // a short last round's tiles split over K in pairs (tail_exchange)
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
// consumer warpgroup's first thread ([cta][2], two consumer warpgroups only) measured (see the end of the kernel),
// kept in the module for jdg_fp8_gemm_profile_report.
struct Fp8GemmProfileRecord {
  unsigned long long waited, cycles, ns, epilogue_cycles;
  int k_blocks, written;
};
constexpr int kFp8GemmProfileMaxCtas = 1024;
constexpr int kFp8GemmProfileRoles = 3;
__device__ Fp8GemmProfileRecord jdg_fp8_gemm_profile_records[kFp8GemmProfileMaxCtas][kFp8GemmProfileRoles];
// A timeline of the two-wave K loop: the first kTraceEvents events of each consumer warpgroup's first thread in the
// first kTraceCtas CTAs, each (cycles since the kernel's start, tile * 4096 + K block of the pass * 16 + wave * 4 +
// event: 0 wgmmas issued, 1 done, 2 promoted); count, then the events.
constexpr int kTraceCtas = 2, kTraceEvents = 640;
__device__ int jdg_fp8_gemm_trace_count[kTraceCtas][2];
__device__ unsigned int jdg_fp8_gemm_trace[kTraceCtas][2][kTraceEvents][2];
#endif
constexpr bool kContiguous = kMode == kFp8GemmContiguous;
constexpr bool kKGrouped = kMode == kFp8GemmKGrouped;
constexpr bool kWalksGroups = kMode == kFp8GemmRagged || kMode == kFp8GemmMasked;

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
constexpr int kSmemBytes = fp8_gemm_smem_bytes(kBlockM, kBlockN, kStages, kBScalePerRow, kTmaStore, kSplitK);
// The output tile in shared memory: kBlockN / 64 atoms of [BLOCK_M rows x 64 columns] bf16, each row 128 bytes with
// the 128-byte swizzle (16-byte chunk c of row r at chunk c ^ (r % 8)), one TMA store per atom.
constexpr int kDAtomBytes = kBlockM * 128;
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
constexpr int kBandN = 16 / kCluster;

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
static_assert(!kTmaStore || fp8_gemm_tma_store_supported(kMode, kN, kBlockN, kOutF32, kCKind),
              "the TMA-store epilogue takes bf16 out without C, not k-grouped, BLOCK_N % 64 == 0, N % 8 == 0");
static_assert(kWaves * 64 == fp8_gemm_d_box_rows(kBlockM), "a consumer warpgroup's rows are one D box");
static_assert(kSmemBarOffset + 2 * kStages * 8 + 16 + 1024 <= kSmemBytes, "layout disagrees with fp8_gemm_smem_bytes()");
static_assert(fp8_gemm_split_k_supported(kMode, kBlockM, kCluster, kSplitK),
              "JDG_SPLIT_K takes 1, or 2 / 4 for dense GEMMs with BLOCK_M <= 128 and no multicast (JDG_CLUSTER 1)");
static_assert(!kTailSplit || fp8_gemm_tail_split_supported(kMode, kK, kBlockM, kBlockN, kStages, kCluster, kSplitK),
              "JDG_TAIL_SPLIT takes dense, contiguous or masked GEMMs without multicast or split K, K > 128, and a "
              "partial tile that fits into the A and B stages");
static_assert(!kTailSplit || kBlockM * kBlockN * 4 <= kSmemSAOffset, "");
static_assert(kN >= 1, "N must be >= 1");
static_assert(kK >= 16 && kK % 16 == 0, "K must be a positive multiple of 16 (TMA row stride)");
static_assert(kCKind >= 0 && kCKind <= 2, "JDG_C_KIND must be 0, 1 or 2");
static_assert(kMode >= kFp8GemmDense && kMode <= kFp8GemmKGrouped, "JDG_GROUPED_MODE must be 0, 1, 2, 3 or 4");
static_assert(kMode == kFp8GemmDense || kKGrouped || kCKind == 0, "M-grouped GEMMs take no C");
static_assert(!kKGrouped || (kBScalePerRow && kOutF32 && kCKind != 1), "k-grouped is 1x128 x 1x128 with f32 out/C");
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

// This thread's A scales, tile rows r0 and r0 + 8 (one 16-row group of a wave), from the A scales of one stage as
// loaded: `sa_stage` = the stage's first float + (row0 & 3). They come in kSABoxes boxes of kSABoxRows tile rows, box
// b loaded from row (row0 & ~3) + b * kSABoxRows into a slot of kSASlotFloats floats.
__device__ __forceinline__ void read_a_scales(const float* sa_stage, int r0, float& sa0, float& sa1) {
  const int box = r0 / kSABoxRows;
  sa0 = sa_stage[box * (kSASlotFloats - kSABoxRows) + r0];
  sa1 = sa_stage[box * (kSASlotFloats - kSABoxRows) + r0 + 8];
}

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

// ceil(rows / BLOCK_M) without forming rows + BLOCK_M - 1 (rows may be close to 2^31).
__device__ __forceinline__ int m_blocks_of(int rows) { return rows / kBlockM + (rows % kBlockM != 0); }

// Maps the tile indices a CTA visits (increasing) to tiles. Dense and contiguous: the banded order over the whole
// [M, N] grid. Ragged and masked: groups in order, each a banded grid of ceil(rows_g / BLOCK_M) x N blocks; a cursor
// keeps the group of the last tile, so a CTA reads every group's size once (O(G + tiles) per CTA).
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
    if constexpr (kWalksGroups) rows = group_rows(args);
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
  // (group == G) runs to M. Masked: clamp(masked_m, 0, group_m).
  __device__ __forceinline__ int group_rows(const Fp8GemmArgs& args) const {
    if constexpr (kMode == kFp8GemmRagged) {
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
    int num_m_blocks, local = t, base_row = 0;
    if constexpr (kWalksGroups) {
      constexpr int kLastGroupOffset = kMode == kFp8GemmRagged ? 0 : -1;  // ragged walks G + 1 segments
      for (;;) {
        if (group > args.num_groups + kLastGroupOffset) return false;
        const int count = m_blocks_of(rows) * kNumTileCols;
        if (t < first_tile + count) break;
        first_tile += count;
        start += rows;  // ragged: <= M
        ++group;
        rows = group_rows(args);
      }
      num_m_blocks = m_blocks_of(rows);
      local = t - first_tile;
      base_row = kMode == kFp8GemmRagged ? start : group * args.group_m;
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
    const int total_rows = kWalksGroups ? rows : args.m;
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

// The register epilogue (f32 out, C, and the tiles the TMA store does not take) works in a *store layout*: the
// wgmma fragment gives each lane of a quad two columns of every 8-column chunk of its rows; one exchange with the
// neighbouring lane (to_store_layout) makes it four consecutive columns of every other chunk, so that each store and
// each load of C moves 16 bytes (f32) or 8 (bf16) instead of 8 or 4: half the instructions, each touching the same
// 8 rows' lines. In chunk pair p (chunks 2p, 2p + 1) and row half h (rows wave_row0 and + 8), a lane's four values
// are slot A = out[8p + 2h], out[8p + 2h + 1] and slot B = out[8p + 4 + 2h], out[8p + 4 + 2h + 1], at columns
// store_col(p, lane) .. + 3: lanes 0, 2 take chunk 2p's columns 0-3 / 4-7, lanes 1, 3 chunk 2p + 1's.
__device__ __forceinline__ int store_col(int n0, int p, int lane) {
  return n0 + 16 * p + 8 * (lane & 1) + 2 * (lane & 2);
}

__device__ __forceinline__ void to_store_layout(float (&out)[kAccRegs], int lane) {
  const bool odd = lane & 1;  // odd lanes keep slot B (their chunk 2p + 1 columns) and receive slot A, even ones the
                              // reverse: each sends the slot its neighbour needs
#pragma unroll
  for (int p = 0; p < kNumChunks / 2; ++p)
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        float& a = out[8 * p + 2 * h + i];
        float& b = out[8 * p + 4 + 2 * h + i];
        const float got = ptx::shfl_xor_f32(odd ? a : b, 1);
        if (odd) {
          a = got;
        } else {
          b = got;
        }
      }
}

// Whether the four columns at `col` can move as one vector: inside N, and (N % 4 == 0, and D's and C's addresses
// 16-byte aligned, `aligned`) at a vector-aligned address.
__device__ __forceinline__ bool vector4(int col, bool aligned) { return kN % 4 == 0 && aligned && col + 3 < kN; }

// C's raw bits at (row, col .. col + 3), 0 past N: f32 as four floats, bf16 as two 32-bit words (or, elementwise, four
// 16-bit values). They become floats only after a whole batch is loaded (c_quad_value): a conversion inside the
// bounds check's branch would wait there for its load.
template <int kKind>
struct CQuadBitsOf {
  float v[4];
};
template <>
struct CQuadBitsOf<1> {
  unsigned int w[4];  // vector: w[0], w[1] each two bf16; elementwise: w[i] the i-th bf16
};
using CQuadBits = CQuadBitsOf<kCKind>;

// (Templates on the C kind so that the other kind's branch, discarded, need not compile.)
template <int kKind = kCKind>
__device__ __forceinline__ CQuadBitsOf<kKind> load_c_quad(const void* c, int row, int col, bool aligned) {
  const unsigned long long idx = (unsigned long long)row * kN + col;
  CQuadBitsOf<kKind> bits{};
  if constexpr (kKind == 1) {
    const unsigned short* c16 = static_cast<const unsigned short*>(c) + idx;
    if (vector4(col, aligned)) {
      const uint2 w = *reinterpret_cast<const uint2*>(c16);
      bits.w[0] = w.x;
      bits.w[1] = w.y;
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i)
        if (col + i < kN) bits.w[i] = c16[i];
    }
  } else {
    const float* c32 = static_cast<const float*>(c) + idx;
    if (vector4(col, aligned)) {
      const float4 f = *reinterpret_cast<const float4*>(c32);
      bits.v[0] = f.x;
      bits.v[1] = f.y;
      bits.v[2] = f.z;
      bits.v[3] = f.w;
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i)
        if (col + i < kN) bits.v[i] = c32[i];
    }
  }
  return bits;
}

template <int kKind = kCKind>
__device__ __forceinline__ float c_quad_value(const CQuadBitsOf<kKind>& bits, int i, bool vector) {
  if constexpr (kKind == 1) {
    const unsigned int w = vector ? bits.w[i / 2] >> (16 * (i % 2)) : bits.w[i];
    return ptx::bf16_to_f32((unsigned short)(w & 0xFFFFu));
  } else {
    return bits.v[i];
  }
}

// C added to this thread's part of the tile (store layout) before any of it is stored, the loads of kCBatchPairs chunk
// pairs in flight at a time (8: a 128-wide wave's 16 loads per thread). Loads placed between the stores (a load of
// C, its add, its store to D, the next load) cannot be moved above the stores before them, since D may alias C:
// every load then waited out a memory round trip alone (NOTES 36). The empty asm bounds the loads in flight
// (registers; wider batches spilled at 176- and 192-wide tiles) by making the next batch's row index depend on this
// batch's sums.
constexpr int kCBatchPairs = 8;
__device__ __forceinline__ void add_c(const void* c, float (&out)[kWaves][kAccRegs], const int (&wave_row0)[kWaves],
                                      int rows, int d_row0, int n0, int lane, bool aligned) {
  constexpr int kPairs = kNumChunks / 2, kBatch = kCBatchPairs < kPairs ? kCBatchPairs : kPairs;
  unsigned int row_base = static_cast<unsigned int>(d_row0);  // see depend_on below
#pragma unroll
  for (int v = 0; v < kWaves; ++v)
#pragma unroll
    for (int p0 = 0; p0 < kPairs; p0 += kBatch) {
      CQuadBits bits[kBatch][2];
#pragma unroll
      for (int j = 0; j < kBatch && p0 + j < kPairs; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int r = wave_row0[v] + 8 * h;
          bits[j][h] = r < rows ? load_c_quad(c, static_cast<int>(row_base) + r, store_col(n0, p0 + j, lane), aligned)
                                : CQuadBits{};
        }
#pragma unroll
      for (int j = 0; j < kBatch && p0 + j < kPairs; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int i = 8 * (p0 + j) + 2 * h;
          const bool vector = vector4(store_col(n0, p0 + j, lane), aligned);
          out[v][i + 0] += c_quad_value(bits[j][h], 0, vector);
          out[v][i + 1] += c_quad_value(bits[j][h], 1, vector);
          out[v][i + 4] += c_quad_value(bits[j][h], 2, vector);
          out[v][i + 5] += c_quad_value(bits[j][h], 3, vector);
        }
      ptx::depend_on(row_base, out[v][8 * (p0 + kBatch < kPairs ? p0 + kBatch : kPairs) - 1]);
    }
}

// Store four consecutive outputs (row, col .. col + 3), those < N.
__device__ __forceinline__ void store_quad(const Fp8GemmArgs& args, int row, int col, float v0, float v1, float v2,
                                           float v3, bool aligned) {
  const unsigned long long idx = (unsigned long long)row * kN + col;
  const float v[4] = {v0, v1, v2, v3};
  if constexpr (kOutF32) {
    float* d = static_cast<float*>(args.d) + idx;
    if (vector4(col, aligned)) {
      *reinterpret_cast<float4*>(d) = make_float4(v0, v1, v2, v3);
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i)
        if (col + i < kN) d[i] = v[i];
    }
  } else {
    unsigned short* d = static_cast<unsigned short*>(args.d) + idx;
    if (vector4(col, aligned)) {
      *reinterpret_cast<uint2*>(d) = make_uint2(ptx::pack_bf16x2(v0, v1), ptx::pack_bf16x2(v2, v3));
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i)
        if (col + i < kN) d[i] = ptx::to_bf16(v[i]);
    }
  }
}

// out += v, or, for a contiguous pass that covers only some of this thread's rows (kRowMask), only where `keep`:
// a select rather than a multiplication by 0, so that NaN or Inf computed for a row of another expert (or a padding
// row's garbage) never reaches it.
template <bool kRowMask>
__device__ __forceinline__ void add_to(float& out, float v, bool keep) {
  if constexpr (kRowMask) {
    out = keep ? out + v : out;
  } else {
    out += v;
  }
}

// Promotion with per-column B scales: this thread's two columns of each 8-column chunk, a float2 of the stage's
// scales at shared address `col_scales` + 32 bytes per chunk (columns past N hold TMA's zero fill, and their products
// are zero too). They are read in groups of kScaleGroup chunks, each group's loads issued while the group before it
// is promoted, the first group's (`head`, load_col_scales) by the caller before it waits for the wgmmas: so no
// load's latency stands between the wgmmas and the promotion's FP32 work (NOTES 44: with one group of 8 chunks
// loaded at a time after the wait, FMULs waiting for them drew 9% of the k-grouped kernel's stall samples). Left
// alone, the compiler hoists every load to the top and spills the accumulators; making the loads of group g + 1
// depend on the results of group g - 1 (an empty asm) keeps two groups in flight. keep0 / keep1: see add_to.
constexpr int kScaleGroup = 4;
constexpr int kScaleGroups = (kNumChunks + kScaleGroup - 1) / kScaleGroup;

__device__ __forceinline__ void load_col_scales(Float2 (&scales)[kScaleGroup], unsigned int col_scales, int group) {
#pragma unroll
  for (int i = 0; i < kScaleGroup; ++i) {
    const int c = group * kScaleGroup + i;
    if (c < kNumChunks) ptx::ld_shared_f32x2(col_scales + 32 * c, scales[i].x, scales[i].y);
  }
}

// Two waves of a 256-row tile promote the same columns: the first (kKeep 1) keeps groups 1 .. kKeptGroups of its
// column scales in `kept`, the second (kKeep 2) takes them from there instead of shared memory (its group 0 is the
// head, read while its wgmmas run).
constexpr int kKeptGroups = kScaleGroups > 2 ? 2 : kScaleGroups - 1;
template <bool kRowMask, int kKeep = 0>
__device__ __forceinline__ void promote_per_row(float (&out)[kAccRegs], const float (&acc)[kAccRegs],
                                                unsigned int col_scales, const Float2 (&head)[kScaleGroup], float sa0,
                                                float sa1, bool keep0, bool keep1,
                                                Float2 (&kept)[kKeptGroups > 0 ? kKeptGroups : 1][kScaleGroup]) {
  Float2 cur[kScaleGroup];
#pragma unroll
  for (int i = 0; i < kScaleGroup; ++i) cur[i] = head[i];
#pragma unroll
  for (int g = 0; g < kScaleGroups; ++g) {
    Float2 next[kScaleGroup];
    const bool kept_group = g + 1 <= kKeptGroups;
    if (g + 1 < kScaleGroups) {
      if (kKeep == 2 && kept_group) {
#pragma unroll
        for (int i = 0; i < kScaleGroup; ++i) next[i] = kept[g][i];
      } else {
        load_col_scales(next, col_scales, g + 1);
        if (kKeep == 1 && kept_group) {
#pragma unroll
          for (int i = 0; i < kScaleGroup; ++i) kept[g][i] = next[i];
        }
      }
    }
#pragma unroll
    for (int i = 0; i < kScaleGroup; ++i) {
      const int c = g * kScaleGroup + i;
      if (c >= kNumChunks) continue;
      add_to<kRowMask>(out[4 * c + 0], sa0 * cur[i].x * acc[4 * c + 0], keep0);
      add_to<kRowMask>(out[4 * c + 1], sa0 * cur[i].y * acc[4 * c + 1], keep0);
      add_to<kRowMask>(out[4 * c + 2], sa1 * cur[i].x * acc[4 * c + 2], keep1);
      add_to<kRowMask>(out[4 * c + 3], sa1 * cur[i].y * acc[4 * c + 3], keep1);
    }
    if (g + 1 < kScaleGroups) {
      const int last = (g + 1) * kScaleGroup - 1 < kNumChunks ? (g + 1) * kScaleGroup - 1 : kNumChunks - 1;
      ptx::depend_on(col_scales, out[4 * last + 3]);
#pragma unroll
      for (int i = 0; i < kScaleGroup; ++i) cur[i] = next[i];
    }
  }
}

// Promotion with 128x128 B scales sb[] of the (up to 3) column blocks the tile touches; n_off = n0 % 128, an int or
// an IntConstant (then each chunk's block is known at compile time). `acc` holds the tile's 8-column chunks
// [kChunk0, kChunk0 + kChunks) (kSplitHalves: one half of the tile), `out` all of them.
template <bool kRowMask, int kChunk0 = 0, int kChunks = kNumChunks, typename NOff>
__device__ __forceinline__ void promote_blocks(float (&out)[kAccRegs], const float (&acc)[4 * kChunks],
                                               const float (&sb)[kMaxBScaleBlocks], float sa0, float sa1, NOff n_off,
                                               bool keep0, bool keep1) {
  if constexpr (kMaxBScaleBlocks == 1) {
    // BLOCK_N divides 128: the whole tile lies in one 128-column scale block, one scalar per K block.
    const float s0 = sa0 * sb[0], s1 = sa1 * sb[0];
#pragma unroll
    for (int i = 0; i < 4 * kChunks; ++i)
      add_to<kRowMask>(out[4 * kChunk0 + i], ((i / 2) % 2 == 0 ? s0 : s1) * acc[i], (i / 2) % 2 == 0 ? keep0 : keep1);
  } else {
    // The tile may straddle 128-column scale blocks: an 8-column chunk never does (n0 and 8c are multiples of 8).
    // Chunk c lies in block j when 8c >= j * 128 - n_off: the products of the row and block scales are formed once,
    // and each chunk only selects (the comparisons depend on the tile alone, not on the K block).
    float s0[kMaxBScaleBlocks], s1[kMaxBScaleBlocks];
#pragma unroll
    for (int j = 0; j < kMaxBScaleBlocks; ++j) {
      s0[j] = sa0 * sb[j];
      s1[j] = sa1 * sb[j];
    }
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const int col_chunk = kChunk0 + c;
      float r0 = s0[0], r1 = s1[0];
#pragma unroll
      for (int j = 1; j < kMaxBScaleBlocks; ++j) {
        if (8 * col_chunk >= j * 128 - n_off) {
          r0 = s0[j];
          r1 = s1[j];
        }
      }
      add_to<kRowMask>(out[4 * col_chunk + 0], r0 * acc[4 * c + 0], keep0);
      add_to<kRowMask>(out[4 * col_chunk + 1], r0 * acc[4 * c + 1], keep0);
      add_to<kRowMask>(out[4 * col_chunk + 2], r1 * acc[4 * c + 2], keep1);
      add_to<kRowMask>(out[4 * col_chunk + 3], r1 * acc[4 * c + 3], keep1);
    }
  }
}

// A pass's promotion of one wave: the row-selecting variants only where a contiguous pass leaves out some of this
// warp's rows (all_rows false), so that every other pass runs the plain FFMA stream.
template <int kChunk0 = 0, int kChunks = kNumChunks, typename NOff = int>
__device__ __forceinline__ void promote_blocks_of_pass(float (&out)[kAccRegs], const float (&acc)[4 * kChunks],
                                                       const float (&sb)[kMaxBScaleBlocks], float sa0, float sa1,
                                                       NOff n_off, bool all_rows, bool keep0, bool keep1) {
  if (kContiguous && !all_rows) {
    promote_blocks<kContiguous, kChunk0, kChunks>(out, acc, sb, sa0, sa1, n_off, keep0, keep1);
  } else {
    promote_blocks<false, kChunk0, kChunks>(out, acc, sb, sa0, sa1, n_off, true, true);
  }
}

template <int kKeep = 0>
__device__ __forceinline__ void promote_per_row_of_pass(float (&out)[kAccRegs], const float (&acc)[kAccRegs],
                                                        unsigned int col_scales, const Float2 (&head)[kScaleGroup],
                                                        float sa0, float sa1, bool all_rows, bool keep0, bool keep1,
                                                        Float2 (&kept)[kKeptGroups > 0 ? kKeptGroups : 1][kScaleGroup]) {
  if (kContiguous && !all_rows) {
    promote_per_row<kContiguous, kKeep>(out, acc, col_scales, head, sa0, sa1, keep0, keep1, kept);
  } else {
    promote_per_row<false, kKeep>(out, acc, col_scales, head, sa0, sa1, true, true, kept);
  }
}

// One 128-wide K block of one 64-row wave into `acc` (64 x N, N/2 floats per thread) as one wgmma group: 4 x wgmma
// m64nNk32, the first with scale-d = 0, so the tensor-core accumulator restarts at zero every K block (the promotion
// does the long accumulation in FP32). K step k is 32 bytes further along the swizzled rows: 2k in the descriptors'
// (address >> 4) field, ORed in (see desc_a0).
template <int N>
__device__ __forceinline__ void wgmma_k_block(float (&acc)[N / 2], unsigned long long desc_a,
                                              unsigned long long desc_b) {
  ptx::fence_operands(acc);
  ptx::wgmma_fence();
#pragma unroll
  for (int k = 0; k < kBlockK / 32; ++k)
    ptx::wgmma_fp8<N, kAE5M2, kBE5M2>(acc, desc_a | (2 * k), desc_b | (2 * k), k > 0 ? 1u : 0u);
  ptx::wgmma_commit_group();
}

// The 128x128 B scales of K block kb for the (up to 3) column blocks of the tile (global loads).
__device__ __forceinline__ void load_b_scales(float (&sb)[kMaxBScaleBlocks],
                                              const float* const (&b_scale_blk)[kMaxBScaleBlocks], int kb) {
#pragma unroll
  for (int j = 0; j < kMaxBScaleBlocks; ++j) sb[j] = ptx::ldg_f32(b_scale_blk[j] + kb);
}

// The B block scale of a pass (kBScaleChunks), 32 K blocks per global load: if `load`, lane l's `chunk` loads K block
// first + l's (clamped to kb_last, so never past the pass's K range); each K block's scale is then broadcast with a
// shuffle. Why not one load per K block where it is used: its address is warp-uniform, so ptxas keeps the value in a
// uniform register and multiplies it in between the K block's first and second wgmma, which then wait for the load
// (NOTES 15). Predicated inside the asm so that it loads in place: behind a branch, or rotating two chunks in
// registers, ptxas copies the loaded register at once and waits for the load there.
__device__ __forceinline__ void load_b_scale_chunk(float& chunk, const float* b_scale_col, int first, int kb_last,
                                                   int lane, bool load) {
  const int kb = first + lane < kb_last ? first + lane : kb_last;
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %2, 0;\n@p ld.global.nc.f32 %0, [%1];\n}\n"
               : "+f"(chunk)
               : "l"(b_scale_col + kb), "r"(static_cast<int>(load)));
}

// A partial tile in shared memory: BLOCK_M x BLOCK_N floats, each consumer thread's registers 16 bytes at a time,
// consecutive threads at consecutive addresses (conflict-free). send_partial writes this thread's part into another
// CTA's slot (`slot`: a shared::cluster address), each 16 bytes completing as many of the transaction count of that
// CTA's barrier `bar` (a shared::cluster address); add_partial adds this CTA's slot (a shared address) into `out`.
constexpr unsigned int kPartialBytes = kBlockM * kBlockN * 4;
static_assert(kPartialBytes == 4u * kNumMathThreads * kWaves * kAccRegs && kAccRegs % 4 == 0, "");

__device__ __forceinline__ void send_partial(const float (&out)[kWaves][kAccRegs], unsigned int slot,
                                             unsigned int bar) {
  slot += 16u * threadIdx.x;  // consumer threads are 0 .. kNumMathThreads - 1
#pragma unroll
  for (int v = 0; v < kWaves; ++v)
#pragma unroll
    for (int j = 0; j < kAccRegs / 4; ++j)
      ptx::st_async_f32x4(slot + (v * kAccRegs / 4 + j) * 16u * kNumMathThreads, out[v][4 * j], out[v][4 * j + 1],
                          out[v][4 * j + 2], out[v][4 * j + 3], bar);
}

__device__ __forceinline__ void add_partial(float (&out)[kWaves][kAccRegs], unsigned int slot) {
  slot += 16u * threadIdx.x;
#pragma unroll
  for (int v = 0; v < kWaves; ++v)
#pragma unroll
    for (int j = 0; j < kAccRegs / 4; ++j) {
      float x, y, z, w;
      ptx::ld_shared_f32x4(slot + (v * kAccRegs / 4 + j) * 16u * kNumMathThreads, x, y, z, w);
      out[v][4 * j] += x;
      out[v][4 * j + 1] += y;
      out[v][4 * j + 2] += z;
      out[v][4 * j + 3] += w;
    }
}

// The exchanges' barriers (kernel start): CTA 0's `full_bar` completes a phase on its consumer thread 0's arrival,
// which expects the bytes of the partial tiles, and those bytes (send_partial); a sender's `free_bar` on one arrival
// per consumer warp of CTA 0, once that warp has read the sender's slot.
constexpr unsigned int kExchangeFreeArrivals = kNumMathThreads / 32;

// CTA 0's consumer warps are done reading what CTA `cta` sent: one arrival per warp on its `free_bar` (CTA-scope
// release, as the pipeline's empty barriers: the reads' values are in registers by then).
__device__ __forceinline__ void free_partial(unsigned int free_bar, unsigned int cta, int lane) {
  __syncwarp();
  if (lane == 0) ptx::mbarrier_arrive_cluster(free_bar, cta);
}

// Split K, after a tile's K loop: CTA `part` > 0 of the cluster sends its FP32 partial tile `out` into slot part - 1
// of CTA 0's partial area (`partial`) and returns false: CTA 0 stores the tile. CTA 0 waits for every slot and adds
// them to its own partial in rank order, the same sum in every run whatever the timing, and returns true. A slot is
// written again only after CTA 0 has read it (free_partial; a fresh barrier counts as released). `phase`: the tiles
// exchanged so far, mod 2, the same in every CTA of the cluster.
__device__ __forceinline__ bool split_k_exchange(float (&out)[kWaves][kAccRegs], int part, unsigned int& phase,
                                                 unsigned int partial, unsigned int full_bar, unsigned int free_bar,
                                                 int lane) {
  bool stores = true;
  if (part > 0) {
    ptx::mbarrier_wait(free_bar, phase ^ 1u);
    send_partial(out, ptx::cluster_smem_addr(partial + (part - 1) * kPartialBytes, 0),
                 ptx::cluster_smem_addr(full_bar, 0));
    stores = false;
  } else {
    if (threadIdx.x == 0) ptx::mbarrier_arrive_expect_tx(full_bar, (kSplitK - 1) * kPartialBytes);
    ptx::mbarrier_wait<true>(full_bar, phase);
#pragma unroll
    for (int r = 1; r < kSplitK; ++r) add_partial(out, partial + (r - 1) * kPartialBytes);
#pragma unroll
    for (int r = 1; r < kSplitK; ++r) free_partial(free_bar, static_cast<unsigned int>(r), lane);
  }
  phase ^= 1u;
  return stores;
}

// Tail split, after the K loop of a split tile (the last tile of both CTAs of the pair, so each exchanges once):
// CTA 0 has no more stages coming, so once its consumers are done with them (free_partial on CTA 1's `free_bar`)
// CTA 1 writes its partial tile into CTA 0's A and B stages (`ring`) and returns false; CTA 0 adds the partial to
// its own and returns true: it stores the tile.
__device__ __forceinline__ bool tail_exchange(float (&out)[kWaves][kAccRegs], int part, unsigned int ring,
                                              unsigned int full_bar, unsigned int free_bar, int lane) {
  if (part > 0) {
    ptx::mbarrier_wait(free_bar, 0);
    ptx::fence_proxy_async();  // CTA 0's stages were last written by TMA and read by wgmma (the async proxy)
    send_partial(out, ptx::cluster_smem_addr(ring, 0), ptx::cluster_smem_addr(full_bar, 0));
    return false;
  }
  ptx::fence_proxy_async_shared();  // the stages' last TMA writes and wgmma reads come before CTA 1's writes
  free_partial(free_bar, 1, lane);
  if (threadIdx.x == 0) ptx::mbarrier_arrive_expect_tx(full_bar, kPartialBytes);
  ptx::mbarrier_wait<true>(full_bar, 0);
  add_partial(out, ring);
  return true;
}

// A pipeline barrier wait; with JDG_PROFILE_WAITS its cycles are added to `waited` (see the end of the kernel).
__device__ __forceinline__ void wait_stage(unsigned int bar, unsigned int parity, unsigned long long& waited) {
  if constexpr (kProfileWaits) {
    const long long start = clock64();
    ptx::mbarrier_wait(bar, parity);
    waited += static_cast<unsigned long long>(clock64() - start);
  } else {
    ptx::mbarrier_wait(bar, parity);
  }
}

// The ring slot after `stage` (wrapping at kRingSlots flips the phase that its barriers' waits expect).
__device__ __forceinline__ void next_slot(int& stage, unsigned int& phase) {
  if (++stage == kRingSlots) {
    stage = 0;
    phase ^= 1u;
  }
}

}  // namespace fp8_gemm
}  // namespace jdg

// ------------------------------------------------------------------------------------------------ the kernel

extern "C" __global__ void __launch_bounds__(jdg::fp8_gemm::kNumThreads, 1)
    jdg_fp8_gemm(const __grid_constant__ jdg::TmaDescriptor tensor_map_a,
                 const __grid_constant__ jdg::TmaDescriptor tensor_map_b,
                 const __grid_constant__ jdg::TmaDescriptor tensor_map_sa,
                 const __grid_constant__ jdg::TmaDescriptor tensor_map_sb,
                 const __grid_constant__ jdg::TmaDescriptor tensor_map_d, const jdg::Fp8GemmArgs args) {
  using namespace jdg;
  using namespace jdg::fp8_gemm;
  // JDG_PROFILE_WAITS: this thread's cycles in pipeline barrier waits and (consumers) in epilogues, its K blocks.
#if JDG_PROFILE_WAITS
  const long long kernel_start = clock64();
  const unsigned long long kernel_start_ns = ptx::global_timer_ns();
#endif
  unsigned long long waited = 0, epilogue_cycles = 0;
  int profiled_k_blocks = 0;
  [[maybe_unused]] int traced_tiles = 0, traced_events = 0;
  // JDG_PROFILE_WAITS: one event of the timeline (jdg_fp8_gemm_trace), by each consumer warpgroup's first thread.
  auto trace = [&](int kb, int wave, int event) {
#if JDG_PROFILE_WAITS
    const int wg = threadIdx.x / 128;
    if (threadIdx.x % 128 == 0 && wg < 2 && blockIdx.x < kTraceCtas && traced_events < kTraceEvents) {
      unsigned int* e = jdg_fp8_gemm_trace[blockIdx.x][wg][traced_events++];
      e[0] = static_cast<unsigned int>(clock64() - kernel_start);
      e[1] = static_cast<unsigned int>(traced_tiles * 4096 + kb * 16 + wave * 4 + event);
    }
#endif
  };

  // Dynamic shared memory, base rounded up to 1024 bytes (the ABI reserves 1024 bytes of slack for it).
  extern __shared__ unsigned char smem_raw[];
  const unsigned int smem_base = (ptx::smem_addr(smem_raw) + 1023u) & ~1023u;
  const unsigned int smem_a = smem_base;
  const unsigned int smem_b = smem_base + kSmemBOffset;
  const unsigned int smem_sa = smem_base + kSmemSAOffset;
  const unsigned int smem_sb = smem_base + kSmemSBOffset;
  const unsigned int smem_d = smem_base + kSmemDOffset;
  // The A-scale area as a generic pointer, for plain loads (the full barrier's wait orders them after TMA); the
  // per-row B scales are read through their shared address (promote_per_row).
  const unsigned char* smem_generic = smem_raw + (smem_base - ptx::smem_addr(smem_raw));
  const float* sa_stages = reinterpret_cast<const float*>(smem_generic + kSmemSAOffset);
  const unsigned int full_bars = smem_base + kSmemBarOffset;  // kStages x 8 bytes
  const unsigned int empty_bars = full_bars + 8 * kStages;    // kStages x 8 bytes
  const unsigned int partial_full_bar = empty_bars + 8 * kStages;  // split K and tail split: see *_exchange
  const unsigned int partial_free_bar = partial_full_bar + 8;

  const int warp = ptx::shfl0(static_cast<int>(threadIdx.x) / 32);  // warp-uniform by construction
  const int warpgroup = warp / 4;
  const int lane = static_cast<int>(threadIdx.x) % 32;

  if (threadIdx.x == kNumMathThreads) {  // first producer thread: set up while the others wait
    ptx::prefetch_tensormap(&tensor_map_a);
    ptx::prefetch_tensormap(&tensor_map_b);
    ptx::prefetch_tensormap(&tensor_map_sa);
    if constexpr (kBScalePerRow) ptx::prefetch_tensormap(&tensor_map_sb);
    if constexpr (kTmaStore) ptx::prefetch_tensormap(&tensor_map_d);
    for (int s = 0; s < kStages; ++s) {
      ptx::mbarrier_init(full_bars + 8 * s, 1);                       // the producer's arrive_expect_tx
      // One arrival per consumer warp of every CTA of the cluster: each fills the stage in all of them.
      ptx::mbarrier_init(empty_bars + 8 * s, kCluster * kNumMathThreads / 32);
    }
    if constexpr (kSplitK > 1 || kTailSplit) {  // see kExchangeFreeArrivals
      ptx::mbarrier_init(partial_full_bar, 1);
      ptx::mbarrier_init(partial_free_bar, kExchangeFreeArrivals);
    }
    ptx::fence_barrier_init();
  }
  // With a cluster, no CTA may multicast into the other's stages or arrive on its barriers before they exist.
  if constexpr (kLaunchCluster > 1) {
    ptx::cluster_sync_relaxed();
  } else {
    __syncthreads();
  }
  const int cluster_rank = kLaunchCluster > 1 ? static_cast<int>(ptx::cluster_cta_rank()) : 0;
  const int rank = kCluster > 1 ? cluster_rank : 0;        // multicast: which half of the A tile this CTA loads
  const int k_part = kSplitK > 1 ? cluster_rank : 0;       // split K: which run of K blocks this CTA takes
  const int first_tile = static_cast<int>(blockIdx.x) / kTileCtas;  // the cluster's (its CTAs are adjacent)
  const int tile_step = static_cast<int>(gridDim.x) / kTileCtas;

  // Tiles, and the passes of each tile (one per group whose B it multiplies; see first_pass), are enumerated
  // identically by the producer and the consumers: every pass moves tile.num_kb stages through the ring.
  TileScheduler scheduler;
  scheduler.init(args, rank, k_part, lane);
  Tile tile;

  if (warpgroup == kNumMathWarpgroups) {
    // ======================================== producer ========================================
    ptx::setmaxnreg_dec<kProducerRegs>();
    // One warp walks the tiles (contiguous mode needs the whole warp to read a tile's expert ids); its lane 0
    // issues every copy (TMA needs no more); the rest of the warpgroup only donated its registers.
    if (warp == 4 * kNumMathWarpgroups) {
      int stage = 0;
      unsigned int phase = 0;
      for (int t = first_tile; scheduler.get(t, args, tile); t += tile_step) {
        int ids[kIdSlots] = {};
        if constexpr (kContiguous) load_tile_experts(args, tile, lane, ids);
        for (int group = first_pass(tile, ids); group >= 0; group = next_pass(ids, group)) {
          const int b_row = group * kN + tile.n_block * kBlockN;  // G * N < 2^31 (checked by the host)
          with_k_range(tile, [&](const Tile& tile) {  // shadows the scheduler's tile (see with_k_range)
            // K block kb's boxes into ring slot `slot`, completing the barrier `full`.
            auto copy_k_block = [&](int kb, int slot, unsigned int full) {
              if constexpr (kCluster > 1) {
                // The A box is BLOCK_M / kCluster rows: this CTA's half for both, or (lone column) both halves here.
                constexpr int kHalfRows = kBlockM / kCluster;
                if (tile.shared_a) {
                  ptx::tma_load_2d_multicast(smem_a + slot * kSmemABytes + rank * kHalfRows * kBlockK, &tensor_map_a,
                                             full, kb * kBlockK, tile.row0 + rank * kHalfRows, (1u << kCluster) - 1u);
                } else {
#pragma unroll
                  for (int h = 0; h < kCluster; ++h)
                    ptx::tma_load_2d(smem_a + slot * kSmemABytes + h * kHalfRows * kBlockK, &tensor_map_a, full,
                                     kb * kBlockK, tile.row0 + h * kHalfRows);
                }
              } else {
                ptx::tma_load_2d(smem_a + slot * kSmemABytes, &tensor_map_a, full, kb * kBlockK, tile.row0);
              }
              if constexpr (kMulticastB) {
                // The B box is kHalfN rows: this CTA's half for both.
                ptx::tma_load_2d_multicast(smem_b + slot * kSmemBBytes + rank * kHalfN * kBlockK, &tensor_map_b, full,
                                           kb * kBlockK, b_row + rank * kHalfN, 3u);
              } else {
                ptx::tma_load_2d(smem_b + slot * kSmemBBytes, &tensor_map_b, full, kb * kBlockK, b_row);
              }
#pragma unroll
              for (int box = 0; box < kSABoxes; ++box)
                ptx::tma_load_2d(smem_sa + slot * kSmemSABytes + box * kSASlotFloats * 4, &tensor_map_sa, full,
                                 (tile.row0 & ~3) + box * kSABoxRows, kb);
              if constexpr (kBScalePerRow)
                ptx::tma_load_2d(smem_sb + slot * kSmemSBBytes, &tensor_map_sb, full, tile.n_block * kBlockN,
                                 group * kNumKBlocks + kb);
            };
            const int kb_end = tile.kb0 + tile.num_kb;
            for (int kb = tile.kb0; kb < kb_end; kb += kKPerRound) {
              const bool pair = kKPerRound == 2 && kb + 1 < kb_end;  // else one K block (paired: the pass's last)
              if (lane == 0) {
                // Wait until the consumers released this stage (first pass: parity 1 of a fresh barrier, no wait).
                // With a cluster, both CTAs' consumers: this producer's A half lands in both.
                wait_stage(empty_bars + 8 * stage, phase ^ 1u, waited);
                const unsigned int full = full_bars + 8 * stage;
                // The whole A tile: both halves land here.
                ptx::mbarrier_arrive_expect_tx(full, pair ? 2 * kStageTxBytes : kStageTxBytes);
                copy_k_block(kb, stage, full);
                if (pair) copy_k_block(kb + 1, stage + 1, full);
              }
              // A round takes kKPerRound slots, the pass's odd last K block included.
#pragma unroll
              for (int i = 0; i < kKPerRound; ++i) next_slot(stage, phase);
            }
          });
        }
      }
    }
  } else {
    // ======================================== consumers ========================================
    ptx::setmaxnreg_inc<kMathRegs>();

    // This thread's rows inside the tile: in wave v, rows wave_row0[v] and wave_row0[v] + 8 (wgmma fragment layout:
    // row 16 * warp + lane / 4 (+8) of the wave's 64), and its first column inside each 8-column chunk
    // (2 * (lane % 4), plus 0 and 1). Wave v of warpgroup w is the tile's 64-row sub-block w * kWaves + v.
    int wave_row0[kWaves];
#pragma unroll
    for (int v = 0; v < kWaves; ++v) wave_row0[v] = (warpgroup * kWaves + v) * 64 + (warp % 4) * 16 + lane / 4;
    const int chunk_col = 2 * (lane % 4);

    // wgmma descriptors of stage 0 (this warpgroup's first A rows, the B tile); stage s adds s * the stage size >> 4 to
    // the start-address field, which cannot carry out of it (shared addresses < 2^18). Every A and B block starts on
    // a 1024-byte boundary, so the field's low 6 bits are 0 and the K steps (+2k, k < 4) can be ORed in: a 32-bit
    // operation, where an add would be a 64-bit one (computing descriptors is most of a K block's non-FFMA work).
    const unsigned long long desc_a0 = ptx::make_smem_desc_sw128(smem_a + warpgroup * kWaves * 64 * kBlockK);
    const unsigned long long desc_b0 = ptx::make_smem_desc_sw128(smem_b);
    float acc[kAccRegs];          // tensor-core accumulator of one 128-wide K block (shared by the waves)
    float out[kWaves][kAccRegs];  // promoted FP32 result of the tile, per wave

    // A consumer warp is done with a stage: one arrival on its empty barrier in every CTA of the cluster (lane r
    // arrives in CTA r), since every CTA's producer refills the stage in all of them.
    auto release = [lane](unsigned int empty) {
      if constexpr (kCluster > 1) {
        if (lane < kCluster) ptx::mbarrier_arrive_cluster(empty, static_cast<unsigned int>(lane));
      } else {
        ptx::mbarrier_arrive_if_lane0(empty, lane);
      }
    };

    // JDG_ACC_PIPELINE: one pass over a tile's K blocks with two accumulators, so that the tensor cores always have
    // this warpgroup's next K block queued while it promotes the previous one (with one accumulator the promotion
    // waits for the wgmmas and the next wgmmas for the promotion; two warpgroups that wait on the same full barrier
    // tend to run in phase and leave the tensor cores idle during both promotions). kWaves == 1: the wave is this
    // warpgroup's 64 rows. A K block's stage is released once its wgmmas are done and (per-row B scales) its column
    // scales read; so two stages are held at a time, and the producer works on the others (paired stages: a pair is
    // released after its second K block, so up to two pairs are held, which is why pairing needs many stages).
    float acc_next[kAccRegs];
    // `all_rows`: a bool, or BoolConstant<true> for passes that have all of the warpgroup's rows (see `whole`), whose
    // copy then has no row-selecting promotion.
    auto pipelined_pass = [&](const Tile& tile, const float* const (&b_scale_blk)[kMaxBScaleBlocks], auto all_rows,
                              bool keep0, bool keep1, int& stage, unsigned int& phase) {
      const int n0 = tile.n_block * kBlockN;
      const int r0 = wave_row0[0];
      // Tiles up to 64 wide read a K block's A scales as soon as its wgmmas are issued, a K block before they are
      // used: their short tensor work per K block does not hide the shared-memory latency of a read after the wait
      // for the wgmmas (NOTES 45: up to 5% less time at M = 64 / 128; at 128 wide the early read was 0-2.7% slower).
      constexpr bool kEarlyAScales = kBlockN <= 64;
      // Issue K block kb's wgmmas into `a` from slot `st` (its B block scales into `sb` first: their global-load
      // latency hides behind the wait); kEarlyAScales: then its A scales into `sa`. `waits`: the slot's barrier is
      // waited for here (paired stages: only the first slot of a pair has one).
      auto issue = [&](auto waits, float (&a)[kAccRegs], float (&sb)[kMaxBScaleBlocks], float (&sa)[2], int kb,
                       int st, unsigned int ph) {
        if constexpr (!kBScalePerRow) load_b_scales(sb, b_scale_blk, kb);
        if constexpr (decltype(waits)::value) wait_stage(full_bars + 8 * st, ph, waited);
        wgmma_k_block<kBlockN>(a, desc_a0 + st * (kSmemABytes >> 4), desc_b0 + st * (kSmemBBytes >> 4));
        if constexpr (kEarlyAScales) {
          read_a_scales(sa_stages + st * (kSmemSABytes / 4) + (tile.row0 & 3), r0, sa[0], sa[1]);
        }
      };
      // K block in slot `st`, whose wgmmas into `a` are complete: promote it into out[0]; `releases`: then release
      // the round that began at slot `round_st` (paired: after its last K block).
      auto finish = [&](auto releases, float (&a)[kAccRegs], const float (&sb)[kMaxBScaleBlocks], const float (&sa)[2],
                        int st, int round_st) {
        ptx::fence_operands(a);
        float sa0, sa1;
        if constexpr (kEarlyAScales) {
          sa0 = sa[0];
          sa1 = sa[1];
        } else {
          read_a_scales(sa_stages + st * (kSmemSABytes / 4) + (tile.row0 & 3), r0, sa0, sa1);
        }
        constexpr bool kReleases = decltype(releases)::value;
        const unsigned int empty = empty_bars + 8 * round_st;
        if constexpr (kBScalePerRow) {
          const unsigned int col_scales = smem_sb + st * kSmemSBBytes + 4 * chunk_col;
          Float2 head[kScaleGroup];
          load_col_scales(head, col_scales, 0);
          Float2 unused[kKeptGroups > 0 ? kKeptGroups : 1][kScaleGroup];
          promote_per_row_of_pass(out[0], a, col_scales, head, sa0, sa1, all_rows, keep0, keep1, unused);
          if constexpr (kReleases) {
            __syncwarp();  // every lane has read its scales before the stage is released
            release(empty);
          }
        } else {
          if constexpr (kReleases) release(empty);
          promote_blocks_of_pass(out[0], a, sb, sa0, sa1, n0 % 128, all_rows, keep0, keep1);
        }
      };
      auto advance = [&] { next_slot(stage, phase); };
      // Even K blocks (acc) begin a round: they wait for it; odd ones (acc_next) end it: they release it. Unpaired,
      // every K block is a round of its own.
      constexpr bool kPaired = kKPerRound == 2;
      constexpr BoolConstant<true> kYes{};
      constexpr BoolConstant<!kPaired> kUnpaired{};

      // The two accumulators alternate (acc: even steps, acc_next: odd), unrolled by two so that each is a fixed
      // set of registers; the steady-state loop has the same waits on every path (ptxas serializes the wgmmas when
      // it cannot tell which group a wait retires). `sb_*` hold the in-flight K blocks' B block scales, `st_*` their
      // stages.
      // (Paired, an odd K block's slot is its even one's plus one, inside the pair: st_odd - 1 is the round's.)
      float sb_even[kMaxBScaleBlocks], sb_odd[kMaxBScaleBlocks], sa_even[2], sa_odd[2];
      const int kb_end = tile.kb0 + tile.num_kb;
      int kb = tile.kb0, st_even = stage, st_odd = 0;
      issue(kYes, acc, sb_even, sa_even, kb, stage, phase);
      advance();
      for (; kb + 2 < kb_end; kb += 2) {
        st_odd = stage;
        issue(kUnpaired, acc_next, sb_odd, sa_odd, kb + 1, stage, phase);
        advance();
        ptx::wgmma_wait_group<1>();  // kb's group is done; kb + 1's runs on
        finish(kUnpaired, acc, sb_even, sa_even, st_even, st_even);
        st_even = stage;
        issue(kYes, acc, sb_even, sa_even, kb + 2, stage, phase);
        advance();
        ptx::wgmma_wait_group<1>();
        finish(kYes, acc_next, sb_odd, sa_odd, st_odd, st_odd - (kPaired ? 1 : 0));
      }
      if (kb + 1 < kb_end) {  // two K blocks left, kb's in flight
        st_odd = stage;
        issue(kUnpaired, acc_next, sb_odd, sa_odd, kb + 1, stage, phase);
        advance();
        ptx::wgmma_wait_group<1>();
        finish(kUnpaired, acc, sb_even, sa_even, st_even, st_even);
        ptx::wgmma_wait_group<0>();
        finish(kYes, acc_next, sb_odd, sa_odd, st_odd, st_odd - (kPaired ? 1 : 0));
      } else {
        ptx::wgmma_wait_group<0>();
        finish(kYes, acc, sb_even, sa_even, st_even, st_even);  // paired: a round of its own, whose odd slot is idle
        if constexpr (kPaired) advance();
      }
    };

    // JDG_SPLIT_HALVES: one pass over a tile's K blocks, each K block's wgmmas as two half-width groups (lo: the
    // tile's first BLOCK_N/2 columns, hi: the rest) into acc_lo / acc_hi. Steady state, per K block kb: lo(kb)
    // retires and is promoted while hi(kb) runs; lo(kb + 1) is issued; hi(kb) retires, its stage is released and it
    // is promoted while lo(kb + 1) runs; hi(kb + 1) is issued. So this warpgroup always has a group queued while it
    // promotes, and two stages are held at a time. The B half's rows start kHalfN * 128 bytes into the stage's B
    // tile, a multiple of 1024: its descriptor keeps the K-step bits free (see desc_b0).
    float acc_lo[kAccRegs / 2], acc_hi[kAccRegs / 2];
    // `split`: BoolConstant<kSplitHalves>, so that the body is compiled only for the kernels that take it.
    // `all_rows` as in pipelined_pass.
    // `n_off`: n0 % 128, an int or (160-, 192- and 224-wide tiles) an IntConstant, see the call.
    auto split_pass = [&](auto split, const Tile& tile, const float* const (&b_scale_blk)[kMaxBScaleBlocks],
                          auto all_rows, bool keep0, bool keep1, int& stage, unsigned int& phase, auto n_off) {
      if constexpr (decltype(split)::value) {
        const int r0 = wave_row0[0];
        auto issue = [&](float (&a)[kAccRegs / 2], int half, int st) {
          wgmma_k_block<kHalfN>(a, desc_a0 + st * (kSmemABytes >> 4),
                                desc_b0 + st * (kSmemBBytes >> 4) + half * (kHalfN * 128 >> 4));
        };
        auto promote = [&](auto half, const float (&a)[kAccRegs / 2], const float (&sb)[kMaxBScaleBlocks], float sa0,
                           float sa1) {
          constexpr int kChunk0 = decltype(half)::value ? kHalfChunks : 0;
          promote_blocks_of_pass<kChunk0, kHalfChunks>(out[0], a, sb, sa0, sa1, n_off, all_rows, keep0, keep1);
        };
        auto advance = [&] {
          next_slot(stage, phase);
        };
        // sa0 / sa1: the A scales of the K block in stage st_kb; read before the stage is released.
        auto a_scales = [&](int st_kb, float& sa0, float& sa1) {
          read_a_scales(sa_stages + st_kb * (kSmemSABytes / 4) + (tile.row0 & 3), r0, sa0, sa1);
        };
        // At the top of each K block kb (stage st, B block scales sb) only lo(kb) is in flight: the loop has the
        // same waits on every path, which ptxas needs to keep the wgmmas asynchronous.
        // kb_end through an empty asm: the compiler must not know that the last K block's branch below is taken.
        int kb_end = tile.kb0 + tile.num_kb;
        asm volatile("" : "+r"(kb_end));
        float sb[kMaxBScaleBlocks], sb_next[kMaxBScaleBlocks], sa0, sa1;
        int st = stage;
        load_b_scales(sb, b_scale_blk, tile.kb0);
        wait_stage(full_bars + 8 * st, phase, waited);
        issue(acc_lo, 0, st);
        advance();
        int kb = tile.kb0;
        for (; kb + 1 < kb_end; ++kb) {
          issue(acc_hi, 1, st);
          a_scales(st, sa0, sa1);
          ptx::wgmma_wait_group<1>();  // lo(kb) is done, hi(kb) runs on
          ptx::fence_operands(acc_lo);
          promote(BoolConstant<false>{}, acc_lo, sb, sa0, sa1);
          const int st_next = stage;
          load_b_scales(sb_next, b_scale_blk, kb + 1);
          wait_stage(full_bars + 8 * st_next, phase, waited);
          issue(acc_lo, 0, st_next);
          advance();
          ptx::wgmma_wait_group<1>();  // hi(kb) is done, lo(kb + 1) runs on
          ptx::fence_operands(acc_hi);
          release(empty_bars + 8 * st);
          promote(BoolConstant<true>{}, acc_hi, sb, sa0, sa1);
#pragma unroll
          for (int j = 0; j < kMaxBScaleBlocks; ++j) sb[j] = sb_next[j];
          st = st_next;
        }
        // The last K block. The branch is always taken (num_kb >= 1), but without the other path ptxas cannot tell
        // which group each wait retires and serializes every wgmma of the kernel (C7514).
        if (kb < kb_end) {
          issue(acc_hi, 1, st);
          a_scales(st, sa0, sa1);
          ptx::wgmma_wait_group<1>();
          ptx::fence_operands(acc_lo);
          promote(BoolConstant<false>{}, acc_lo, sb, sa0, sa1);
          ptx::wgmma_wait_group<0>();
          ptx::fence_operands(acc_hi);
          release(empty_bars + 8 * st);
          promote(BoolConstant<true>{}, acc_hi, sb, sa0, sa1);
        } else {
          ptx::wgmma_wait_group<0>();
          ptx::fence_operands(acc_lo);
        }
      }
    };

    int stage = 0;
    unsigned int phase = 0;
    unsigned int split_phase = 0;  // split K: the tiles exchanged so far, mod 2
    for (int t = first_tile; scheduler.get(t, args, tile); t += tile_step) {
      const int n0 = tile.n_block * kBlockN;

#pragma unroll
      for (int v = 0; v < kWaves; ++v)
#pragma unroll
        for (int i = 0; i < kAccRegs; ++i) out[v][i] = 0.0f;

      int ids[kIdSlots] = {};            // contiguous: the tile's expert ids (as next_expert wants them)
      int id0[kWaves] = {}, id1[kWaves] = {};  // contiguous: the experts of this thread's two rows per wave
      if constexpr (kContiguous) {
        load_tile_experts(args, tile, lane, ids);
#pragma unroll
        for (int v = 0; v < kWaves; ++v) {
          id0[v] = row_expert(args, tile, wave_row0[v]);
          id1[v] = row_expert(args, tile, wave_row0[v] + 8);
        }
      }

      for (int group = first_pass(tile, ids); group >= 0; group = next_pass(ids, group)) {
        // Which waves take the pass, and which of this thread's rows. `active` is uniform over the warpgroup
        // (wgmma is warpgroup-wide): every warp computes it from the same data.
        // `whole`: every row of the warpgroup's waves is the pass's (contiguous; always so otherwise), also uniform
        // over the warpgroup: such passes take the K loop without the row-selecting promotion.
        bool active[kWaves], keep0[kWaves], keep1[kWaves], all_rows[kWaves];
        bool any_active = false, whole = true;
#pragma unroll
        for (int v = 0; v < kWaves; ++v) {
          const int sub = warpgroup * kWaves + v;  // slots 2 * sub and 2 * sub + 1 hold its rows' ids
          keep0[v] = keep1[v] = all_rows[v] = true;
          if constexpr (kContiguous) {
            bool mine = false, only_mine = true;
#pragma unroll
            for (int s = 0; s < kIdSlots; ++s) {
              if (s / 2 != sub) continue;
              mine |= ids[s] == group;
              only_mine &= ids[s] == group;
            }
            active[v] = ptx::vote_any(mine);
            whole &= ptx::vote_all(only_mine);
            keep0[v] = id0[v] == group;
            keep1[v] = id1[v] == group;
            all_rows[v] = ptx::vote_all(keep0[v] && keep1[v]);
          } else {
            active[v] = sub * 64 < tile.rows;  // masked / ragged / M tail: skip rows that are not stored
          }
          any_active |= active[v];
        }

        const float* b_scale = args.b_scale + (long long)group * kNumScaleNBlocks * kNumKBlocks;  // 128x128 only
        const float* b_scale_blk[kMaxBScaleBlocks];
#pragma unroll
        for (int j = 0; j < kMaxBScaleBlocks; ++j) {
          const int nb = n0 / 128 + j;
          b_scale_blk[j] = b_scale + (nb < kNumScaleNBlocks ? nb : kNumScaleNBlocks - 1) * kNumKBlocks;
        }

        // `tile` shadows the scheduler's on purpose (with_k_range): the pass sees only this one.
        with_k_range(tile, [&](const Tile& tile) {
          if constexpr (kAccPipeline) {
            if (any_active && tile.num_kb > 0) {  // k-grouped: an empty segment's tile has no K block
              if (!kContiguous || whole) {
                pipelined_pass(tile, b_scale_blk, BoolConstant<true>{}, keep0[0], keep1[0], stage, phase);
              } else {
                pipelined_pass(tile, b_scale_blk, all_rows[0], keep0[0], keep1[0], stage, phase);
              }
              return;
            }
          }
          if constexpr (kSplitHalves) {
            if (any_active && tile.num_kb > 0) {
              constexpr BoolConstant<kSplitHalves> split{};
              auto run = [&](auto n_off) {
                if (!kContiguous || whole) {
                  split_pass(split, tile, b_scale_blk, BoolConstant<true>{}, keep0[0], keep1[0], stage, phase, n_off);
                } else {
                  split_pass(split, tile, b_scale_blk, all_rows[0], keep0[0], keep1[0], stage, phase, n_off);
                }
              };
              // A tile that straddles scale blocks starts at one of 128 / gcd(BLOCK_N, 128) offsets in its first
              // one (192 wide: 0 or 64; 160 wide: 0, 32, 64 or 96): the K loop is compiled for each, up to
              // kMaxCompiledScaleOffsets, so that every chunk's block scale is chosen at compile time (with the
              // offset at run time the promotion selected per chunk: 32 FSEL and 29 PLOP3 beside its 96 FFMA per K
              // block at 192, NOTES 32).
              if constexpr (kMaxBScaleBlocks > 1 && kScaleOffsets <= kMaxCompiledScaleOffsets) {
                with_constant_offset<kScaleOffsetStep, kScaleOffsets>(n0 % 128, run);
              } else {
                run(n0 % 128);
              }
              return;
            }
          }
          const int kb_end = tile.kb0 + tile.num_kb;
          if constexpr (kKPerRound > 1) {
            // Paired kernels compute in pipelined_pass; a pass that reaches here has nothing to compute, but its
            // rounds must be consumed in order (waited for, so that the release counts for this round, then released).
            for (int kb = tile.kb0; kb < kb_end; kb += kKPerRound) {
              wait_stage(full_bars + 8 * stage, phase, waited);
              release(empty_bars + 8 * stage);
#pragma unroll
              for (int i = 0; i < kKPerRound; ++i) next_slot(stage, phase);
            }
            return;
          }
          // kBScaleChunks: the B block scale 32 K blocks per load, broadcast with a shuffle (see load_b_scale_chunk):
          // the first chunk loads here, the next one after the last K block of a chunk (a K block to land).
          float sb_chunk = 0.f;
          if constexpr (kBScaleChunks)
            load_b_scale_chunk(sb_chunk, b_scale_blk[0], tile.kb0, kb_end - 1, lane, any_active && tile.num_kb > 0);
          // Two waves per warpgroup: each K block's stage is waited for ahead, while the wgmmas of the K block before
          // it run (after the last wave's wgmmas are issued): the barrier check then costs the tensor cores nothing
          // between K blocks.
          constexpr bool kWaitAhead = kWaves == 2;
          if (kWaitAhead && any_active && tile.num_kb > 0) wait_stage(full_bars + 8 * stage, phase, waited);
          // Two waves per warpgroup: the K loop is compiled twice, once for passes in which both waves are active with
          // all of their rows (every tile but an M tail or a contiguous expert boundary) without the per-K-block checks
          // of which are and without the row-selecting promotion.
          // Two waves with 128x128 B scales: unrolled by 2, so that ptxas may schedule one K block's loop tail with
          // the next one's head: contiguous and ragged -0.2% to -1.9%, masked 256 x 128 tiles -0.1% to -3%, dense
          // within +-0.4%. Per-row B scales (k-grouped) keep the rolled loop (unrolled, it spills and ran 12-14%
          // slower), and so do 128-row tiles (nothing measured to gain; unrolled, some wide ones spill) (NOTES 51).
          constexpr int kKLoopUnroll = kWaves == 2 && !kBScalePerRow ? 2 : 1;
          auto k_loop = [&](auto all_active) {
            constexpr bool kAll = decltype(all_active)::value;
#pragma unroll(kKLoopUnroll)
            for (int kb = tile.kb0; kb < kb_end; ++kb) {
              const unsigned int empty = empty_bars + 8 * stage;
              if (kSplitHalves || (!kAll && !any_active)) {  // kSplitHalves: active passes take split_pass
                // Nothing to compute, but the stage must be consumed in order: wait for it (so that the arrival
                // below counts for this round of the empty barrier, not the previous one), then release it.
                wait_stage(full_bars + 8 * stage, phase, waited);
                release(empty);
                next_slot(stage, phase);
                continue;
              }
              const int in_chunk = static_cast<int>(static_cast<unsigned int>(kb - tile.kb0) % 32u);  // kb >= kb0
              float sb[kMaxBScaleBlocks];  // 128x128 B scales of the (up to 3) column blocks the tile touches
              // Without chunks: the global scale loads before waiting for the tiles, so their latency hides behind
              // the wait.
              if constexpr (!kBScalePerRow && !kBScaleChunks) load_b_scales(sb, b_scale_blk, kb);

              // Wait for the stage's TMA bytes (tiles and scales), unless that was done ahead.
              if (!kWaitAhead) wait_stage(full_bars + 8 * stage, phase, waited);
              const bool last_kb = kb + 1 == kb_end;
              const unsigned int next_full = full_bars + 8 * (stage + 1 == kRingSlots ? 0 : stage + 1);
              const unsigned int next_phase = stage + 1 == kRingSlots ? phase ^ 1u : phase;
              const float* sa_stage = sa_stages + stage * (kSmemSABytes / 4) + (tile.row0 & 3);
              const unsigned int col_scales = smem_sb + stage * kSmemSBBytes + 4 * chunk_col;
              const unsigned long long desc_b = desc_b0 + stage * (kSmemBBytes >> 4);
              Float2 kept[kKeptGroups > 0 ? kKeptGroups : 1][kScaleGroup];  // per-row B scales, see promote_per_row

#pragma unroll
              for (int v = 0; v < kWaves; ++v) {
                if (kAll || active[v]) {
                  float sa0, sa1;
                  read_a_scales(sa_stage, wave_row0[v], sa0, sa1);
                  trace(kb - tile.kb0, v, 0);
                  wgmma_k_block<kBlockN>(acc, desc_a0 + stage * (kSmemABytes >> 4) + v * (64 * kBlockK >> 4), desc_b);
                  // Broadcast while the wgmmas run: the tile's first chunk may still be loading.
                  if constexpr (kBScaleChunks) sb[0] = ptx::shfl_f32(sb_chunk, in_chunk);
                  if (kWaitAhead && v == kWaves - 1 && !last_kb) wait_stage(next_full, next_phase, waited);
                  Float2 head[kScaleGroup];  // per-row B scales: the first group, read while the wgmmas run
                  if constexpr (kBScalePerRow) load_col_scales(head, col_scales, 0);
                  ptx::wgmma_wait_group<0>();
                  ptx::fence_operands(acc);
                  trace(kb - tile.kb0, v, 1);
                  // The last wave's wgmmas of this warp finished reading the stage: release it (one arrival per
                  // warp), unless the promotion still reads its per-row B scales.
                  if (!kBScalePerRow && v == kWaves - 1) release(empty);

                  // Promotion (DeepSeek-V3): out += a_scale(row) * b_scale(col) * acc, in FP32 on the CUDA cores.
                  // (kAll: the pass has all of the waves' rows, see `whole`.)
                  if constexpr (kBScalePerRow) {
                    // Both waves of a whole pass (kAll): the second takes the first's column scales (kept; not in
                    // clusters, whose release needs the registers: ptxas spills there).
                    constexpr bool kKeepCols = kWaves == 2 && kCluster == 1;
                    if (kAll && kKeepCols && v == 0) {
                      promote_per_row_of_pass<1>(out[v], acc, col_scales, head, sa0, sa1, true, keep0[v], keep1[v],
                                                 kept);
                    } else if (kAll && kKeepCols) {
                      promote_per_row_of_pass<2>(out[v], acc, col_scales, head, sa0, sa1, true, keep0[v], keep1[v],
                                                 kept);
                    } else {
                      promote_per_row_of_pass(out[v], acc, col_scales, head, sa0, sa1, kAll || all_rows[v], keep0[v],
                                              keep1[v], kept);
                    }
                  } else {
                    promote_blocks_of_pass(out[v], acc, sb, sa0, sa1, n0 % 128, kAll || all_rows[v], keep0[v],
                                           keep1[v]);
                  }
                  trace(kb - tile.kb0, v, 2);
                } else if (v == kWaves - 1) {
                  if (kWaitAhead && !last_kb) wait_stage(next_full, next_phase, waited);
                  if (!kBScalePerRow) release(empty);  // an earlier wave was active and is done with the stage
                }
              }
              if constexpr (kBScalePerRow) {
                __syncwarp();  // every lane has read its scales before the stage is released
                release(empty);
              } else if constexpr (kBScaleChunks) {
                load_b_scale_chunk(sb_chunk, b_scale_blk[0], kb + 1, kb_end - 1, lane, in_chunk == 31);
              }
              next_slot(stage, phase);
            }
          };
          if constexpr (kWaves == 2) {
            if (active[0] && active[1] && whole) {
              k_loop(BoolConstant<true>{});
            } else {
              k_loop(BoolConstant<false>{});
            }
          } else {
            k_loop(BoolConstant<false>{});
          }
        });
      }

      if constexpr (kSplitK > 1) {
        // The other CTAs' partial tiles go to CTA 0, which stores the sum.
        if (!split_k_exchange(out, k_part, split_phase, smem_base + kSmemPartialOffset, partial_full_bar,
                              partial_free_bar, lane))
          continue;
      }
      // The epilogue: C, the TMA store or the register stores. A lambda, so that a tail split's tiles take their own
      // copy and whole tiles' path has no exchange merged into it (a profile build without the exchange ran 2.7%
      // fewer cycles per K block; with this copy the tail kernels' per-tile cost stayed, NOTES 27).
      auto epilogue = [&] {
        const long long epilogue_start = kProfileWaits ? clock64() : 0;
        if constexpr (kProfileWaits) {
          profiled_k_blocks += tile.num_kb;
          ++traced_tiles;
        }
        if ((kLoneColumn || kMulticastB) && tile.rows == 0) return;  // a pair's tile past M (uniform over the CTA)
        // Ragged and masked tiles: a warpgroup takes the TMA store only when all of its rows are the tile's own
        // (fp8_gemm_abi.h), so that of a partial tile only the warpgroup its last row falls in (and any past it)
        // keeps the register stores; the choice is uniform over each warpgroup, as the named barriers below need.
        constexpr bool kTilesOwnRows = kMode == kFp8GemmDense || kContiguous;
        if (kTmaStore && (kTilesOwnRows || (warpgroup + 1) * kWaves * 64 <= tile.rows)) {
          // Epilogue through shared memory, each consumer warpgroup on its own rows (kWaves x 64 of the tile, one
          // box of the D tensor map per 64-column atom): once its previous tile's stores have read its part of the
          // staging tile, its warps write their bf16 fragments there with stmatrix (swizzled, conflict-free), and
          // one of its threads stores each atom with TMA, clipped at M and N, without waiting: the stores overlap
          // the next tile's main loop. Its own named barrier, not one over both warpgroups: the first to finish its
          // last K block stores and starts the next tile, whose wgmmas then run while the other one stores (a
          // common barrier left the tensor cores idle through the epilogue, and through the wait for the later
          // warpgroup). The producer is already loading the next tile's stages meanwhile.
          constexpr int kStoreRows = kWaves * 64;  // fp8_gemm_d_box_rows
          const bool issuer = threadIdx.x % 128 == 0;
          const unsigned int barrier = 1 + warpgroup;  // ids 1 and 2 (0 is __syncthreads')
          const int part = warpgroup * kStoreRows;     // the warpgroup's first row in the tile
          if (issuer) ptx::bulk_wait_group_read<0>();
          ptx::named_barrier_sync(barrier, 128);
          // One stmatrix per 16 x 16 block: matrices (rows +0, chunk c), (rows +8, c), (+0, c + 1), (+8, c + 1) of the
          // warp's 16 rows; lane l gives the address of row l % 8 of matrix l / 8. Row r, 16-byte chunk q: atom q / 8,
          // chunk (q % 8) ^ (r % 8) of the row (an 8-lane group's 8 rows hit 8 different 16-byte bank groups).
          static_assert(kNumChunks % 2 == 0, "");
          const int my_half = (lane / 8) % 2, my_chunk_step = lane / 16;
#pragma unroll
          for (int v = 0; v < kWaves; ++v) {
            const int r = part + v * 64 + (warp % 4) * 16 + 8 * my_half + lane % 8;
#pragma unroll
            for (int c = 0; c < kNumChunks; c += 2) {
              const int q = c + my_chunk_step;
              ptx::stmatrix_x4(smem_d + (q / 8) * kDAtomBytes + r * 128 + (((q % 8) ^ (r % 8)) * 16),
                               ptx::pack_bf16x2(out[v][4 * c + 0], out[v][4 * c + 1]),
                               ptx::pack_bf16x2(out[v][4 * c + 2], out[v][4 * c + 3]),
                               ptx::pack_bf16x2(out[v][4 * c + 4], out[v][4 * c + 5]),
                               ptx::pack_bf16x2(out[v][4 * c + 6], out[v][4 * c + 7]));
            }
          }
          ptx::fence_proxy_async_shared();
          ptx::named_barrier_sync(barrier, 128);
          if (issuer) {
#pragma unroll
            for (int a = 0; a < kBlockN / 64; ++a)  // atoms wholly past N (the last N tile) store nothing
              if (n0 + 64 * a < kN)
                ptx::tma_store_2d(&tensor_map_d, smem_d + a * kDAtomBytes + part * 128, n0 + 64 * a,
                                  tile.d_row0 + part);
            ptx::bulk_commit_group();
          }
        } else {
          // Epilogue: straight from registers to global memory in the store layout (to_store_layout), only the
          // tile's own rows and columns < N, C added first. (The producer is already loading the next tile's stages
          // meanwhile.) Vector accesses need 16-byte aligned D and C (uniform over the CTA).
          const bool aligned =
              ((reinterpret_cast<unsigned long long>(args.d) | reinterpret_cast<unsigned long long>(args.c)) & 15) == 0;
#pragma unroll
          for (int v = 0; v < kWaves; ++v) to_store_layout(out[v], lane);
          if constexpr (kCKind != 0) add_c(args.c, out, wave_row0, tile.rows, tile.d_row0, n0, lane, aligned);
#pragma unroll
          for (int v = 0; v < kWaves; ++v) {
#pragma unroll
            for (int p = 0; p < kNumChunks / 2; ++p) {
              const int col = store_col(n0, p, lane);
#pragma unroll
              for (int h = 0; h < 2; ++h) {
                const int r = wave_row0[v] + 8 * h;
                if (r < tile.rows)
                  store_quad(args, tile.d_row0 + r, col, out[v][8 * p + 2 * h], out[v][8 * p + 2 * h + 1],
                             out[v][8 * p + 4 + 2 * h], out[v][8 * p + 4 + 2 * h + 1], aligned);
              }
            }
          }
        }
        if constexpr (kProfileWaits) epilogue_cycles += static_cast<unsigned long long>(clock64() - epilogue_start);
      };
      if constexpr (kTailSplit) {
        if (tile.part >= 0) {  // uniform over the CTA: CTA 1 sends its partial tile, CTA 0 adds it and stores
          if (tail_exchange(out, tile.part, smem_base, partial_full_bar, partial_free_bar, lane)) epilogue();
          continue;
        }
      }
      epilogue();
    }
    // The last tile's stores (each warpgroup's) must be done with the staging tile (and their writes issued) before
    // the CTA exits.
    if (kTmaStore && threadIdx.x % 128 == 0) ptx::bulk_wait_group<0>();
    // Split K: a sender leaves only after CTA 0 freed its last partial tile, so that CTA 0's arrival on this CTA's
    // free barrier has landed (see the cluster barrier below).
    if constexpr (kSplitK > 1) {
      if (k_part > 0) ptx::mbarrier_wait(partial_free_bar, split_phase ^ 1u);
    }
  }
#if JDG_PROFILE_WAITS
  {
    // Every CTA's TMA-issuing producer lane and the first thread of each consumer warpgroup: a producer that waits
    // long found the ring full (the consumers set the pace); a consumer that waits long found it empty (the loads
    // do). The consumers also report their epilogues' cycles and K blocks (of all passes, counted once per tile);
    // cycles over nanoseconds give the SM clock the kernel ran at. Stored, not printed: a printf here is a function
    // call, and ptxas serializes every wgmma of a kernel that makes one (C7510); jdg_fp8_gemm_profile_report prints
    // them.
    const bool producer = warpgroup == kNumMathWarpgroups && warp == 4 * kNumMathWarpgroups && lane == 0;
    const int role = producer ? 1 : threadIdx.x == 0 ? 0 : threadIdx.x == 128 && kNumMathWarpgroups == 2 ? 2 : -1;
    if (role >= 0 && blockIdx.x < kFp8GemmProfileMaxCtas) {
      Fp8GemmProfileRecord& r = jdg_fp8_gemm_profile_records[blockIdx.x][role];
      r.waited = waited;
      r.cycles = static_cast<unsigned long long>(clock64() - kernel_start);
      r.ns = ptx::global_timer_ns() - kernel_start_ns;
      r.epilogue_cycles = epilogue_cycles;
      r.k_blocks = profiled_k_blocks;
      r.written = 1;
    }
    if (threadIdx.x % 128 == 0 && threadIdx.x / 128 < 2 && blockIdx.x < kTraceCtas)
      jdg_fp8_gemm_trace_count[blockIdx.x][threadIdx.x / 128] = traced_events;
  }
#endif
  // A cluster's CTAs leave together: another one may still arrive on this one's barriers (and multicast into its
  // stages only while this one waits for them, so that is over). Tail split: only the pairs that exchanged a partial
  // tile (uniform over the pair), so that no CTA leaves while its partner may still write to it (racecheck's rule;
  // the exchange's own barriers already order it); the other pairs never touch each other.
  // Clusters sharing operands: the consumers' last arrivals on the other CTA's empty barriers are waited for by
  // nothing else, so the arrival here releases them (it waits until they are performed). Split K and the tail
  // split have no such arrival in flight (every remote write and arrival is waited for by its receiver, split K's
  // last free one above), so the arrival here is relaxed: a release arrival waits for the epilogue's global stores
  // too (~1200 cycles with the barrier's own, NOTES 49).
  if constexpr (kLaunchCluster > 1) {
    if (!kTailSplit || scheduler.pair_exchanges()) {
      __syncwarp();
      if constexpr (kCluster > 1) {
        ptx::cluster_sync();
      } else {
        ptx::cluster_sync_relaxed();
      }
    }
  }
}

#if JDG_PROFILE_WAITS
// Prints the records of the GEMM launched just before it on the same stream (one line per CTA and role, the format
// tools/waits_summary.py reads: "consumer" is the first consumer warpgroup, "consumer1" the second) and clears
// them. Launched by the host with one block after every profiled GEMM.
extern "C" __global__ void jdg_fp8_gemm_profile_report(int grid) {
  using jdg::fp8_gemm::Fp8GemmProfileRecord;
  const int ctas = grid < jdg::fp8_gemm::kFp8GemmProfileMaxCtas ? grid : jdg::fp8_gemm::kFp8GemmProfileMaxCtas;
  constexpr int kRoles = jdg::fp8_gemm::kFp8GemmProfileRoles;
  const char* const names[kRoles] = {"consumer (full stages)", "producer (empty stages)", "consumer1 (full stages)"};
  for (int i = threadIdx.x; i < kRoles * ctas; i += blockDim.x) {
    Fp8GemmProfileRecord& r = jdg::fp8_gemm::jdg_fp8_gemm_profile_records[i / kRoles][i % kRoles];
    if (!r.written) continue;
    printf("jax_deepgemm waits: cta %d %s waited %llu of %llu cycles in %llu ns; epilogues %llu cycles, %d K blocks\n",
           i / kRoles, names[i % kRoles], r.waited, r.cycles, r.ns, r.epilogue_cycles, r.k_blocks);
    r.written = 0;
  }
  if (threadIdx.x == 0) {
    using jdg::fp8_gemm::kTraceCtas;
    for (int c = 0; c < kTraceCtas && c < grid; ++c)
      for (int w = 0; w < 2; ++w) {
        const int n = jdg::fp8_gemm::jdg_fp8_gemm_trace_count[c][w];
        for (int i = 0; i < n; ++i)
          printf("jax_deepgemm trace: cta %d wg %d %u %u\n", c, w, jdg::fp8_gemm::jdg_fp8_gemm_trace[c][w][i][0],
                 jdg::fp8_gemm::jdg_fp8_gemm_trace[c][w][i][1]);
        jdg::fp8_gemm::jdg_fp8_gemm_trace_count[c][w] = 0;
      }
  }
}
#endif
