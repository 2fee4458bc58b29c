// The dense FP8 GEMM: problem description, kernel source generation and JIT build (host-only, no GPU needed),
// and the XLA FFI handlers of the custom call "jdg_fp8_gemm".
#pragma once

#include <cstdint>
#include <string>

#include <xla/ffi/api/c_api.h>

#include "heuristics.h"
#include "jit_runtime.h"

namespace jdg {

// Everything static about one call: the attributes of the custom call.
struct Fp8GemmProblem {
  std::int64_t m = 0, n = 0, k = 0;
  int num_sms = 0;
  bool a_e5m2 = false;           // A is float8_e5m2 (else float8_e4m3fn)
  bool b_e5m2 = false;           // B is float8_e5m2
  bool b_scale_per_row = false;  // b_scale is [kb, N] (1x128 per row) rather than [nb, kb] (128x128 blocks)
  bool out_f32 = false;          // D is float32 (else bfloat16)
  int c_kind = 0;                // 0: no C; 1: C bfloat16; 2: C float32
  std::string arch;              // e.g. "sm_90a"
};

// Throws std::invalid_argument naming the offending value.
void validate(const Fp8GemmProblem& p);

// "jdg_fp8_gemm_n7168_k2048_bm128_bn112_s5_e4m3_e4m3_sb_bf16_c0" (M is a runtime argument of the kernel).
std::string fp8_gemm_kernel_name(const Fp8GemmProblem& p, const Fp8GemmConfig& c);

// The generated kernel.cu: the JDG_* macros of fp8_gemm_abi.h, then #include <jax_deepgemm/fp8_gemm.cuh>.
std::string fp8_gemm_source(const Fp8GemmProblem& p, const Fp8GemmConfig& c);

struct Fp8GemmBuild {
  Fp8GemmConfig config;
  jit::BuildResult result;
};

// Validates, selects the configuration and compiles (through the caches). Throws std::exception on failure.
Fp8GemmBuild build_fp8_gemm(const Fp8GemmProblem& p);

}  // namespace jdg

// The stage handlers of "jdg_fp8_gemm" (register all three as one bundle, platform "CUDA"), and the type of their
// per-call-site state, which must be registered (jax.ffi.register_ffi_type) before the handlers.
extern "C" XLA_FFI_Error* JdgFp8GemmInstantiate(XLA_FFI_CallFrame* call_frame);
extern "C" XLA_FFI_Error* JdgFp8GemmInitialize(XLA_FFI_CallFrame* call_frame);
extern "C" XLA_FFI_Error* JdgFp8GemmExecute(XLA_FFI_CallFrame* call_frame);

namespace jdg {
constexpr const char* kFp8GemmStateTypeName = "jax_deepgemm.Fp8GemmState";
XLA_FFI_TypeId* fp8_gemm_state_type_id();
const XLA_FFI_TypeInfo* fp8_gemm_state_type_info();
}  // namespace jdg
