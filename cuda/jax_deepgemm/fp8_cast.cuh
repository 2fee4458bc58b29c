// The float32 -> float8_e4m3fn arithmetic of jax_deepgemm.quantization's helpers as XLA compiles them for the GPU,
// shared by the quantization kernels (fp8_quantize.cuh, swiglu_backward.cuh), so that their results equal the
// helpers' there bit for bit: scale = max(amax, 1e-4) * f32(1 / 448), q = clip(x / scale, -448, 448) with XLA's
// division (div.full) and NaN-propagating max / min, rounded to nearest even. The kernels reach the same bits with
// fewer instructions: divide() and quantize_x4() say why.
#pragma once

#include <jax_deepgemm/fp8_quantize_abi.h>

namespace jdg {
namespace fp8_cast {

// max that returns NaN when either operand is NaN (XLA's maximum).
__device__ __forceinline__ float max_nan(float a, float b) {
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}

// x / scale as XLA divides f32 on NVIDIA GPUs (div.full, its NVPTX setting), so that the result equals the
// helpers' run on the GPU bit for bit (on the CPU they divide with IEEE rounding, which can differ in the last bit).
// div.full.f32 is x * rcp.approx(scale), after scaling both operands by 1/4 where |scale| > 2^126 and by 2^24 where
// |scale| < 2^-126. Every scale here comes from scale_of(): >= 1e-4 / 448 and, when finite, <= FLT_MAX / 448 < 2^126,
// so neither scaling applies (an infinite scale gives x * 0 either way, a NaN one NaN), and the bare product is
// div.full's quotient bit for bit at one multiply per element instead of three (NOTES 127, 128).
__device__ __forceinline__ float divide(float x, float scale) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(scale));
  return __fmul_rn(x, r);
}

// Two floats -> two float8_e4m3fn bytes, round to nearest even: `lo` in the low byte.
__device__ __forceinline__ unsigned int pack_e4m3x2(float lo, float hi) {
  unsigned short r;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
  return r;
}

// The helpers' clip to [-448, 448] is left out: with |x| <= amax and scale = max(amax, 1e-4) / 448 the quotient is
// at most 448 plus a few ulps, which rounds to 448 (as a clipped 448 does), and a NaN quotient (a NaN or infinite
// amax) is the canonical NaN that clip returns too. So the four quotients convert as they are.
__device__ __forceinline__ unsigned int quantize_x4(const float* x, float scale) {
  float q[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) q[i] = divide(x[i], scale);
  return pack_e4m3x2(q[0], q[1]) | (pack_e4m3x2(q[2], q[3]) << 16);
}

// XLA turns the helpers' division by the constant 448 into a product with its float32 reciprocal.
__device__ __forceinline__ float scale_of(float amax) {
  return max_nan(amax, kFp8QuantizeAmaxFloor) * (1.0f / kFp8QuantizeMax);
}

}  // namespace fp8_cast
}  // namespace jdg
