// The weighted SwiGLU's gradient for one element, shared by the SwiGLU backward kernels (swiglu_backward.cuh: one warp
// per row; fp8_quantize.cuh with JDG_Q_SWIGLU: the grouped form in 128 x 128 tiles), so that both round the same dx.
//
// Forward: h = silu(g) * u * w. Given dh, with s = sigmoid(g) (fast exponential and reciprocal) and silu(g) = g * s,
// in float32:
//   dg = dh * w * u * s * (1 + g * (1 - s)),   du = dh * w * silu(g),   and dh * silu(g) * u, w's gradient's term.
#pragma once

namespace jdg {
namespace swiglu_grad {

// bfloat16 pairs in a 32-bit word: the low and high element as float32, and two floats rounded (to nearest even).
__device__ __forceinline__ float low(unsigned int pair) { return __uint_as_float(pair << 16); }
__device__ __forceinline__ float high(unsigned int pair) { return __uint_as_float(pair & 0xffff0000u); }
__device__ __forceinline__ unsigned int pack_bf16x2(float lo, float hi) {
  unsigned int r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

struct Element {
  float dg, du, dw_term;
};

__device__ __forceinline__ Element element(float g, float u, float dh, float w) {
  // (__fdividef: an approximate reciprocal, two instructions where 1.0f / x takes an IEEE division's dozen; within
  // 2 units of float32 rounding, and 0 for 1 + e^-g past 2^126, where sigmoid is below 2^-126 anyway)
  const float s = __fdividef(1.0f, 1.0f + __expf(-g));
  const float act = g * s;
  const float dhw = dh * w;
  return Element{dhw * u * (s * (1.0f + g * (1.0f - s))), dhw * act, dh * act * u};
}

// Two bfloat16 pairs of g, u and dh -> the pairs of dg and du, w's gradient's two terms added to dw (low first).
__device__ __forceinline__ void pair(unsigned int g, unsigned int u, unsigned int dh, float w, unsigned int& dg,
                                     unsigned int& du, float& dw) {
  const Element lo = element(low(g), low(u), low(dh), w), hi = element(high(g), high(u), high(dh), w);
  dw += lo.dw_term;
  dw += hi.dw_term;
  dg = pack_bf16x2(lo.dg, hi.dg);
  du = pack_bf16x2(lo.du, hi.du);
}

}  // namespace swiglu_grad
}  // namespace jdg
