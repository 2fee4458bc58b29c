// The contract between the host runtime (ffi/fp8_quantize.cc) and the quantization kernels
// (fp8_quantize.cuh, compiled at run time): plain C++17, no CUDA header. See fp8_quantize.cuh for the macros.
#pragma once

namespace jdg {

constexpr int kFp8QuantizeBlock = 128;     // rows of x per scale block; columns of x per CTA
constexpr int kFp8QuantizeThreads = 256;
constexpr int kSwigluRowsPerCta = kFp8QuantizeThreads / 32;  // swiglu.cuh: one warp per row
constexpr float kFp8QuantizeMax = 448.0f;          // largest finite float8_e4m3fn
constexpr float kFp8QuantizeAmaxFloor = 1e-4f;     // an all-zero block still gets a finite scale

// The kernel's one argument. x [batch, rows, cols] row-major (with JDG_Q_ROW_MAP: [batch, x_rows, cols], of which
// row_index picks the rows); out [batch, cols, out_rows] float8_e4m3fn; scale
// float32 [batch, rblocks, cols] (per row of out, stored as the GEMMs read them: a CTA's 128 are one 512-byte run) or
// [batch, cblocks, rblocks] (per 128x128 block). JDG_Q_ROWWISE: out
// [batch, rows, cols], scale [batch, rows, cblocks]. The grid is batch * rblocks * cblocks CTAs.
struct Fp8QuantizeArgs {
  const void* x;
  const int* block_src;   // JDG_Q_BLOCK_MAP: [rblocks] first row of x of each row block
  const int* block_rows;  // JDG_Q_BLOCK_MAP: [rblocks] rows of x in each row block (the rest are zeros)
  const int* row_index;   // JDG_Q_ROW_MAP: [rows] the stored row of each row of x
  unsigned char* out;
  unsigned char* out_untransposed;  // JDG_Q_UNTRANSPOSED: [batch, rows, cols] float8_e4m3fn
  float* scale;
  // The SwiGLU kernels (swiglu.cuh): x is [g | u] [rows, cols] bfloat16. Forward: out and scale h's rowwise
  // quantization ([rows, cols / 2], [rows, cblocks] with cblocks = cols / 256). Backward: out and scale dx's
  // ([rows, cols], [rows, cblocks]).
  const void* grad;        // backward: dh [rows, cols / 2] bfloat16
  const float* row_weight; // w [rows]
  void* swiglu_out;        // bfloat16: forward h [rows, cols / 2], backward dx [rows, cols]
  float* row_weight_grad;  // backward: dw [rows]
  long long rows, cols, out_rows;
  long long x_rows;       // stored rows per batch (= rows without JDG_Q_ROW_MAP)
  int rblocks, cblocks;
};

}  // namespace jdg
