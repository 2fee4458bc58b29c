// The contract between the host runtime (ffi/, compiled by g++) and the FP8 GEMM kernel (cuda/, compiled at run
// time by NVRTC or NVCC). Both sides include this file, so it must stay plain C++17 that needs no CUDA header.
//
// A kernel is specialised for one configuration by a generated source file that #defines the JDG_* macros below
// and then #includes <jax_deepgemm/fp8_gemm.cuh>, which defines the extern "C" kernel `jdg_fp8_gemm`:
//
//   extern "C" __global__ void jdg_fp8_gemm(const __grid_constant__ jdg::TmaDescriptor tensor_map_a,
//                                           const __grid_constant__ jdg::TmaDescriptor tensor_map_b,
//                                           const __grid_constant__ jdg::TmaDescriptor tensor_map_sa,
//                                           const __grid_constant__ jdg::TmaDescriptor tensor_map_sb,
//                                           const __grid_constant__ jdg::TmaDescriptor tensor_map_d,
//                                           const jdg::Fp8GemmArgs args);
//
//   JDG_N, JDG_K            problem N and K (compile-time; M is the runtime args.m)
//   JDG_BLOCK_M             64, 128 or 256 rows per tile: one consumer warpgroup per 64 rows, at most two; at 256 each
//                           of the two runs its 128 rows as two 64-row wgmma waves into one accumulator
//   JDG_BLOCK_N             columns per tile, see fp8_gemm_block_n_supported()
//   JDG_STAGES              shared-memory pipeline depth
//   JDG_A_E5M2, JDG_B_E5M2  0: float8_e4m3fn operand, 1: float8_e5m2 operand
//   JDG_B_SCALE_PER_ROW     0: b_scale is 128x128 blocks [nb, kb] (row-major); 1: per-row 1x128 [kb, N] (N fastest)
//   JDG_OUT_F32             0: D is bfloat16; 1: D is float32
//   JDG_C_KIND              0: no C; 1: C is bfloat16 [M, N]; 2: C is float32 [M, N]
//   JDG_GROUPED_MODE        optional, default 0 (kFp8GemmDense); one of the kFp8Gemm* modes below. Grouped modes
//                           read args.groups on the device; the M-grouped ones take no C (JDG_C_KIND 0).
//   JDG_CLUSTER             optional, default 1; 2: CTAs run in clusters of two that take the two tiles of the same
//                           rows and adjacent N blocks, and each loads half of the A tile and multicasts it to both:
//                           half of A's reads from L2. ceil(N / BLOCK_N) must be even, but for dense GEMMs: there
//                           the last N block of an odd count pairs its tiles along M, without multicast.
//   JDG_MULTICAST_B         optional, default 0; 1 (dense GEMMs in clusters of 2, JDG_CLUSTER 2): the CTAs take
//                           adjacent M blocks of the same N block instead, and each loads half of the B tile and
//                           multicasts it to both (an odd M-block count: the last pair's second tile lies past M,
//                           streams zero fill and stores nothing).
//   JDG_TMA_STORE           optional, default 0; 1: the epilogue writes the tile into shared memory and TMA stores
//                           it (overlapping the next tile), where fp8_gemm_tma_store_supported() allows.
//   JDG_ACC_PIPELINE        optional, default 0; 1: two accumulators per consumer, the next K block's wgmmas running
//                           while the last one is promoted, where fp8_gemm_acc_pipeline_supported() allows.
//   JDG_PAIRED_STAGES       optional, default 0; 1 (with JDG_ACC_PIPELINE, fp8_gemm_paired_stages_supported): the
//                           ring's stages go in pairs that share one full and one empty barrier, two K blocks per
//                           barrier round trip (a pass's odd last K block takes a pair alone; an odd stage count
//                           leaves the last stage unused).
//   JDG_SPLIT_HALVES        optional, default 0; 1: each K block's wgmmas as two half-width groups, each half promoted
//                           while the other runs, where fp8_gemm_split_halves_supported() allows (not with
//                           JDG_ACC_PIPELINE).
//   JDG_SPLIT_K             optional, default 1; 2 or 4 (fp8_gemm_split_k_supported: dense, BLOCK_M <= 128, JDG_CLUSTER
//                           1): CTAs run
//                           in clusters of JDG_SPLIT_K that take the same tile, CTA r of a cluster the r-th of
//                           JDG_SPLIT_K near-equal runs of its K blocks; the others send their FP32 partial tiles to
//                           CTA 0's shared memory, which adds them in rank order (the same sum every run) and stores
//                           the tile. For few tiles over long K (small M): more CTAs per tile, fewer K blocks each.
//   JDG_TAIL_SPLIT          optional, default 0; 1 (fp8_gemm_tail_split_supported: dense, contiguous or masked,
//                           JDG_CLUSTER 1, JDG_SPLIT_K 1): CTAs run in clusters of two that walk their own tiles, but
//                           when the tiles (counted on the device) leave a last round for at most half the CTAs, each
//                           cluster takes one of those tiles and splits its K blocks in two halves; CTA 1 sends its
//                           FP32 partial tile into CTA 0's pipeline stages (free by then: the tile is the last of
//                           both), CTA 0 adds it and stores the tile. The last round then takes half as long.
//   JDG_CONTIGUOUS_SEGMENTS optional, default 0; 1 (fp8_gemm_segments_supported: contiguous, BLOCK_M 256, no
//                           JDG_TAIL_SPLIT): the tiles walk segments, the runs of 128-row blocks whose first rows have
//                           the same expert id, each segment's tiles starting at its first row (its last tile may own
//                           only 128 rows: the second consumer warpgroup then stores nothing), instead of one fixed
//                           grid of 256-row tiles over M.
//   JDG_C_PREFETCH          optional, default 0; D >= 1 (fp8_gemm_c_prefetch_supported: a C read by the register
//                           epilogue): when the producer copies a tile's D-th K block from its end (its first, if it
//                           has fewer), it also pulls the tile's block of C into L2 (one tensor prefetch through the D
//                           map, then encoded over C), so that the epilogue's C loads do not all go to HBM at once.
//   JDG_PROFILE_WAITS       optional, default 0; 1 (profiling): count the cycles of the pipeline barrier waits (and
//                           the consumers' epilogue cycles and K blocks) and the elapsed nanoseconds of every CTA's
//                           TMA-issuing producer lane and first consumer thread, into a module global that a second
//                           kernel, jdg_fp8_gemm_profile_report(int grid), prints; the host launches it (one block)
//                           on the same stream after each GEMM when the module has it (launches of one profiled
//                           kernel on concurrent streams would share the records: profile one at a time).
//
// Launch: with C = fp8_gemm_cluster_ctas(JDG_CLUSTER, JDG_SPLIT_K, JDG_TAIL_SPLIT) CTAs per cluster, grid =
// min(num_sms rounded down to a multiple of C, P x fp8_gemm_max_tiles(...) rounded up to a multiple of C) persistent
// CTAs (1-D), where P = JDG_SPLIT_K, or 2 with JDG_TAIL_SPLIT (a lone round's tiles can each take a pair); cluster
// dimensions {C, 1, 1} (C = 1 may also launch without the cluster attribute: each CTA is then a cluster of one),
// block = fp8_gemm_num_threads(BLOCK_M), dynamic shared memory = fp8_gemm_smem_bytes(BLOCK_M, BLOCK_N, STAGES,
// B_SCALE_PER_ROW, TMA_STORE, JDG_SPLIT_K). The grid depends on static shapes only; the kernel counts the tiles of
// grouped modes on the device (a CTA, or a cluster, with no tile exits). In the FFI handler num_sms is the fewest SMs
// of the process's GPUs (capped by set_num_sms), read when XLA instantiates the call, whatever the lowering said;
// the warmup and compile entry points take it as given.
//
// Tensor maps (encoded by the host per launch with cuTensorMapEncodeTiled):
//   A: uint8, 2-D, dims {K, rows of A}, row stride K bytes (K % 16 == 0 is guaranteed by the caller),
//      box {128, BLOCK_M / JDG_CLUSTER}, 128-byte swizzle, out-of-bounds elements zero-filled.
//   B: uint8, 2-D, dims {K, G * N} (all groups' [N, K] blocks stacked; G = 1 for dense), row stride K bytes,
//      box {128, BLOCK_N} (JDG_MULTICAST_B: {128, BLOCK_N / 2}), 128-byte swizzle, zero fill.
//   SA: float32, 2-D over a_scale [kb, M4] (M4 = rows of A rounded up to a multiple of 4, so that rows are 16-byte
//      strides; the padding is never read into a stored row): dims {M4, kb}, box {fp8_gemm_sa_box(BLOCK_M), 1}, no
//      swizzle, zero fill. A box starts at the tile's first row rounded down to a multiple of 4 (TMA box starts in
//      the innermost dimension must be 16-byte aligned; ragged and masked tiles start on any row), hence 4 more.
//      BLOCK_M 256 takes two boxes per stage, 128 rows apart (a box dimension is at most 256 elements).
//   SB: per-row B scales only (JDG_B_SCALE_PER_ROW 1; otherwise any valid map, unused): float32, 2-D over b_scale
//      [G * kb, N4] (N4 = N rounded up to a multiple of 4): dims {N4, G * kb}, box {BLOCK_N, 1}, zero fill.
//   The scales of one K block travel with its A and B tiles, through the same pipeline stage.
//   D: JDG_TMA_STORE 1 only (otherwise any valid map, unused): the bf16 output [rows of D, N] as 2-byte elements
//      (masked: G * group_m rows), dims {N, rows}, box {fp8_gemm_d_atom_cols(BLOCK_N), fp8_gemm_d_box_rows(BLOCK_M)}
//      (one column atom of one consumer warpgroup's rows), swizzle of the atom's row bytes (128 / 64 / 32): one
//      store per atom of each warpgroup's part of a tile, clipped at the last row and at N.
//      With JDG_C_PREFETCH instead: C [rows of D, N] (float32, or bf16 as 2-byte elements), dims {N, rows}, box
//      {BLOCK_N, BLOCK_M}, no swizzle; only prefetched from, never copied into shared memory.
//
// Grouped modes (the layouts every operand has on the device; G = args.num_groups, N = JDG_N):
//   kFp8GemmContiguous  A [M, K], a_scale [kb, M4], D [M, N]; groups = m_indices int32 [M]: row m uses expert
//                       groups[m]; an id outside [0, G) gives a zero row. Any ids are allowed (see fp8_gemm.cuh).
//   kFp8GemmRagged      A [M, K], a_scale [kb, M4], D [M, N]; groups = group_sizes int32 [G]: group g owns the next
//                       max(groups[g], 0) rows, cut at M; rows past the last group are written as zeros.
//   kFp8GemmMasked      A [G * group_m, K], a_scale [kb, (G * group_m)4], D [G * group_m, N] (group g's rows start at
//                       g * group_m); groups = masked_m int32 [G]: rows r < clamp(groups[g], 0, group_m) of group g
//                       are computed, the others are not written.
//   B scales of group g: 128x128 [G, nb, kb] (row-major) or per row [G, kb, N4].
//   kFp8GemmKGrouped    the weight-gradient GEMM: A [M, K], a_scale [kb, M4], B [N, K] (one, G = 1 in the B and
//                       SB tensor maps), per-row b_scale [kb, N4] (JDG_B_SCALE_PER_ROW 1), D [G * M, N] float32
//                       (JDG_OUT_F32 1) with C none or float32 [G * M, N] (JDG_C_KIND 0 or 2), or D bf16 without C
//                       (the FP32 sums rounded once, for weights stored in bf16); groups = group_sizes int32 [G]: K is
//                       cut into G consecutive segments, group g owns the next max(groups[g], 0) columns, cut at K, and
//                       D[g] = C[g] + A_g B_g^T over its segment. Segments are meant to be multiples of 128: the
//                       kernel works on the 128-wide K blocks a segment touches (an unaligned one shares a block
//                       with its neighbour: unspecified values, never an out-of-bounds access). An empty segment
//                       gives D[g] = C[g] (or zeros).
#pragma once

