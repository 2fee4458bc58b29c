// The contract between the host runtime (ffi/, compiled by g++) and the FP8 GEMM kernel (cuda/, compiled at run
// time by NVRTC or NVCC). Both sides include this file, so it must stay plain C++17 that needs no CUDA header.
//
// A kernel is specialised for one configuration by a generated source file that #defines the JDG_* macros below
// and then #includes <jax_deepgemm/fp8_gemm.cuh>, which defines the extern "C" kernel `jdg_fp8_gemm`:
//
//   extern "C" __global__ void jdg_fp8_gemm(const __grid_constant__ jdg::TmaDescriptor tensor_map_a,
//                                           const __grid_constant__ jdg::TmaDescriptor tensor_map_b,
//                                           const jdg::Fp8GemmArgs args);
//
//   JDG_N, JDG_K            problem N and K (compile-time; M is the runtime args.m)
//   JDG_BLOCK_M             64 or 128 (rows per tile: one consumer warpgroup per 64 rows)
//   JDG_BLOCK_N             columns per tile, see fp8_gemm_block_n_supported()
//   JDG_STAGES              shared-memory pipeline depth
//   JDG_A_E5M2, JDG_B_E5M2  0: float8_e4m3fn operand, 1: float8_e5m2 operand
//   JDG_B_SCALE_PER_ROW     0: b_scale is 128x128 blocks [nb, kb] (row-major); 1: per-row 1x128 [kb, N] (N fastest)
//   JDG_OUT_F32             0: D is bfloat16; 1: D is float32
//   JDG_C_KIND              0: no C; 1: C is bfloat16 [M, N]; 2: C is float32 [M, N]
//
// Launch: grid = min(num_sms, number of tiles) persistent CTAs (1-D), block = fp8_gemm_num_threads(BLOCK_M),
// dynamic shared memory = fp8_gemm_smem_bytes(BLOCK_M, BLOCK_N, STAGES), no cluster.
//
// Tensor maps (encoded by the host per launch with cuTensorMapEncodeTiled):
//   A: uint8, 2-D, dims {K, M}, row stride K bytes (K % 16 == 0 is guaranteed by the caller), box {128, BLOCK_M},
//      128-byte swizzle, out-of-bounds elements zero-filled.
//   B: uint8, 2-D, dims {K, N}, row stride K bytes, box {128, BLOCK_N}, 128-byte swizzle, zero fill.
#pragma once

namespace jdg {

// Opaque 128-byte CUtensorMap, declared here so that neither side needs cuda.h.
struct alignas(64) TmaDescriptor {
  unsigned long long opaque[16];
};

struct Fp8GemmArgs {
  const float* a_scale;  // [kb, M]: A's 1x128 scales, M fastest (kb = ceil(K / 128))
  const float* b_scale;  // [nb, kb] (128x128 blocks) or [kb, N] (per row), see JDG_B_SCALE_PER_ROW
  const void* c;         // [M, N] row-major or nullptr (JDG_C_KIND == 0)
  void* d;               // [M, N] row-major output
  int m;                 // rows of A, C and D (>= 1)
};

constexpr int kFp8BlockK = 128;              // K elements per pipeline stage and per scale block
constexpr int kMaxDynamicSmemBytes = 232448;  // sm_90 opt-in limit per block

constexpr int fp8_gemm_num_threads(int block_m) {
  // One producer warpgroup plus one consumer warpgroup per 64 rows.
  return 128 + 128 * (block_m / 64);
}

constexpr bool fp8_gemm_block_m_supported(int block_m) { return block_m == 64 || block_m == 128; }

constexpr bool fp8_gemm_block_n_supported(int block_n) {
  // wgmma m64nNk32 for FP8 takes N in multiples of 8 up to 256; the kernel uses multiples of 16 up to 256.
  return block_n >= 16 && block_n <= 256 && block_n % 16 == 0;
}

constexpr int fp8_gemm_align(int x, int a) { return (x + a - 1) / a * a; }

// Dynamic shared memory of one CTA; the kernel carves it in this order, every part 1024-byte aligned:
//   stages x A tile (BLOCK_M x 128 bytes), stages x B tile (BLOCK_N x 128 bytes),
//   stages x full + stages x empty mbarriers (8 bytes each), plus 1024 bytes of slack for aligning the base.
constexpr int fp8_gemm_smem_bytes(int block_m, int block_n, int stages) {
  return fp8_gemm_align(stages * block_m * kFp8BlockK, 1024) + fp8_gemm_align(stages * block_n * kFp8BlockK, 1024) +
         fp8_gemm_align(2 * stages * 8, 1024) + 1024;
}

}  // namespace jdg
