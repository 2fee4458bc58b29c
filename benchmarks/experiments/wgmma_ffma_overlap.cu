// Can FP32 work run beside wgmmas without slowing them (benchmarks/NOTES.md 116)? The 256 x 128 loop's promotion
// stays partly exposed even where every FFMA of it has a wgmma group in flight (the probe's tall-q-ss). Here the
// wgmmas are alone with the promotion: no copies, no barriers. Each warpgroup (one or two per CTA, one CTA per SM)
// issues a group of four m64nNk32 wgmmas per iteration (N = 128, or 64 as the probe's quarters; A and B from shared
// memory, accumulating) and promotes its N / 2 floats into as many results with kOps FP32 operations per element (1:
// the dense promotion's FFMA, 2: the k-grouped one's FMUL and FFMA):
//   none     no promotion (the tensor time alone: 256 cycles per group, 512 for two warpgroups)
//   serial   wait for the group, then promote its accumulator (the two-wave loop's order: nothing of this
//            warpgroup's in flight meanwhile)
//   pipe     two accumulators in turn: issue the group into one, wait for the one before (wgmma.wait_group 1) and
//            promote it while the new group runs
//   pipe-ow  the same with each group's first wgmma overwriting its accumulator (scale-d 0), as the kernel's K blocks
// With kScales 2 the elements take two scales in turn, two elements each, as the kernel's promotion does (rows r and
// r + 8 of the wgmma fragment); ptxas then keeps the scale in the operand reuse cache for every other FFMA only.
// Prints cycles per group, median and slowest warpgroup. If the promotion beside the wgmmas cost them nothing,
// `pipe` would run at `none`'s time; if it costs what it issues, at `serial`'s.
//
// Build (sm_90a): nvcc -O3 -gencode arch=compute_90a,code=sm_90a -std=c++17 -I cuda
//   benchmarks/experiments/wgmma_ffma_overlap.cu -o /tmp/wgmma_ffma_overlap        Run: /tmp/wgmma_ffma_overlap
#include <jax_deepgemm/ptx.cuh>
#include <jax_deepgemm/wgmma_fp8.cuh>

#include "cuda_check.h"

#include <algorithm>
#include <cstdio>
#include <vector>

using namespace jdg::ptx;

enum Order { kNone, kSerial, kPipe, kPipeOverwrite };
const char* const kOrderNames[] = {"none", "serial", "pipe", "pipe-ow"};
constexpr int kIters = 4096, kASlot = 64 * 128, kBBytes = 128 * 128;

// kOverwrite: the first wgmma replaces the accumulator (scale-d 0), else every one adds to it.
template <int kN, bool kOverwrite>
__device__ __forceinline__ void group(float (&acc)[kN / 2], unsigned long long desc_a, unsigned long long desc_b) {
  fence_operands(acc);
  wgmma_fence();
#pragma unroll
  for (int k = 0; k < 4; ++k) wgmma_fp8<kN, false, false>(acc, desc_a | (2 * k), desc_b | (2 * k), !kOverwrite || k > 0);
  wgmma_commit_group();
}

// out += s * acc (kOps 1), or out += (acc * col) * s (kOps 2: a per-column factor first, as k-grouped's promotion)
template <int kOps, int kScales, int R>
__device__ __forceinline__ void promote(float (&out)[R], const float (&acc)[R], float s, const float (&col)[16]) {
  const float s2 = kScales == 2 ? s * 0.75f : s;  // the second row's scale
#pragma unroll
  for (int i = 0; i < R; ++i) out[i] = fmaf(kOps == 2 ? acc[i] * col[i / 4] : acc[i], (i / 2) % 2 ? s2 : s, out[i]);
}

