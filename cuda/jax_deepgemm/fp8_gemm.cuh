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
// Tile order: cluster c takes tile c, then every grid-th tile after it (a static round robin), or with
// JDG_DYNAMIC_TILES (contiguous, ragged and k-grouped by default, heuristics.cc step 18) the next tile of the order
// whenever it is free, from a device counter its tile ids' warps read for the cluster (TileQueue, fp8_gemm_tiles.cuh).
//
// Grouped GEMMs (JDG_GROUPED_MODE, layouts in fp8_gemm_abi.h) are scheduling variants of the same kernel: a tile is
// (first row, rows it owns, N block, group), produced by one scheduler (TileScheduler in fp8_gemm_tiles.cuh) that the
// producer and the consumers run identically over the same read-only device data, so they always agree on the
// sequence of pipeline stages. Device data is never trusted: ids, sizes and masks are clamped and every row and
// column index stays in bounds whatever the values (sizes are cut at M before they are added, so sums never overflow).
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
//                skips its wgmmas. Rows with an id outside [0, G) are stored as zeros (a select after the passes;
//                a pass whose other rows are all such takes them along unselected).
//                The aligned layout (one id per 128-row block) costs one pass plus a warp reduction over the
//                block's ids; a tile with only padding rows loads nothing and stores zeros; the worst case (ids
//                changing on every row) is BLOCK_M passes, slow but correct. A warp of its own walks the tiles
//                and publishes each one with its ids in shared memory a tile ahead of the readers (TileIds).
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
//
// The parts, in the order they are included: fp8_gemm_config.cuh (constants and static_asserts), fp8_gemm_tiles.cuh
// (the tile scheduler), fp8_gemm_epilogue.cuh (the register epilogue), fp8_gemm_promote.cuh (one K block's wgmmas and
// their promotion), fp8_gemm_ring.cuh (ring waits, partial-tile exchanges); then the kernel below.
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

