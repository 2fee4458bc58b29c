// Configuration heuristics for the dense FP8 GEMM kernel (cuda/jax_deepgemm/fp8_gemm.cuh).
//
// The model. The kernel is persistent: grid = min(num_sms, tiles) CTAs, one per SM, each walking over output tiles
// of BLOCK_M x BLOCK_N. Every tile streams its whole K extent (A: BLOCK_M x K bytes, B: BLOCK_N x K bytes) through
// the shared-memory pipeline, so all tiles of one configuration cost about the same, and the run takes about
//     waves = ceil(tiles / num_sms)
// tile-times. We therefore
//   1. fix BLOCK_M by M: 64 when M <= 64 (one consumer warpgroup, no wasted rows), else 128 (two consumer
//      warpgroups, twice the reuse of every B tile);
//   2. over the BLOCK_N candidates, minimise the number of waves;
//   3. on a tie, maximise the number of tiles in the last wave (a fuller last wave leaves fewer SMs idle; with equal
//      waves it also means smaller tiles, i.e. a shorter tile-time);
//   4. on a further tie, take the larger BLOCK_N (fewer tiles, fewer re-reads of A).
// BLOCK_N candidates are the multiples of 16 that the kernel supports (fp8_gemm_block_n_supported) up to a register
// cap: a consumer thread holds two FP32 accumulator sets of BLOCK_N / 2 registers each (the wgmma result and the
// scaled sum), so BLOCK_N = 192 already needs 192 of its registers; with per-row B scales (one scale per column,
// kept in registers too) the kernel spills from 192 on, so the cap is 176 there (fp8_gemm.cuh, "Limits").
// Stages: as many as fit into the opt-in shared memory (kMaxDynamicSmemBytes, layout in fp8_gemm_smem_bytes), at
// most kMaxStages, and at most ceil(K / 128) + 1: one tile's whole K plus the first block of the next tile is all a
// persistent CTA can usefully prefetch.
#include "heuristics.h"

#include <jax_deepgemm/fp8_gemm_abi.h>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>

#include "env.h"

namespace jdg {
namespace {

constexpr int kMaxBlockN = 192;          // 128x128 B scales
constexpr int kMaxBlockNPerRowScale = 176;  // 1x128 B scales
constexpr int kMaxStages = 8;
constexpr int kMinStages = 2;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

void print_once(std::int64_t m, std::int64_t n, std::int64_t k, int num_sms, bool per_row, const Fp8GemmConfig& c) {
  static std::mutex mutex;
  static auto* printed = new std::set<std::tuple<std::int64_t, std::int64_t, std::int64_t, int, bool>>();
  std::lock_guard<std::mutex> lock(mutex);
  if (!printed->insert({m, n, k, num_sms, per_row}).second) return;
  std::fprintf(stderr,
               "jax_deepgemm: fp8_gemm m=%lld n=%lld k=%lld num_sms=%d%s -> block_m=%d block_n=%d stages=%d "
               "threads=%d smem=%d tiles=%lld waves=%lld grid=%d\n",
               static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k), num_sms,
               per_row ? " (per-row B scales)" : "", c.block_m,
               c.block_n, c.stages, c.num_threads, c.smem_bytes, static_cast<long long>(c.tiles),
               static_cast<long long>(c.waves), c.grid);
}

}  // namespace

Fp8GemmConfig select_fp8_gemm_config(std::int64_t m, std::int64_t n, std::int64_t k, int num_sms,
                                     bool b_scale_per_row) {
  if (m < 0 || n < 1 || k < 1 || num_sms < 1)
    throw std::invalid_argument("select_fp8_gemm_config: need m >= 0, n >= 1, k >= 1, num_sms >= 1 (got m=" +
                                std::to_string(m) + ", n=" + std::to_string(n) + ", k=" + std::to_string(k) +
                                ", num_sms=" + std::to_string(num_sms) + ")");
  const std::int64_t rows = m > 0 ? m : 1;  // M = 0 launches nothing; choose as for one row
  const int block_m = rows <= 64 ? 64 : 128;
  const std::int64_t k_blocks = ceil_div(k, kFp8BlockK);
  const int stage_cap = static_cast<int>(std::min<std::int64_t>(kMaxStages, k_blocks + 1));

  Fp8GemmConfig best;
  std::int64_t best_last_wave = -1;
  const int max_block_n = b_scale_per_row ? kMaxBlockNPerRowScale : kMaxBlockN;
  for (int block_n = 16; block_n <= max_block_n; block_n += 16) {
    if (!fp8_gemm_block_n_supported(block_n)) continue;
    int stages = 0;
    for (int s = stage_cap; s >= 1; --s)
      if (fp8_gemm_smem_bytes(block_m, block_n, s) <= kMaxDynamicSmemBytes) {
        stages = s;
        break;
      }
    if (stages < std::min(kMinStages, stage_cap)) continue;

    const std::int64_t tiles = ceil_div(rows, block_m) * ceil_div(n, block_n);
    const std::int64_t waves = ceil_div(tiles, num_sms);
    const std::int64_t last_wave = tiles - (waves - 1) * num_sms;
    bool better = best.block_n == 0 || waves < best.waves ||
                  (waves == best.waves && last_wave > best_last_wave) ||
                  (waves == best.waves && last_wave == best_last_wave && block_n > best.block_n);
    if (!better) continue;
    best.block_m = block_m;
    best.block_n = block_n;
    best.stages = stages;
    best.tiles = tiles;
    best.waves = waves;
    best_last_wave = last_wave;
  }
  if (best.block_n == 0) throw std::logic_error("select_fp8_gemm_config: no BLOCK_N candidate fits shared memory");
  best.num_threads = fp8_gemm_num_threads(best.block_m);
  best.smem_bytes = fp8_gemm_smem_bytes(best.block_m, best.block_n, best.stages);
  best.grid = static_cast<int>(std::min<std::int64_t>(num_sms, m > 0 ? best.tiles : 0));
  if (env::print_configs()) print_once(m, n, k, num_sms, b_scale_per_row, best);
  return best;
}

}  // namespace jdg