template <int kWgs, int kOrder, int kOps, int kN, int kScales>
__global__ void __launch_bounds__(256, 1) overlap_kernel(float* sink, unsigned long long* cycles) {
  constexpr int R = kN / 2;  // accumulator floats per thread
  extern __shared__ __align__(1024) unsigned char smem[];
  const unsigned int base = (smem_addr(smem) + 1023u) & ~1023u;
  unsigned char* data = smem + (base - smem_addr(smem));
  for (int i = threadIdx.x; i < kWgs * kASlot + kBBytes; i += blockDim.x) data[i] = 0x30 + (i % 7);  // small values
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // the wgmmas read what the threads wrote
  __syncthreads();
  const int wg = threadIdx.x / 128;
  const unsigned long long desc_a = make_smem_desc_sw128(base + wg * kASlot);
  const unsigned long long desc_b = make_smem_desc_sw128(base + kWgs * kASlot);
  float acc0[R], acc1[R], out[R], col[16];
#pragma unroll
  for (int i = 0; i < R; ++i) acc0[i] = acc1[i] = out[i] = 0.f;
#pragma unroll
  for (int i = 0; i < 16; ++i) col[i] = 1.f + 0.001f * (threadIdx.x % 4 + i);
  const float s = 0.5f + 0.001f * (threadIdx.x % 32);
  const long long t0 = clock64();
  constexpr bool kOw = kOrder == kPipeOverwrite;
  if constexpr (kOrder == kPipe || kOrder == kPipeOverwrite) {
    // As the kernel's split_pass: the count through an empty asm and the last pair's branch kept with its other path,
    // so that ptxas sees the same groups in flight on every path (else it serializes every wgmma, C7514).
    int pairs = kIters / 2;
    asm volatile("" : "+r"(pairs));
    group<kN, kOw>(acc1, desc_a, desc_b);
    int it = 0;
#pragma unroll 1
    for (; it + 1 < pairs; ++it) {
      group<kN, kOw>(acc0, desc_a, desc_b);
      wgmma_wait_group<1>();
      fence_operands(acc1);
      promote<kOps, kScales>(out, acc1, s, col);
      group<kN, kOw>(acc1, desc_a, desc_b);
      wgmma_wait_group<1>();
      fence_operands(acc0);
      promote<kOps, kScales>(out, acc0, s, col);
    }
    if (it < pairs) {
      group<kN, kOw>(acc0, desc_a, desc_b);
      wgmma_wait_group<1>();
      fence_operands(acc1);
      promote<kOps, kScales>(out, acc1, s, col);
      wgmma_wait_group<0>();
      fence_operands(acc0);
      promote<kOps, kScales>(out, acc0, s, col);
    } else {
      wgmma_wait_group<0>();
      fence_operands(acc1);
    }
  } else {
#pragma unroll 1
    for (int it = 0; it < kIters; ++it) {
      group<kN, kOw>(acc0, desc_a, desc_b);
      wgmma_wait_group<0>();
      fence_operands(acc0);
      if constexpr (kOrder == kSerial) promote<kOps, kScales>(out, acc0, s, col);
    }
  }
  const long long t1 = clock64();
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < R; ++i) sum += acc0[i] + acc1[i] + out[i];
  sink[blockIdx.x * blockDim.x + threadIdx.x] = sum;
  if (threadIdx.x % 128 == 0) cycles[blockIdx.x * 2 + wg] = static_cast<unsigned long long>(t1 - t0);
}

template <int kWgs, int kOrder, int kOps, int kN, int kScales = 1>
void run(int sms, float* sink, unsigned long long* cycles) {
  const int smem = kWgs * kASlot + kBBytes + 1024;
  auto kernel = overlap_kernel<kWgs, kOrder, kOps, kN, kScales>;
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  for (int rep = 0; rep < 3; ++rep) {  // the last of three launches
    kernel<<<sms, 128 * kWgs, smem>>>(sink, cycles);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
  }
  std::vector<unsigned long long> host(2 * sms);
  CHECK(cudaMemcpy(host.data(), cycles, host.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  std::vector<double> per_iter;
  for (int c = 0; c < sms; ++c)
    for (int w = 0; w < kWgs; ++w) per_iter.push_back(double(host[2 * c + w]) / kIters);
  std::sort(per_iter.begin(), per_iter.end());
  std::printf("%3d %4d %-7s %4d %6d %10.1f %10.1f\n", kWgs, kN, kOrderNames[kOrder], kOrder == kNone ? 0 : kOps,
              kScales, per_iter[per_iter.size() / 2], per_iter.back());
}

template <int kWgs, int kN>
void rows(int sms, float* sink, unsigned long long* cycles) {
  run<kWgs, kNone, 1, kN>(sms, sink, cycles);
  run<kWgs, kSerial, 1, kN>(sms, sink, cycles);
  run<kWgs, kPipe, 1, kN>(sms, sink, cycles);
  run<kWgs, kSerial, 2, kN>(sms, sink, cycles);
  run<kWgs, kPipe, 2, kN>(sms, sink, cycles);
  run<kWgs, kPipeOverwrite, 1, kN>(sms, sink, cycles);
  run<kWgs, kPipeOverwrite, 2, kN>(sms, sink, cycles);
  run<kWgs, kSerial, 1, kN, 2>(sms, sink, cycles);
  run<kWgs, kPipe, 1, kN, 2>(sms, sink, cycles);
}

int main() {
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  std::printf("%s, %d SMs: %d groups of four m64nNk32 wgmmas per warpgroup\n", prop.name, sms, kIters);
  float* sink;
  unsigned long long* cycles;
  CHECK(cudaMalloc(&sink, sms * 256 * sizeof(float)));
  CHECK(cudaMalloc(&cycles, sms * 2 * sizeof(unsigned long long)));
  std::printf("wgs    N order   ops scales cycles/group (median)   (max)\n");
  for (int round = 0; round < 2; ++round) {
    rows<1, 128>(sms, sink, cycles);
    rows<2, 128>(sms, sink, cycles);
    rows<1, 64>(sms, sink, cycles);
    rows<2, 64>(sms, sink, cycles);
  }
  return 0;
}
