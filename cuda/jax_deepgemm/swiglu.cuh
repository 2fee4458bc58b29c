// The MoE experts' weighted SwiGLU kernels, each with the per-token FP8 quantization of its result, in one pass over
// the operands. x = [g | u] [rows, 2F] bfloat16 (gate and up projections side by side), one float32 weight w per row,
// s = sigmoid(g), all arithmetic in float32:
//
// `jdg_swiglu_forward`: h = silu(g) * u * w rounded to bfloat16 [rows, F], and h's per_token_cast_to_fp8 (out [rows,
// F], scale [rows, F / 128]) formed from the rounded h. As an XLA fusion and the rowwise cast this is two passes (h,
// then the quantization reading h back).
//
// `jdg_swiglu_backward`: given dh [rows, F] (bfloat16),
//   dg = dh * w * u * s * (1 + g * (1 - s)),   du = dh * w * silu(g),   dw = sum over the row of dh * silu(g) * u;
// results dx = [dg | du] rounded to bfloat16 [rows, 2F], dx's per_token_cast_to_fp8 (out [rows, 2F], scale [rows,
// 2F / 128]) formed from the rounded dx, and dw float32 [rows]. As XLA fusions and the rowwise cast this is three
// passes (dx, dw, and the quantization reading dx back): 186 us for x [16384, 4096] on an H200, this kernel 112 us
// (2026-12-01, benchmarks/NOTES.md 125).
//
// Both quantizations use fp8_cast.cuh's arithmetic: bit for bit the helper's result on the rounded values. Both
// kernels take one warp per row. Lane l holds columns 8 l .. 8 l + 7 of each 256-column chunk of g and u (and dh) as
// 16-byte vectors; a 128-column scale block lies in 16 adjacent lanes, whose shuffles form its amax. F is a multiple
// of 128 (the host checks): rows are 16-byte aligned, and no scale block holds columns of both g and u. dw sums each
// lane's columns in order, then the lanes in a fixed tree: the same bits on every run.
#pragma once

#include <jax_deepgemm/fp8_cast.cuh>
#include <jax_deepgemm/fp8_quantize_abi.h>

namespace jdg {
namespace swiglu {

constexpr int kVec = 8;                // bfloat16 per 16-byte vector
constexpr int kChunk = 32 * kVec;      // columns of g (and u, dh) per warp step

union Vector {
  uint4 bits;
  unsigned int pairs[kVec / 2];
};

__device__ __forceinline__ float low(unsigned int pair) { return __uint_as_float(pair << 16); }
__device__ __forceinline__ float high(unsigned int pair) { return __uint_as_float(pair & 0xffff0000u); }

// Two floats -> two bfloat16 (round to nearest even), `lo` in the low half.
__device__ __forceinline__ unsigned int pack_bf16x2(float lo, float hi) {
  unsigned int r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// silu(g) = g * s with s = sigmoid(g) (the GPU's fast exponential), and s.
__device__ __forceinline__ float silu(float g, float& s) {
  s = 1.0f / (1.0f + __expf(-g));
  return g * s;
}

// max |v| over 8 bfloat16 (NaN if one is NaN: on the bits, without the sign, a NaN is above every number).
__device__ __forceinline__ float vector_amax(const Vector& v) {
  unsigned int packed = 0;
#pragma unroll
  for (int p = 0; p < kVec / 2; ++p) packed = __vmaxu2(packed, v.pairs[p] & 0x7fff7fffu);
  return fp8_cast::max_nan(high(packed << 16), high(packed));
}

// v's 8 bfloat16 as float8_e4m3fn with its 128-column block's scale (the 16 lanes of this half-warp): 8 bytes, and
// the scale.
__device__ __forceinline__ uint2 quantize(const Vector& v, float& scale) {
  float amax = vector_amax(v);
#pragma unroll
  for (int offset = 8; offset > 0; offset /= 2)
    amax = fp8_cast::max_nan(amax, __shfl_xor_sync(0xffffffffu, amax, offset));
  scale = fp8_cast::scale_of(amax);
  float f[kVec];
#pragma unroll
  for (int p = 0; p < kVec / 2; ++p) {
    f[2 * p] = low(v.pairs[p]);
    f[2 * p + 1] = high(v.pairs[p]);
  }
  return make_uint2(fp8_cast::quantize_x4(f, scale), fp8_cast::quantize_x4(f + 4, scale));
}

// The row this warp takes (one warp per row, so the same in all its lanes); false past the last row.
__device__ __forceinline__ bool warp_row(const Fp8QuantizeArgs& args, long long& row) {
  row = static_cast<long long>(blockIdx.x) * kSwigluRowsPerCta + threadIdx.x / 32;
  return row < args.rows;
}

}  // namespace swiglu
}  // namespace jdg

extern "C" __global__ void __launch_bounds__(jdg::kFp8QuantizeThreads)
    jdg_swiglu_forward(const jdg::Fp8QuantizeArgs args) {
  using namespace jdg::swiglu;
  long long row;
  if (!warp_row(args, row)) return;  // (uniform over the warp)
  const int lane = threadIdx.x % 32;
  const long long f = args.cols / 2;
  const unsigned short* x = static_cast<const unsigned short*>(args.x) + row * args.cols;
  unsigned short* h = static_cast<unsigned short*>(args.swiglu_out) + row * f;
  unsigned char* out = args.out + row * f;
  float* scale_out = args.scale + row * args.cblocks;
  const float w = __ldg(args.row_weight + row);
  for (long long c0 = 0; c0 < f; c0 += kChunk) {
    const long long c = c0 + lane * kVec;
    const bool active = c < f;  // (f is a multiple of 128: whole half-warps)
    Vector g, u;
    g.bits = u.bits = make_uint4(0, 0, 0, 0);
    if (active) {
      g.bits = __ldg(reinterpret_cast<const uint4*>(x + c));
      u.bits = __ldg(reinterpret_cast<const uint4*>(x + f + c));
    }
    Vector hv;
#pragma unroll
    for (int p = 0; p < kVec / 2; ++p) {
      float h2[2];
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        float s;
        const float act = silu(half ? high(g.pairs[p]) : low(g.pairs[p]), s);
        h2[half] = act * (half ? high(u.pairs[p]) : low(u.pairs[p])) * w;  // (silu(g) * u, then * w)
      }
      hv.pairs[p] = pack_bf16x2(h2[0], h2[1]);
    }
    float h_scale;
    const uint2 h_q = quantize(hv, h_scale);  // (every lane: they shuffle)
    if (!active) continue;
    *reinterpret_cast<uint4*>(h + c) = hv.bits;
    *reinterpret_cast<uint2*>(out + c) = h_q;
    if (lane % 16 == 0) scale_out[c / jdg::kFp8QuantizeBlock] = h_scale;
  }
}