namespace jdg {

// Opaque 128-byte CUtensorMap, declared here so that neither side needs cuda.h.
struct alignas(64) TmaDescriptor {
  unsigned long long opaque[16];
};

struct Fp8GemmArgs {
  const float* b_scale;  // 128x128 block scales [G * nb, kb], read from global memory (per-row ones: tensor map SB)
  const void* c;         // [M, N] (k-grouped: [G * M, N]) row-major or nullptr (JDG_C_KIND == 0)
  void* d;               // [M, N] (k-grouped: [G * M, N]) row-major output
  int m;                 // rows of A (>= 1), and of C and D but for k-grouped (G * m); masked: G * group_m
  const int* groups;     // grouped modes: m_indices [M], group_sizes [G] or masked_m [G] (device data, any values)
  int num_groups;        // G (>= 1); 1 for dense
  int group_m;           // masked: rows per group; unused otherwise
  int tile_queue;        // JDG_DYNAMIC_TILES: the call site's counters (< kFp8GemmTileQueues; fp8_gemm_tiles.cuh)
};

// JDG_DYNAMIC_TILES: counter pairs in each kernel module, one per call site (modulo this many), so that two call
// sites of one kernel never share the counters that hand out their tiles.
constexpr int kFp8GemmTileQueues = 1024;

// JDG_GROUPED_MODE values.
constexpr int kFp8GemmDense = 0;
constexpr int kFp8GemmContiguous = 1;
constexpr int kFp8GemmRagged = 2;
constexpr int kFp8GemmMasked = 3;
constexpr int kFp8GemmKGrouped = 4;

constexpr int kFp8BlockK = 128;              // K elements per pipeline stage and per scale block
constexpr int kMaxDynamicSmemBytes = 232448;  // sm_90 opt-in limit per block
constexpr int kFp8BandNBlocks = 16;  // N blocks per band of the tile order (kernel: kBandN; heuristics: step 14)

// Consumer warpgroups: one per 64 rows, at most two (BLOCK_M 256: two 64-row waves each).
constexpr int fp8_gemm_math_warpgroups(int block_m) { return block_m >= 128 ? 2 : 1; }

constexpr int fp8_gemm_num_threads(int block_m) {
  // One producer warpgroup plus the consumer warpgroups.
  return 128 + 128 * fp8_gemm_math_warpgroups(block_m);
}

constexpr bool fp8_gemm_block_m_supported(int block_m) {
  return block_m == 64 || block_m == 128 || block_m == 256;
}

constexpr bool fp8_gemm_block_n_supported(int block_n) {
  // wgmma m64nNk32 for FP8 takes N in multiples of 8 up to 256; the kernel uses multiples of 16 up to 256.
  return block_n >= 16 && block_n <= 256 && block_n % 16 == 0;
}

constexpr int fp8_gemm_align(int x, int a) { return (x + a - 1) / a * a; }

// An upper bound of the tiles the kernel runs, from static shapes only (the grid is min(num_sms, this)).
// m: rows of A (masked: rows per group), g: groups. Ragged: the G groups and the zero tail are G + 1 row segments
// of total length M, each starting a new M block, so sum ceil(rows / BLOCK_M) <= ceil(M / BLOCK_M) + G. Masked and
// k-grouped: every group has the full M x N grid of tiles (k-grouped: exactly; masked: at most).
// Contiguous segments (JDG_CONTIGUOUS_SEGMENTS): a segment's last tile may own only 128 rows, so at most one tile per
// 128-row block.
constexpr long long fp8_gemm_max_tiles(int mode, long long m, long long n, long long g, int block_m, int block_n,
                                       bool segments = false) {
  const int rows_per_tile = segments ? 128 : block_m;
  const long long m_blocks = (m + rows_per_tile - 1) / rows_per_tile;
  const long long n_blocks = (n + block_n - 1) / block_n;
  const bool per_group_grid = mode == kFp8GemmMasked || mode == kFp8GemmKGrouped;
  return (per_group_grid ? g * m_blocks : mode == kFp8GemmRagged ? m_blocks + g : m_blocks) * n_blocks;
}

// Shared memory of one stage's scales: A's BLOCK_M floats in fp8_gemm_sa_boxes() boxes of fp8_gemm_sa_box() floats
// (the rows of 128 at most, plus 4 for the aligned start), and (per-row B scales) B's BLOCK_N floats, each box in
// its own 128-byte aligned slot (a TMA destination).
constexpr int fp8_gemm_sa_boxes(int block_m) { return block_m > 128 ? block_m / 128 : 1; }
constexpr int fp8_gemm_sa_box(int block_m) { return block_m / fp8_gemm_sa_boxes(block_m) + 4; }
constexpr int fp8_gemm_sa_slot_bytes(int block_m) { return fp8_gemm_align(fp8_gemm_sa_box(block_m) * 4, 128); }
constexpr int fp8_gemm_sa_stage_bytes(int block_m) {
  return fp8_gemm_sa_boxes(block_m) * fp8_gemm_sa_slot_bytes(block_m);
}
constexpr int fp8_gemm_sb_stage_bytes(int block_n, bool b_scale_per_row) {
  return b_scale_per_row ? fp8_gemm_align(block_n * 4, 128) : 0;
}

// The TMA-store epilogue: bf16 out without C, N % 8 == 0 (16-byte row strides of D); every tile width (multiples of
// 16) splits into column atoms (fp8_gemm_d_atom_cols). Dense and contiguous tiles own all their rows (a TMA store
// clips the M tail; a contiguous segment's tile ends at a 128-row block, so each warpgroup's rows are all its own or
// none); in ragged, masked and k-grouped tiles each consumer warpgroup takes it only when all of its rows are the
// tile's: a partial tile's rows past its group belong to the next group (ragged; k-grouped: the next group's D) or
// must stay untouched (masked), so the warpgroup they fall in keeps the register epilogue.
constexpr bool fp8_gemm_tma_store_supported(long long n, int block_n, bool out_f32, int c_kind) {
  return !out_f32 && c_kind == 0 && block_n % 16 == 0 && n % 8 == 0;
}

// The TMA store's column atom: the widest of 64 / 32 / 16 bf16 columns (a row of 128 / 64 / 32 bytes, stored with the
// 128- / 64- / 32-byte swizzle, whose span is one atom row) that divides the tile width. Each atom is one box of the
// D tensor map; 160-wide tiles store five 32-column atoms, 176-wide ones eleven of 16.
constexpr int fp8_gemm_d_atom_cols(int block_n) { return block_n % 64 == 0 ? 64 : block_n % 32 == 0 ? 32 : 16; }

// The TMA-store epilogue: each consumer warpgroup stores its own rows of the tile, so the result's tensor map has
// boxes of one column atom x this many rows.
constexpr int fp8_gemm_d_box_rows(int block_m) { return block_m / fp8_gemm_math_warpgroups(block_m); }

// The accumulator pipeline: one 64-row wave per consumer warpgroup (BLOCK_M <= 128; 256-row tiles already hold two
// waves' results) and three accumulator sets of BLOCK_N / 2 registers within the consumers' budget (BLOCK_N <= 128).
constexpr bool fp8_gemm_acc_pipeline_supported(int block_m, int block_n) { return block_m <= 128 && block_n <= 128; }

// Paired stages (JDG_PAIRED_STAGES): kernels with the accumulator pipeline (whose K loop already takes its K blocks
// in twos) and at least two pairs of stages.
constexpr bool fp8_gemm_paired_stages_supported(bool acc_pipeline, int stages) { return acc_pipeline && stages >= 4; }

// Half-width groups (JDG_SPLIT_HALVES): the tiles the accumulator pipeline cannot take (BLOCK_N > 128) with one 64-row
// wave per consumer warpgroup and 128x128 B scales, whose halves are wgmma widths the kernel has (multiples of 16).
constexpr bool fp8_gemm_split_halves_supported(int block_m, int block_n, bool b_scale_per_row) {
  return block_m <= 128 && block_n > 128 && (block_n / 2) % 16 == 0 && !b_scale_per_row;
}

// Split K (JDG_SPLIT_K): dense GEMMs only, without A multicast (JDG_CLUSTER 1), in clusters of 2 or 4 CTAs, tiles of
// at most 128 rows (it is meant for small M, and a 256-row partial tile would take most of the shared memory).
constexpr bool fp8_gemm_split_k_supported(int mode, int block_m, int cluster, int split_k) {
  return split_k == 1 || ((split_k == 2 || split_k == 4) && mode == kFp8GemmDense && block_m <= 128 && cluster == 1);
}

// Tail split (JDG_TAIL_SPLIT): modes whose tiles all stream the whole K (not ragged: counting its tiles needs a scan
// of the group sizes; not k-grouped), no multicast, no split K, at least 2 K blocks, and a partial tile (BLOCK_M x
// BLOCK_N floats) that fits into the pipeline's A and B stages, where CTA 1 writes it.
constexpr bool fp8_gemm_tail_split_supported(int mode, long long k, int block_m, int block_n, int stages, int cluster,
                                             int split_k) {
  const bool mode_ok = mode == kFp8GemmDense || mode == kFp8GemmContiguous || mode == kFp8GemmMasked;
  const long long ring_bytes = static_cast<long long>(stages) * (block_m + block_n) * kFp8BlockK;
  return mode_ok && cluster == 1 && split_k == 1 && k > kFp8BlockK &&
         ring_bytes >= static_cast<long long>(block_m) * block_n * 4;
}

// Contiguous segments (JDG_CONTIGUOUS_SEGMENTS): 256-row contiguous tiles; the tail split counts the fixed grid's
// tiles, so not with it.
constexpr bool fp8_gemm_segments_supported(int mode, int block_m, bool tail_split) {
  return mode == kFp8GemmContiguous && block_m == 256 && !tail_split;
}

// C pulled into L2 ahead of the epilogue (JDG_C_PREFETCH): where there is a C and the register epilogue reads it (the
// TMA store takes no C), and C's rows are 16-byte strides, as a tensor map needs.
constexpr bool fp8_gemm_c_prefetch_supported(int c_kind, bool tma_store, long long n) {
  return c_kind != 0 && !tma_store && n * (c_kind == 2 ? 4 : 2) % 16 == 0;
}

// CTAs per launched cluster: the multicast pair, the split-K group, or the tail split's pair.
constexpr int fp8_gemm_cluster_ctas(int cluster, int split_k, bool tail_split) {
  return cluster * split_k * (tail_split ? 2 : 1);
}

// Split K: the FP32 partial tiles the cluster's other CTAs send to its first one (BLOCK_M x BLOCK_N floats each).
constexpr int fp8_gemm_split_k_partial_bytes(int block_m, int block_n, int split_k) {
  return (split_k - 1) * block_m * block_n * 4;
}

// The barrier area: stages x full + stages x empty + 2 split-K mbarriers (8 bytes each); in its padding the tile
// queue's barriers and slots (JDG_DYNAMIC_TILES), and for grouped GEMMs (and dense ones with dynamic tiles) the next
// tile: two barriers and the tile's words (TileIds), and contiguous (tile_id_rows = BLOCK_M) one int per row, its
// expert ids; 128 bytes hold all but the ids (and the padding of at most 16 stages' barriers holds the rest's 80).
constexpr int fp8_gemm_barrier_area_bytes(int stages, int tile_id_rows) {
  return fp8_gemm_align(2 * stages * 8 + 16 + (tile_id_rows > 0 ? 128 + 4 * tile_id_rows : 0), 1024);
}

// Dynamic shared memory of one CTA; the kernel carves it in this order, every part 1024-byte aligned:
//   stages x A tile (BLOCK_M x 128 bytes), stages x B tile (BLOCK_N x 128 bytes), stages x A scales, stages x B
//   scales (per row only), the bf16 output tile (TMA store only: BLOCK_M x BLOCK_N x 2 bytes), the split-K partial
//   tiles (fp8_gemm_split_k_partial_bytes), the barrier area (fp8_gemm_barrier_area_bytes), plus 1024 bytes of slack
//   for aligning the base. tile_id_rows: BLOCK_M for contiguous GEMMs (their next tile and its expert ids), else 0.
constexpr int fp8_gemm_smem_bytes(int block_m, int block_n, int stages, bool b_scale_per_row, bool tma_store,
                                  int split_k, int tile_id_rows) {
  return fp8_gemm_align(stages * block_m * kFp8BlockK, 1024) + fp8_gemm_align(stages * block_n * kFp8BlockK, 1024) +
         fp8_gemm_align(stages * fp8_gemm_sa_stage_bytes(block_m), 1024) +
         fp8_gemm_align(stages * fp8_gemm_sb_stage_bytes(block_n, b_scale_per_row), 1024) +
         (tma_store ? fp8_gemm_align(block_m * block_n * 2, 1024) : 0) +
         fp8_gemm_align(fp8_gemm_split_k_partial_bytes(block_m, block_n, split_k), 1024) +
         fp8_gemm_barrier_area_bytes(stages, tile_id_rows) + 1024;
}

// Scale rows are padded to a multiple of 4 floats: TMA needs 16-byte row strides.
constexpr long long fp8_gemm_pad4(long long x) { return (x + 3) / 4 * 4; }

}  // namespace jdg
