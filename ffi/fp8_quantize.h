// The FP8 quantization kernels (fp8_quantize.cuh: transposing, or rowwise; swiglu.cuh: the SwiGLU forward and
// backward, each with its rowwise quantization): problem, kernel source and JIT build (host-only, no GPU), and the XLA
// FFI handlers of the custom call "jdg_fp8_quantize_t".
#pragma once

#include <cstdint>
#include <string>

#include <xla/ffi/api/c_api.h>

#include "jit_runtime.h"

namespace jdg {

// Everything static about one call: the attributes of the custom call.
struct Fp8QuantizeProblem {
  std::int64_t batch = 1, rows = 0, cols = 0;
  std::int64_t rblocks = 0;  // row blocks of the output: ceil(rows / 128), or the block map's length
  bool in_f32 = false;       // x is float32 (else bfloat16)
  bool per_block = false;    // 128x128 block scales (else one per output row and 128 block)
  bool block_map = false;    // row blocks read through block_src / block_rows
  bool row_map = false;      // x's rows read through row_index [rows] from x_rows stored rows
  std::int64_t x_rows = 0;   // stored rows of x per batch: rows without a row map
  bool untransposed = false; // per_block without a block map: also x's own quantization [batch, rows, cols]
  bool rowwise = false;      // x's own per-token quantization (of the above, only with row_map)
  bool swiglu_forward = false;   // the SwiGLU's h and its rowwise quantization (bfloat16, none of the above)
  bool swiglu_backward = false;  // the SwiGLU backward's dx and its rowwise quantization (bfloat16, none of the above)
  std::string arch;

  std::int64_t cblocks() const { return (cols + 127) / 128; }
  std::int64_t out_rows() const { return block_map ? rblocks * 128 : rows; }
  bool swiglu() const { return swiglu_forward || swiglu_backward; }
  // The results' shapes outside the SwiGLU modes (whose handlers check their own): out [batch, cols, out_rows]
  // (rowwise: [batch, rows, cols], one scale per row and 128 columns) and scale.
  bool rows_out() const { return rowwise; }
  std::int64_t scale_rows() const { return rows_out() ? rows : per_block ? cblocks() : rblocks; }
  std::int64_t scale_cols() const { return rows_out() ? cblocks() : per_block ? rblocks : cols; }
};

// Throws std::invalid_argument naming the offending value.
void validate(const Fp8QuantizeProblem& p);

// "jdg_fp8_quantize_t_bf16_rows_map" ("jdg_fp8_quantize_rows_bf16" rowwise, with "_gather" through a row map;
// "jdg_swiglu_forward_bf16", "jdg_swiglu_backward_bf16"): the shapes are runtime arguments.
std::string fp8_quantize_kernel_name(const Fp8QuantizeProblem& p);

// The generated kernel.cu: the JDG_Q_* macros, then #include <jax_deepgemm/fp8_quantize.cuh> (or only
// #include <jax_deepgemm/swiglu.cuh>).
std::string fp8_quantize_source(const Fp8QuantizeProblem& p);

// The kernel's symbol: "jdg_fp8_quantize_t", "jdg_fp8_quantize_rows" rowwise, "jdg_swiglu_forward" or
// "jdg_swiglu_backward".
const char* fp8_quantize_symbol(const Fp8QuantizeProblem& p);

// Validates and compiles (through the caches). Throws std::exception on failure.
jit::BuildResult build_fp8_quantize(const Fp8QuantizeProblem& p);

}  // namespace jdg

// The stage handlers of "jdg_fp8_quantize_t" (one bundle, platform "CUDA") and their state type (registered first).
//
// Attributes: batch, rows, cols, rblocks, x_rows (i64), arch (string), in_f32, per_block, block_map, row_map,
// untransposed, rowwise, swiglu_backward (bool), swiglu_forward (bool, false where absent: programs serialized before
// it). Operands: x [batch, x_rows, cols] (bfloat16 or float32; cols a multiple of 8 or 4: 16-byte rows), then with
// row_map the int32 row_index [rows], then with block_map the int32 block_src [rblocks] and block_rows [rblocks].
// Results: out float8_e4m3fn [batch, cols, out_rows] and scale float32 [batch, rblocks, cols] (per row of out) or
// [batch, cblocks, rblocks] (per_block), then with untransposed float8_e4m3fn [batch, rows, cols]; rowwise: out
// float8_e4m3fn [batch, rows, cols] and scale float32 [batch, rows, cblocks]. swiglu_forward: operands x = [g | u]
// [batch, rows, cols] bfloat16 (cols a multiple of 256) and w [batch, rows] float32; results out and scale as rowwise
// of h [batch, rows, cols / 2], then h bfloat16. swiglu_backward: operands x as swiglu_forward's, dh [batch, rows,
// cols / 2] bfloat16 and w [batch, rows] float32; results out and scale as rowwise (dx's), then dx bfloat16 [batch,
// rows, cols] and dw float32 [batch, rows].
extern "C" XLA_FFI_Error* JdgFp8QuantizeInstantiate(XLA_FFI_CallFrame* call_frame);
extern "C" XLA_FFI_Error* JdgFp8QuantizeInitialize(XLA_FFI_CallFrame* call_frame);
extern "C" XLA_FFI_Error* JdgFp8QuantizeExecute(XLA_FFI_CallFrame* call_frame);

namespace jdg {
constexpr const char* kFp8QuantizeStateTypeName = "jax_deepgemm.Fp8QuantizeState";
XLA_FFI_TypeId* fp8_quantize_state_type_id();
const XLA_FFI_TypeInfo* fp8_quantize_state_type_info();
}  // namespace jdg
