// Kernel configuration heuristics (no compilation, no GPU).
#pragma once

#include <cstdint>

namespace jdg {

struct Fp8GemmConfig {
  int block_m = 0;
  int block_n = 0;
  int stages = 0;
  int num_threads = 0;
  int smem_bytes = 0;   // dynamic shared memory per CTA
  bool tma_store = false;  // the epilogue through shared memory and TMA stores (JDG_TMA_STORE)
  bool acc_pipeline = false;  // two accumulators per consumer (JDG_ACC_PIPELINE)
  bool split_halves = false;  // half-width wgmma groups (JDG_SPLIT_HALVES)
  bool paired_stages = false;  // two K blocks per barrier round trip (JDG_PAIRED_STAGES)
  int split_k = 1;      // CTAs sharing each tile's K blocks, as a cluster (JDG_SPLIT_K; dense only)
  int cluster = 1;      // multicast pairs (2: A multicast to the tiles of adjacent N blocks, or B: multicast_b)
  bool multicast_b = false;  // clusters of 2 share B (adjacent M blocks) instead of A (JDG_MULTICAST_B; dense)
  bool tail_split = false;  // a short last round's tiles split over K by pairs of CTAs (JDG_TAIL_SPLIT)
  bool segments = false;    // contiguous 256-row tiles walk expert segments (JDG_CONTIGUOUS_SEGMENTS)
  bool dynamic_tiles = false;  // tiles past the first round from a device counter (JDG_DYNAMIC_TILES)
  int c_prefetch = 0;       // C pulled into L2 this many K blocks before a tile's end, 0: not (JDG_C_PREFETCH)
  int grid = 0;         // persistent CTAs = min(num_sms, split_k x tiles), in whole clusters (fp8_gemm_cluster_ctas)
  std::int64_t tiles = 0;  // the output tiles the model expects (dense: exact)
  std::int64_t waves = 0;
};

// The configuration of the dense FP8 GEMM for D[m, n] = A[m, k] B[n, k]^T on `num_sms` SMs. See heuristics.cc for
// the model. Prints the choice once per (m, n, k, num_sms) when DG_PRINT_CONFIGS is set.
// `b_scale_per_row` (1x128 B scales, read per column) lowers the BLOCK_N cap. Throws std::invalid_argument for n < 1,
// k < 1, m < 0 or num_sms < 1.
// `out_f32` / `c_kind` (as JDG_OUT_F32 / JDG_C_KIND) decide whether the TMA-store epilogue can be used.
// `hbm_gbs`, the GPU's peak HBM bandwidth in GB/s (0: unknown, taken as an H100 SXM's), weighs B's stream when
// deciding split K.
Fp8GemmConfig select_fp8_gemm_config(std::int64_t m, std::int64_t n, std::int64_t k, int num_sms,
                                     bool b_scale_per_row = false, bool out_f32 = false, int c_kind = 0,
                                     int hbm_gbs = 0);

// The same for the grouped GEMMs; `mode` is a JDG_GROUPED_MODE value (fp8_gemm_abi.h), m the rows of A (masked:
// per group), g the number of groups, expected_m (masked) the expected rows per group (<= 0: m). The model sizes
// BLOCK_M and the waves by the rows a group is expected to have: M / G (contiguous, ragged) or expected_m (masked);
// the grid is min(num_sms, fp8_gemm_max_tiles(...)), a bound from the static shapes. Throws std::invalid_argument
// like the dense one, and for g < 1.
Fp8GemmConfig select_grouped_fp8_gemm_config(int mode, std::int64_t m, std::int64_t n, std::int64_t k,
                                             std::int64_t g, std::int64_t expected_m, int num_sms,
                                             bool b_scale_per_row = false, bool out_f32 = false, int c_kind = 0);

}  // namespace jdg