#include <jax_deepgemm/fp8_gemm_config.cuh>
#include <jax_deepgemm/fp8_gemm_tiles.cuh>
#include <jax_deepgemm/fp8_gemm_epilogue.cuh>
#include <jax_deepgemm/fp8_gemm_promote.cuh>
#include <jax_deepgemm/fp8_gemm_ring.cuh>

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
  // JDG_DYNAMIC_TILES: the tile queue's barriers and slots (in the barrier area's padding, see fp8_gemm_config.cuh).
  const TileQueue queue{partial_free_bar + 8, partial_free_bar + 8 + 8 * kTileSlots,
                        partial_free_bar + 8 + 16 * kTileSlots,
                        jdg_fp8_gemm_tile_counters[static_cast<unsigned int>(args.tile_queue) % kFp8GemmTileQueues]};
  // Published tiles (kTileIdsWarp): the next tile and, contiguous, its expert ids (after the queue, see
  // fp8_gemm_config.cuh).
  const unsigned int tile_ids_bar = full_bars + kTileIdsBarOffset;
  const TileIds tile_ids{tile_ids_bar, tile_ids_bar + 8, tile_ids_bar + 16, tile_ids_bar + 16 + 4 * kTileIdWords};

  const int warp = ptx::shfl0(static_cast<int>(threadIdx.x) / 32);  // warp-uniform by construction
  const int warpgroup = warp / 4;
  const int lane = static_cast<int>(threadIdx.x) % 32;

  if (threadIdx.x == kNumMathThreads) {  // first producer thread: set up while the others wait
    ptx::prefetch_tensormap(&tensor_map_a);
    ptx::prefetch_tensormap(&tensor_map_b);
    ptx::prefetch_tensormap(&tensor_map_sa);
    if constexpr (kBScalePerRow) ptx::prefetch_tensormap(&tensor_map_sb);
    if constexpr (kTmaStore || kCPrefetch > 0) ptx::prefetch_tensormap(&tensor_map_d);
    for (int s = 0; s < kStages; ++s) {
      ptx::mbarrier_init(full_bars + 8 * s, 1);                       // the producer's arrive_expect_tx
      // One arrival per consumer warp of every CTA of the cluster: each fills the stage in all of them.
      ptx::mbarrier_init(empty_bars + 8 * s, kCluster * kNumMathThreads / 32);
    }
    if constexpr (kSplitK > 1 || kTailSplit) {  // see kExchangeFreeArrivals
      ptx::mbarrier_init(partial_full_bar, 1);
      ptx::mbarrier_init(partial_free_bar, kExchangeFreeArrivals);
    }
    if constexpr (kDynamicTiles) queue.init();
    if constexpr (kTileIdsWarp) tile_ids.init();
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
    // issues every copy (TMA needs no more). In grouped GEMMs, and in dense ones with dynamic tiles, a third warp
    // publishes the tiles (contiguous: with their expert ids), taking them from the counter with dynamic tiles; the
    // rest of the warpgroup only donated its registers.
    if (warp == 4 * kNumMathWarpgroups) {
      int stage = 0;
      unsigned int phase = 0;
      // (Published tiles come from the tile ids' warp, dense ones in the static order from the scheduler.)
      for (int t = first_tile, visit = 0; kTileIdsWarp ? tile_ids.take(visit, tile) : scheduler.get(t, args, tile);
           ++visit, t += tile_step) {
        int ids[kIdSlots] = {};
        if constexpr (kContiguous) tile_ids.read(lane, ids);
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
                if constexpr (kCPrefetch > 0) {
                  // The tile's C block, once per pass (k-grouped and dense tiles have one), kCPrefetch K blocks
                  // before its end: each CTA's epilogue loads then find C in L2 rather than all CTAs, which reach
                  // their epilogues together, drawing it from HBM at once (NOTES 74).
                  const int at = kb_end - kCPrefetch > tile.kb0 ? kb_end - kCPrefetch : tile.kb0;
                  if (kb <= at && at < kb + kKPerRound)
                    ptx::tma_prefetch_l2_2d(&tensor_map_d, tile.n_block * kBlockN, tile.d_row0);
                }
              }
              // A round takes kKPerRound slots, the pass's odd last K block included.
#pragma unroll
              for (int i = 0; i < kKPerRound; ++i) next_slot(stage, phase);
            }
          });
        }
      }
    } else if (kTileIdsWarp && warp == 4 * kNumMathWarpgroups + 2) {
      // The tile ids' warp (TileIds): the CTA's tiles, each with its ids a tile ahead of the readers, then the end
      // mark. With dynamic tiles it takes each index once the slot is free (see TileQueue): CTA 0's from the counter,
      // CTA 1's from it.
      int ids[kIdSlots] = {};
      for (int visit = 0, t = first_tile;; ++visit) {
        tile_ids.wait_free(visit);
        if (kDynamicTiles && visit > 0)
          t = kTileCtas == 1 || cluster_rank == 0 ? queue.publish(visit - 1, tile_step) : queue.read(visit - 1, lane);
        const bool is_tile = scheduler.get(t, args, tile);
        if (kContiguous && is_tile) load_tile_experts(args, tile, lane, ids);
        tile_ids.publish(is_tile, tile, ids, lane);
        if (!is_tile) break;
        if constexpr (!kDynamicTiles) t += tile_step;
      }
      if (kDynamicTiles && cluster_rank == 0 && lane == 0) queue.finish(gridDim.x / kTileCtas);
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
      const int sa_index = a_scale_index(tile.row0, r0);  // (ragged and masked, see pass_a_scales)
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
          pass_a_scales(sa_stages, st, tile.row0, r0, sa_index, sa[0], sa[1]);
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
          pass_a_scales(sa_stages, st, tile.row0, r0, sa_index, sa0, sa1);
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
        const int sa_index = a_scale_index(tile.row0, r0);  // (ragged and masked, see pass_a_scales)
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
          pass_a_scales(sa_stages, st_kb, tile.row0, r0, sa_index, sa0, sa1);
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
    for (int t = first_tile, visit = 0; kTileIdsWarp ? tile_ids.take(visit, tile) : scheduler.get(t, args, tile);
         ++visit, t += tile_step) {
      const int n0 = tile.n_block * kBlockN;

#pragma unroll
      for (int v = 0; v < kWaves; ++v)
#pragma unroll
        for (int i = 0; i < kAccRegs; ++i) out[v][i] = 0.0f;

      int ids[kIdSlots] = {};            // contiguous: the tile's expert ids (as next_expert wants them)
      int id0[kWaves] = {}, id1[kWaves] = {};  // contiguous: the experts of this thread's two rows per wave
      if constexpr (kContiguous) {
#pragma unroll
        for (int s = 0; s < kIdSlots; ++s) ids[s] = tile_ids.row(32 * s + lane);
#pragma unroll
        for (int v = 0; v < kWaves; ++v) {
          id0[v] = tile_ids.row(wave_row0[v]);
          id1[v] = tile_ids.row(wave_row0[v] + 8);
        }
        tile_ids.release();
      }

      for (int group = first_pass(tile, ids); group >= 0; group = next_pass(ids, group)) {
        // Which waves take the pass, and which of this thread's rows. `active` is uniform over the warpgroup
        // (wgmma is warpgroup-wide): every warp computes it from the same data.
        // `whole`: every row of the warpgroup's waves is the pass's or no expert's (contiguous; always so otherwise),
        // also uniform over the warpgroup: such passes take the K loop without the row-selecting promotion. Rows of
        // no expert (padding) are then computed with the pass's B, whatever their data, and stored as zeros (below):
        // a group's last tile, padded to 128 rows, keeps the plain FFMA stream.
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
              only_mine &= ids[s] == group || ids[s] < 0;
            }
            active[v] = ptx::vote_any(mine);
            whole &= ptx::vote_all(only_mine);
            keep0[v] = id0[v] == group;
            keep1[v] = id1[v] == group;
            all_rows[v] = ptx::vote_all((keep0[v] || id0[v] < 0) && (keep1[v] || id1[v] < 0));
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
          // (dense with dynamic tiles, whose tiles are published: one register pair per tile, which ptxas otherwise
          // rebuilds in the K loops from the tile's uniform fields; -1.9% / -2.8%. Grouped kernels lost with it,
          // +0.6% to +2.1%: NOTES 148)
          if constexpr (kMode == kFp8GemmDense && kDynamicTiles) asm volatile("" : "+l"(b_scale_blk[j]));
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
          if constexpr (kWaves == 2) trace(kTraceStageWait, 0, 3);
          if (kWaitAhead && any_active && tile.num_kb > 0) wait_stage(full_bars + 8 * stage, phase, waited);
          if constexpr (kWaves == 2) trace(kTraceStageReady, 0, 3);
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

      if constexpr (kContiguous) {  // rows of no expert: zeros, whatever whole passes added to them
#pragma unroll
        for (int v = 0; v < kWaves; ++v)
#pragma unroll
          for (int i = 0; i < kAccRegs; ++i)
            if (((i / 2) % 2 == 0 ? id0[v] : id1[v]) < 0) out[v][i] = 0.0f;
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
        // Contiguous segments: a tile's rows end at a 128-row block boundary (the next segment's) or at M, so a
        // warpgroup stores all of its rows (those past M clipped) or, in a segment's 128-row last tile, none.
        if (kContiguousSegments && warpgroup * kWaves * 64 >= tile.rows) return;  // uniform over the warpgroup
        // Ragged and masked tiles: a warpgroup takes the TMA store only when all of its rows are the tile's own
        // (fp8_gemm_abi.h), so that of a partial tile only the warpgroup its last row falls in (and any past it)
        // keeps the register stores; the choice is uniform over each warpgroup, as the named barriers below need.
        constexpr bool kTilesOwnRows = kMode == kFp8GemmDense || kContiguous;
        if (kTmaStore && (kTilesOwnRows || (warpgroup + 1) * kWaves * 64 <= tile.rows)) {
          // Epilogue through shared memory, each consumer warpgroup on its own rows (kWaves x 64 of the tile, one
          // box of the D tensor map per column atom): once its previous tile's stores have read its part of the
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
          // warp's 16 rows; lane l gives the address of row l % 8 of matrix l / 8. Row r, 16-byte chunk q: atom
          // q / kDAtomChunks, chunk (q % kDAtomChunks) ^ d_swizzle(r) of the atom's row (an 8-lane group's 8 rows hit
          // 8 different 16-byte bank groups: 8 rows of 128 bytes, or 2 / 4 rows per 128 bytes at 4 / 2 chunks).
          static_assert(kNumChunks % 2 == 0, "");
          const int my_half = (lane / 8) % 2, my_chunk_step = lane / 16;
#pragma unroll
          for (int v = 0; v < kWaves; ++v) {
            const int r = part + v * 64 + (warp % 4) * 16 + 8 * my_half + lane % 8;
#pragma unroll
            for (int c = 0; c < kNumChunks; c += 2) {
              const int q = c + my_chunk_step;
              ptx::stmatrix_x4(smem_d + (q / kDAtomChunks) * kDAtomBytes + r * kDAtomRowBytes +
                                   (((q % kDAtomChunks) ^ d_swizzle(r)) * 16),
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
            for (int a = 0; a < kBlockN / kDAtomCols; ++a)  // atoms wholly past N (the last N tile) store nothing
              if (n0 + kDAtomCols * a < kN)
                ptx::tma_store_2d(&tensor_map_d, smem_d + a * kDAtomBytes + part * kDAtomRowBytes, n0 + kDAtomCols * a,
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
          for (int v = 0; v < kWaves; ++v) {
            to_store_layout(out[v], lane);
            if constexpr (kF32LineStores && kCKind != 0) to_line_layout(out[v], lane);  // C loads in lines too
          }
          if constexpr (kCKind != 0)
            add_c<kF32LineStores>(args.c, out, wave_row0, tile.rows, tile.d_row0, n0, lane, aligned);
#pragma unroll
          for (int v = 0; v < kWaves; ++v) {
            if constexpr (!kOutF32 && kNumChunks % 4 == 0) {
              store_wave_bf16x8(args, out[v], wave_row0[v], tile.rows, tile.d_row0, n0, lane, aligned);
            } else {
              if constexpr (kF32LineStores && kCKind == 0) to_line_layout(out[v], lane);
              store_wave<kF32LineStores>(args, out[v], wave_row0[v], tile.rows, tile.d_row0, n0, lane, aligned);
            }
          }
        }
        if constexpr (kProfileWaits) epilogue_cycles += static_cast<unsigned long long>(clock64() - epilogue_start);
        // (tagged with the next tile: traced_tiles counts at the epilogue's start)
        if constexpr (kWaves == 2) trace(kTraceEpilogueDone, 0, 3);
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
