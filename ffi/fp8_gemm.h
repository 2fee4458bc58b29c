// The FP8 GEMM (dense and the M-grouped MoE variants): problem description, kernel source generation and JIT build
// (host-only, no GPU needed), and the XLA FFI handlers of the custom call "jdg_fp8_gemm".
#pragma once

#include <cstdint>
#include <string>

#include <xla/ffi/api/c_api.h>

#include "heuristics.h"
#include "jit_runtime.h"

namespace jdg {

// The layouts of fp8_gemm_abi.h's JDG_GROUPED_MODE; the custom call's "grouping" attribute names them.
enum class Grouping { kDense = 0, kContiguous = 1, kRagged = 2, kMasked = 3, kKGrouped = 4 };

const char* grouping_name(Grouping g);  // "dense", "contiguous", "ragged", "masked", "k_grouped"
// Parses a name; throws std::invalid_argument naming the accepted ones.
Grouping parse_grouping(const std::string& name);

// Everything static about one call: the attributes of the custom call.
struct Fp8GemmProblem {
  std::int64_t m = 0, n = 0, k = 0;  // m: rows of A (masked: rows per group)
  Grouping grouping = Grouping::kDense;
  std::int64_t num_groups = 1;       // G (grouped); 1 for dense
  std::int64_t expected_m = 0;       // masked: expected rows per group (heuristic hint; <= 0: m)
  int num_sms = 0;               // SMs of the GPU planned for (the handler: this process's GPUs'; see used_sms)
  int sms_cap = 0;               // set_num_sms's cap, 0: none
  int hbm_gbs = 0;               // the GPU's peak HBM bandwidth, GB/s (dense split-K model); 0: unknown
  bool a_e5m2 = false;           // A is float8_e5m2 (else float8_e4m3fn)
  bool b_e5m2 = false;           // B is float8_e5m2
  bool b_scale_per_row = false;  // b_scale is [kb, N] (1x128 per row) rather than [nb, kb] (128x128 blocks)
  bool out_f32 = false;          // D is float32 (else bfloat16)
  int c_kind = 0;                // 0: no C; 1: C bfloat16; 2: C float32
  std::string arch;              // e.g. "sm_90a"
};

// Throws std::invalid_argument naming the offending value.
void validate(const Fp8GemmProblem& p);

// The SMs the persistent kernels use: num_sms under sms_cap. The one place the cap applies, for the handler and for
// ahead-of-time compilation alike.
int used_sms(const Fp8GemmProblem& p);

// "jdg_fp8_gemm_n7168_k2048_bm128_bn112_s5_e4m3_e4m3_sb_bf16_c0" (M is a runtime argument of the kernel); grouped
// kernels insert the layout after "jdg_fp8_gemm_" ("jdg_fp8_gemm_masked_n7168_..."; G is a runtime argument too).
// `profile_waits`: the DG_PROFILE_WAITS build ("..._pw", JDG_PROFILE_WAITS).
std::string fp8_gemm_kernel_name(const Fp8GemmProblem& p, const Fp8GemmConfig& c, bool profile_waits = false);

// The generated kernel.cu: the JDG_* macros of fp8_gemm_abi.h, then #include <jax_deepgemm/fp8_gemm.cuh>.
std::string fp8_gemm_source(const Fp8GemmProblem& p, const Fp8GemmConfig& c, bool profile_waits = false);

struct Fp8GemmBuild {
  Fp8GemmConfig config;
  bool profile_waits = false;  // DG_PROFILE_WAITS when it was compiled: the module has the profile report kernel
  jit::BuildResult result;
};

// The configuration the heuristics pick for p (validated first).
Fp8GemmConfig select_config(const Fp8GemmProblem& p);

// Validates, selects the configuration and compiles (through the caches), reading DG_PROFILE_WAITS once. Throws
// std::exception on failure.
Fp8GemmBuild build_fp8_gemm(const Fp8GemmProblem& p);

}  // namespace jdg

// The stage handlers of "jdg_fp8_gemm" (register all three as one bundle, platform "CUDA"), and the type of their
// per-call-site state, which must be registered (jax.ffi.register_ffi_type) before the handlers.
//
// Attributes: m, n, k, num_sms, c_kind (i64), arch (string), a_e5m2, b_e5m2, b_scale_per_row, out_f32 (bool),
// optionally hbm_gbs and sms_cap (i64, default 0: unknown / none), and for the grouped GEMMs grouping ("contiguous" |
// "ragged" | "masked" | "k_grouped"; absent: dense), num_groups, expected_m (i64). Operands: a, a_scale, b, b_scale,
// then C (dense, optional) or the int32 group data (grouped: m_indices [m], group_sizes [G] or masked_m [G]) and,
// k-grouped only, an optional float32 C [G * m, n]; one result d. Shapes as fp8_gemm_abi.h lays them out, 2-D (grouped
// operands flattened over the group axis).
extern "C" XLA_FFI_Error* JdgFp8GemmInstantiate(XLA_FFI_CallFrame* call_frame);
extern "C" XLA_FFI_Error* JdgFp8GemmInitialize(XLA_FFI_CallFrame* call_frame);
extern "C" XLA_FFI_Error* JdgFp8GemmExecute(XLA_FFI_CallFrame* call_frame);

namespace jdg {
constexpr const char* kFp8GemmStateTypeName = "jax_deepgemm.Fp8GemmState";
XLA_FFI_TypeId* fp8_gemm_state_type_id();
const XLA_FFI_TypeInfo* fp8_gemm_state_type_info();
}  // namespace jdg