extern "C" __global__ void __launch_bounds__(jdg::kFp8QuantizeThreads)
    jdg_swiglu_backward(const jdg::Fp8QuantizeArgs args) {
  using namespace jdg::swiglu;
  long long row;
  if (!warp_row(args, row)) return;  // (uniform over the warp)
  const int lane = threadIdx.x % 32;
  const long long f = args.cols / 2;
  const unsigned short* x = static_cast<const unsigned short*>(args.x) + row * args.cols;
  const unsigned short* dh = static_cast<const unsigned short*>(args.grad) + row * f;
  unsigned short* dx = static_cast<unsigned short*>(args.swiglu_out) + row * args.cols;
  unsigned char* out = args.out + row * args.cols;
  float* scale_out = args.scale + row * args.cblocks;
  const float w = __ldg(args.row_weight + row);
  float dw = 0.0f;
  for (long long c0 = 0; c0 < f; c0 += kChunk) {
    const long long c = c0 + lane * kVec;
    const bool active = c < f;  // (f is a multiple of 128: whole half-warps)
    Vector g, u, d;
    g.bits = u.bits = d.bits = make_uint4(0, 0, 0, 0);
    if (active) {
      g.bits = __ldg(reinterpret_cast<const uint4*>(x + c));
      u.bits = __ldg(reinterpret_cast<const uint4*>(x + f + c));
      d.bits = __ldg(reinterpret_cast<const uint4*>(dh + c));
    }
    Vector dg, du;
#pragma unroll
    for (int p = 0; p < kVec / 2; ++p) {
      float dg2[2], du2[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float gf = h ? high(g.pairs[p]) : low(g.pairs[p]);
        const float uf = h ? high(u.pairs[p]) : low(u.pairs[p]);
        const float df = h ? high(d.pairs[p]) : low(d.pairs[p]);
        float s;
        const float act = silu(gf, s);
        dw += df * act * uf;  // (zeros past F add nothing)
        const float dhw = df * w;
        dg2[h] = dhw * uf * (s * (1.0f + gf * (1.0f - s)));
        du2[h] = dhw * act;
      }
      dg.pairs[p] = pack_bf16x2(dg2[0], dg2[1]);
      du.pairs[p] = pack_bf16x2(du2[0], du2[1]);
    }
    float g_scale, u_scale;
    const uint2 g_q = quantize(dg, g_scale), u_q = quantize(du, u_scale);  // (every lane: they shuffle)
    if (!active) continue;
    *reinterpret_cast<uint4*>(dx + c) = dg.bits;
    *reinterpret_cast<uint4*>(dx + f + c) = du.bits;
    *reinterpret_cast<uint2*>(out + c) = g_q;
    *reinterpret_cast<uint2*>(out + f + c) = u_q;
    if (lane % 16 == 0) {
      scale_out[c / jdg::kFp8QuantizeBlock] = g_scale;
      scale_out[(f + c) / jdg::kFp8QuantizeBlock] = u_scale;
    }
  }
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) dw += __shfl_xor_sync(0xffffffffu, dw, offset);
  if (lane == 0) args.row_weight_grad[row] = dw;
}
