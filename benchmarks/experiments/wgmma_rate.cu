// How fast do FP8 wgmmas issue when nothing else happens? One persistent CTA per SM, shared memory filled once
// with FP8 values (no TMA, no barriers), every warpgroup looping over K blocks the way the GEMM kernel does:
// per 64-row wave, fence, kPerCommit wgmmas m64nNk32 (A and B from shared memory, 128-byte swizzle), commit,
// wait, optionally promote (kPromote 1: out += s * acc, one FFMA per accumulator, as with 128 x 128 B block scales;
// 2: out += (acc * col_scale) * row_scale, an FMUL and an FFMA per accumulator with the column scales read from
// shared memory, as the k-grouped kernel's per-row B scales do; 3: the same FP32 work with the column scales in
// registers). Prints cycles per loop iteration and the fraction of the SM's 4096 FP8 FMA per clock that this is.
//
// Build (sm_90a; plain -arch=sm_90a does not accept wgmma): nvcc -O3 -gencode arch=compute_90a,code=sm_90a -std=c++17 -I cuda benchmarks/experiments/wgmma_rate.cu -o /tmp/wgmma_rate
#include <jax_deepgemm/ptx.cuh>

#include "cuda_check.h"

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <string>
#include <vector>

using namespace jdg;

constexpr int kWaveABytes = 64 * 128;  // one wave's 64 x 128 FP8 A block

// Shared-memory fill: a fixed pattern (FP8 e4m3 of magnitude 2^-3..2^3 with both signs), or with `random` on the
// command line hashed bytes (every e4m3 value but NaN; as FP32 row scales never NaN or infinite), as the GEMM's
// inputs are: does the tensor pipe's rate in cycles depend on the data?
__constant__ int c_random_fill;
__device__ __forceinline__ unsigned char fill_byte(int i) {
  if (!c_random_fill)
    return static_cast<unsigned char>((((i * 97 + 13) >> 3) & 0x80) | (0x28 + ((i * 31 + blockIdx.x) % 48)));
  unsigned int x = static_cast<unsigned int>(i) * 2654435761u ^ (blockIdx.x * 40503u + 0x9e3779b9u);
  x ^= x >> 15;
  x *= 2246822519u;
  x ^= x >> 13;
  const unsigned char b = static_cast<unsigned char>(x >> 24);
  return (b & 0x7f) == 0x7f ? b ^ 1 : b;
}
constexpr int kMaxWgs = 3, kMaxWaves = 2;

// kWait: 0 = wait for each wave's group before the next (the GEMM kernel), 1 = keep one group in flight
// (two accumulators alternate: the accumulator pipeline), -1 = never wait inside the loop (pure issue rate).
template <int N, int kWgs, int kWaves, int kPerCommit, int kPromote, int kWait>
__global__ void __launch_bounds__(kWgs * 128, 1) wgmma_rate(long long* cycles, float* sink, int iters) {
  extern __shared__ unsigned char smem_raw[];
  const unsigned int raw = static_cast<unsigned int>(__cvta_generic_to_shared(smem_raw));
  const unsigned int base = (raw + 1023u) & ~1023u;
  unsigned char* gbase = smem_raw + (base - raw);
  const int a_bytes = kMaxWgs * kMaxWaves * kWaveABytes, total = a_bytes + 256 * 128;
  // FP8 e4m3 values of magnitude 2^-3..2^3 with both signs, never NaN (0x7f / 0xff); column scales near 1.
  for (int i = threadIdx.x; i < total; i += blockDim.x) gbase[i] = fill_byte(i);
  for (int i = threadIdx.x; i < 1024; i += blockDim.x)
    reinterpret_cast<float*>(gbase + total)[i] = 1.0f + (fill_byte(i) & 15) * 1e-3f;
  __syncthreads();

  const int wg = threadIdx.x / 128;
  const unsigned long long desc_a0 = ptx::make_smem_desc_sw128(base + wg * kWaves * kWaveABytes);
  const unsigned long long desc_b = ptx::make_smem_desc_sw128(base + a_bytes);
  float acc[N / 2], acc2[N / 2], out[kWaves][N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) acc[i] = acc2[i] = 0.f;
#pragma unroll
  for (int v = 0; v < kWaves; ++v)
#pragma unroll
    for (int i = 0; i < N / 2; ++i) out[v][i] = 0.f;

  auto issue = [&](float (&a)[N / 2], int v) {
    ptx::fence_operands(a);
    ptx::wgmma_fence();
#pragma unroll
    for (int k = 0; k < kPerCommit; ++k)
      ptx::wgmma_fp8<N, false, false>(a, (desc_a0 + v * (kWaveABytes >> 4)) | (2 * (k % 4)), desc_b | (2 * (k % 4)),
                                      k > 0 ? 1u : 0u);
    ptx::wgmma_commit_group();
  };
  // Column scales for kPromote 2: 4 x 256 floats after the operands, a different quarter every iteration (so that
  // the loads stay in the loop), each thread reading its two columns of every 8-column chunk as one 8-byte load.
  const float* col_scales = reinterpret_cast<const float*>(gbase + total);
  float reg_scales[4][2];
#pragma unroll
  for (int c = 0; c < 4; ++c)
#pragma unroll
    for (int j = 0; j < 2; ++j) reg_scales[c][j] = col_scales[8 * c + 2 * (threadIdx.x % 4) + j];
  auto promote = [&](float (&a)[N / 2], int v, float s, int it) {
    ptx::fence_operands(a);
    if constexpr (kPromote == 1) {
#pragma unroll
      for (int i = 0; i < N / 2; ++i) out[v][i] = fmaf(s, a[i], out[v][i]);
    } else if constexpr (kPromote == 2) {
      const float2* cs = reinterpret_cast<const float2*>(col_scales + (it & 3) * 256 + 2 * (threadIdx.x % 4));
#pragma unroll
      for (int c = 0; c < N / 8; ++c) {
        const float2 sc = cs[4 * c];
#pragma unroll
        for (int j = 0; j < 4; ++j) out[v][4 * c + j] = fmaf(a[4 * c + j] * (j % 2 ? sc.y : sc.x), s, out[v][4 * c + j]);
      }
    } else if constexpr (kPromote == 3) {  // kPromote 2's FP32 work with the column scales in registers
#pragma unroll
      for (int c = 0; c < N / 8; ++c)
#pragma unroll
        for (int j = 0; j < 4; ++j) out[v][4 * c + j] = fmaf(a[4 * c + j] * reg_scales[c % 4][j % 2], s, out[v][4 * c + j]);
    }
  };

  __syncthreads();
  const long long t0 = clock64();
  if constexpr (kWait == 1) issue(acc, 0);  // the pipeline's first group
  int it = 0;
#pragma unroll 1
  do {  // iters >= 1: a loop that may run zero times makes ptxas copy the in-flight accumulators
    const float s = 1.0f + it * 1e-7f;
    if constexpr (kWait == 0) {
#pragma unroll
      for (int v = 0; v < kWaves; ++v) {
        issue(acc, v);
        ptx::wgmma_wait_group<0>();
        promote(acc, v, s, it);
      }
    } else if constexpr (kWait == 1) {  // one wave, two accumulators, unrolled by two
      issue(acc2, 0);
      ptx::wgmma_wait_group<1>();
      promote(acc, 0, s, it);
      issue(acc, 0);
      ptx::wgmma_wait_group<1>();
      promote(acc2, 0, s, it);
    } else {
#pragma unroll
      for (int v = 0; v < kWaves; ++v) issue(acc, v);
    }
  } while (++it < iters);
  ptx::wgmma_wait_group<0>();
  ptx::fence_operands(acc);
  ptx::fence_operands(acc2);
  const long long t1 = clock64();
  float total_out = 0.f;
#pragma unroll
  for (int i = 0; i < N / 2; ++i) {
    total_out += acc[i] + acc2[i];
#pragma unroll
    for (int v = 0; v < kWaves; ++v) total_out += out[v][i];
  }
  if (total_out == 12345.678f) sink[threadIdx.x] = total_out;  // keeps the work alive
  if (threadIdx.x % 128 == 0) cycles[blockIdx.x * kMaxWgs + wg] = t1 - t0;
}

template <int N, int kWgs, int kWaves, int kPerCommit, int kPromote, int kWait>
void run(const char* label, int num_sms, long long* d_cycles, float* d_sink) {
  auto kernel = wgmma_rate<N, kWgs, kWaves, kPerCommit, kPromote, kWait>;
  const int smem = 1024 + kMaxWgs * kMaxWaves * kWaveABytes + 256 * 128 + 4096;
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const int iters = 4000;
  kernel<<<num_sms, kWgs * 128, smem>>>(d_cycles, d_sink, 10);
  CHECK(cudaGetLastError());
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  CHECK(cudaEventRecord(e0));
  kernel<<<num_sms, kWgs * 128, smem>>>(d_cycles, d_sink, iters);
  CHECK(cudaEventRecord(e1));
  CHECK(cudaEventSynchronize(e1));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, e0, e1));
  static long long h[1024 * kMaxWgs];
  CHECK(cudaMemcpy(h, d_cycles, sizeof(long long) * num_sms * kMaxWgs, cudaMemcpyDeviceToHost));
  double sum = 0, mx = 0;
  for (int b = 0; b < num_sms; ++b)
    for (int w = 0; w < kWgs; ++w) {
      sum += h[b * kMaxWgs + w];
      if (h[b * kMaxWgs + w] > mx) mx = h[b * kMaxWgs + w];
    }
  const double per_iter = sum / (num_sms * kWgs) / iters;
  const int wgmmas = kWgs * (kWait == 1 ? 2 : kWaves) * kPerCommit;  // per CTA per iteration
  const double fma = double(wgmmas) * 64 * N * 32;
  std::printf("%-44s cycles/iter %8.1f  per wgmma %6.1f (math %5.1f)  of peak %5.1f%%  clock %4.0f MHz  %6.0f TFLOPS\n",
              label, per_iter, per_iter * kWgs / wgmmas, N / 2.0, 100.0 * fma / (per_iter * 4096), mx / (ms * 1e3),
              2.0 * fma * iters * num_sms / (ms * 1e-3) / 1e12);
}

// ----------------------------------------------------------------------------------------------- with a ring
// The producer thread of ring_rate: per K block, wait for the stage to be free, then fill it (or only arrive).
template <int kStages, int kFeed, int kCluster, int kStageBytes, int kABytes>
__device__ void produce(unsigned int base, unsigned int bars, const unsigned char* src, long long src_bytes,
                        int kblocks, unsigned int rank) {
  int st = 0;
    unsigned int phase = 0;
    const long long slots = src_bytes / kStageBytes;
    for (int kb = 0; kb < kblocks; ++kb) {
      ptx::mbarrier_wait(bars + 8 * (kStages + st), phase ^ 1u);
      const unsigned int full = bars + 8 * st;
      if constexpr (kFeed == 1) {
        ptx::mbarrier_arrive_expect_tx(full, 0);
      } else {
        ptx::mbarrier_arrive_expect_tx(full, kStageBytes);
        const unsigned char* from = src + (((blockIdx.x / kCluster) * 7919LL + kb) % slots) * kStageBytes;
        constexpr int kChunk = 16384;
        int first = 0;
        if constexpr (kCluster > 1) {  // A: this CTA's half into both CTAs
          constexpr int kHalf = kABytes / 2;
          for (int off = rank * kHalf; off < (rank + 1) * kHalf; off += kChunk) {
            const int bytes = (rank + 1) * kHalf - off < kChunk ? (rank + 1) * kHalf - off : kChunk;
            asm volatile(
                "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1], %2, "
                "[%3], %4;" ::"r"(base + st * kStageBytes + off),
                "l"(from + off), "r"(bytes), "r"(full), "h"(static_cast<unsigned short>(3))
                : "memory");
          }
          first = kABytes;
        }
#pragma unroll
        for (int off = first; off < kStageBytes; off += kChunk) {
          const int bytes = kStageBytes - off < kChunk ? kStageBytes - off : kChunk;
          asm volatile(
              "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                  base + st * kStageBytes + off),
              "l"(from + off), "r"(bytes), "r"(full)
              : "memory");
        }
      }
      if (++st == kStages) {
        st = 0;
        phase ^= 1u;
      }
    }

}

// The same K loop fed the way the GEMM kernel feeds it: kStages stages of shared memory (A: kWaves x 64 rows per
// consumer warpgroup, B: N rows, 128 bytes each, plus 256 floats of row scales), two consumer warpgroups and a
// producer warpgroup. kFeed 0: no barriers, the consumers cycle through the stages; 1: full/empty mbarriers, the
// producer only arrives (no data moves); 2: the producer copies each stage from an L2-resident global buffer with
// cp.async.bulk (complete_tx on the full barrier), like TMA without the tensor map. The promotion reads the row
// scales from the stage (as the kernel does). kCluster 2 (with kFeed 2): CTA pairs, each producer copies half of
// the A block and multicasts it into both CTAs (the kernel's TMA multicast), so L2 serves 3/4 of the bytes.
template <int N, int kWaves, int kStages, int kFeed, int kCluster>
__global__ void __launch_bounds__(384, 1) ring_rate(long long* cycles, float* sink, const unsigned char* src,
                                                    long long src_bytes, int kblocks) {
  constexpr int kABytes = 2 * kWaves * kWaveABytes, kBBytes = N * 128, kSABytes = 1024;
  constexpr int kStageBytes = kABytes + kBBytes + kSABytes;
  extern __shared__ unsigned char smem_raw[];
  const unsigned int raw = static_cast<unsigned int>(__cvta_generic_to_shared(smem_raw));
  const unsigned int base = (raw + 1023u) & ~1023u;
  unsigned char* gbase = smem_raw + (base - raw);
  const unsigned int bars = base + kStages * kStageBytes;  // full[s] at bars + 8s, empty[s] at bars + 8 (kStages + s)
  for (int i = threadIdx.x; i < kStages * kStageBytes; i += blockDim.x) gbase[i] = fill_byte(i);
  if (threadIdx.x == 0) {
    for (int st = 0; st < kStages; ++st) {
      ptx::mbarrier_init(bars + 8 * st, 1);
      ptx::mbarrier_init(bars + 8 * (kStages + st), 8 * kCluster);  // one arrival per consumer warp of the cluster
    }
    ptx::fence_barrier_init();
  }
  __syncthreads();
  if constexpr (kCluster > 1) ptx::cluster_sync();
  const unsigned int rank = kCluster > 1 ? ptx::cluster_cta_rank() : 0;
  const int wg = threadIdx.x / 128, lane = threadIdx.x % 32;

  if (wg == 2) {  // producer
    ptx::setmaxnreg_dec<40>();
    if (kFeed > 0 && threadIdx.x == 256) produce<kStages, kFeed, kCluster, kStageBytes, kABytes>(base, bars, src, src_bytes,
                                                                                       kblocks, rank);
    __syncwarp();
    if constexpr (kCluster > 1) ptx::cluster_sync();  // .aligned: the whole warp, converged
    return;
  }

  ptx::setmaxnreg_inc<232>();
  float acc[N / 2], out[kWaves][N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) acc[i] = 0.f;
#pragma unroll
  for (int v = 0; v < kWaves; ++v)
#pragma unroll
    for (int i = 0; i < N / 2; ++i) out[v][i] = 0.f;
  const int row = (threadIdx.x % 128) / 32 * 16 + lane / 4;
  int st = 0;
  unsigned int phase = 0;
  const long long t0 = clock64();
#pragma unroll 1
  for (int kb = 0; kb < kblocks; ++kb) {
    const unsigned int stage = base + st * kStageBytes;
    if constexpr (kFeed > 0) ptx::mbarrier_wait(bars + 8 * st, phase);
    const float* sa = reinterpret_cast<const float*>(gbase + st * kStageBytes + kABytes + kBBytes);
    const unsigned long long desc_b = ptx::make_smem_desc_sw128(stage + kABytes);
#pragma unroll
    for (int v = 0; v < kWaves; ++v) {
      const float sa0 = sa[(wg * kWaves + v) * 64 + row], sa1 = sa[(wg * kWaves + v) * 64 + row + 8];
      const unsigned long long desc_a = ptx::make_smem_desc_sw128(stage + (wg * kWaves + v) * kWaveABytes);
      ptx::fence_operands(acc);
      ptx::wgmma_fence();
#pragma unroll
      for (int k = 0; k < 4; ++k) ptx::wgmma_fp8<N, false, false>(acc, desc_a | (2 * k), desc_b | (2 * k), k > 0 ? 1u : 0u);
      ptx::wgmma_commit_group();
      ptx::wgmma_wait_group<0>();
      ptx::fence_operands(acc);
      if (kFeed > 0 && v == kWaves - 1) {
        if constexpr (kCluster > 1) {  // both producers write this stage
          if (lane < kCluster) ptx::mbarrier_arrive_cluster(bars + 8 * (kStages + st), lane);
        } else {
          ptx::mbarrier_arrive_if_lane0(bars + 8 * (kStages + st), lane);
        }
      }
#pragma unroll
      for (int i = 0; i < N / 2; ++i) out[v][i] = fmaf((i / 2) % 2 ? sa1 : sa0, acc[i], out[v][i]);
    }
    if (++st == kStages) {
      st = 0;
      phase ^= 1u;
    }
  }
  const long long t1 = clock64();
  float total_out = 0.f;
#pragma unroll
  for (int i = 0; i < N / 2; ++i)
#pragma unroll
    for (int v = 0; v < kWaves; ++v) total_out += out[v][i];
  if (total_out == 12345.678f) sink[threadIdx.x] = total_out;
  if (threadIdx.x % 128 == 0) cycles[blockIdx.x * kMaxWgs + wg] = t1 - t0;
  if constexpr (kCluster > 1) ptx::cluster_sync();  // no remote arrival may reach an exited CTA
}

template <int N, int kWaves, int kStages, int kFeed, int kCluster = 1>
void run_ring(const char* label, int num_sms, long long* d_cycles, float* d_sink, const unsigned char* src,
              long long src_bytes) {
  auto kernel = ring_rate<N, kWaves, kStages, kFeed, kCluster>;
  constexpr int kStageBytes = 2 * kWaves * kWaveABytes + N * 128 + 1024;
  const int smem = 1024 + kStages * kStageBytes + 16 * kStages;
  CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const int kblocks = 4000;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(num_sms / kCluster * kCluster);
  config.blockDim = dim3(384);
  config.dynamicSmemBytes = smem;
  cudaLaunchAttribute cluster = {};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = kCluster;
  cluster.val.clusterDim.y = cluster.val.clusterDim.z = 1;
  config.attrs = &cluster;
  config.numAttrs = 1;
  CHECK(cudaLaunchKernelEx(&config, kernel, d_cycles, d_sink, src, src_bytes, 10));
  CHECK(cudaGetLastError());
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  CHECK(cudaEventRecord(e0));
  CHECK(cudaLaunchKernelEx(&config, kernel, d_cycles, d_sink, src, src_bytes, kblocks));
  CHECK(cudaEventRecord(e1));
  CHECK(cudaEventSynchronize(e1));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, e0, e1));
  num_sms = num_sms / kCluster * kCluster;
  static long long h[1024 * kMaxWgs];
  CHECK(cudaMemcpy(h, d_cycles, sizeof(long long) * num_sms * kMaxWgs, cudaMemcpyDeviceToHost));
  double sum = 0, mx = 0;
  for (int b = 0; b < num_sms; ++b)
    for (int w = 0; w < 2; ++w) {
      sum += h[b * kMaxWgs + w];
      if (h[b * kMaxWgs + w] > mx) mx = h[b * kMaxWgs + w];
    }
  const double per_kb = sum / (num_sms * 2) / kblocks;
  const double fma = 2.0 * kWaves * 4 * 64 * N * 32;  // per CTA per K block
  std::printf("%-44s cycles/K block %7.1f  of peak %5.1f%%  clock %4.0f MHz  %6.0f TFLOPS  %5.2f TB/s moved\n", label,
              per_kb, 100.0 * fma / (per_kb * 4096), mx / (ms * 1e3), 2.0 * fma * kblocks * num_sms / (ms * 1e-3) / 1e12,
              kFeed == 2 ? double(kStageBytes) * kblocks * num_sms / (ms * 1e-3) / 1e12 : 0.0);
}

int main(int argc, char** argv) {
  const int random_fill = argc > 1 && std::string(argv[1]) == "random";
  CHECK(cudaMemcpyToSymbol(c_random_fill, &random_fill, sizeof(int)));
  int num_sms = 0;
  CHECK(cudaDeviceGetAttribute(&num_sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::setvbuf(stdout, nullptr, _IONBF, 0);  // every line out at once, even if a variant hangs
  std::printf("%s, %d SMs, %s data\n", prop.name, num_sms, random_fill ? "random" : "patterned");
  long long* d_cycles;
  float* d_sink;
  CHECK(cudaMalloc(&d_cycles, sizeof(long long) * num_sms * kMaxWgs));
  CHECK(cudaMalloc(&d_sink, sizeof(float) * 512));
  if (argc > 2 && std::string(argv[2]) == "per_row") {
    // The k-grouped promotion (kPromote 2) against the block-scale one, by tile shape: is its K loop held by the
    // promotion's FP32 work per warpgroup, and would a third consumer warpgroup (192 x 128 tiles) hide it?
    run<128, 2, 2, 4, 1, 0>("n128 wg2 wave2 promote (256x128)", num_sms, d_cycles, d_sink);
    run<128, 2, 2, 4, 2, 0>("n128 wg2 wave2 promote per row (256x128)", num_sms, d_cycles, d_sink);
    run<128, 2, 1, 4, 1, 0>("n128 wg2 wave1 promote (128x128)", num_sms, d_cycles, d_sink);
    run<128, 2, 1, 4, 2, 0>("n128 wg2 wave1 promote per row (128x128)", num_sms, d_cycles, d_sink);
    run<128, 3, 1, 4, 1, 0>("n128 wg3 wave1 promote (192x128)", num_sms, d_cycles, d_sink);
    run<128, 3, 1, 4, 2, 0>("n128 wg3 wave1 promote per row (192x128)", num_sms, d_cycles, d_sink);
    run<128, 2, 2, 4, 3, 0>("n128 wg2 wave2 per row, reg scales (256x128)", num_sms, d_cycles, d_sink);
    run<128, 3, 1, 4, 3, 0>("n128 wg3 wave1 per row, reg scales (192x128)", num_sms, d_cycles, d_sink);
    // One warpgroup: a wave's wgmmas plus its promotion with nothing beside them
    run<128, 1, 1, 4, 0, 0>("n128 wg1 wave1 no promote", num_sms, d_cycles, d_sink);
    run<128, 1, 1, 4, 1, 0>("n128 wg1 wave1 promote", num_sms, d_cycles, d_sink);
    run<128, 1, 1, 4, 2, 0>("n128 wg1 wave1 promote per row", num_sms, d_cycles, d_sink);
    run<128, 1, 1, 4, 3, 0>("n128 wg1 wave1 per row, reg scales", num_sms, d_cycles, d_sink);
    return 0;
  }
  // label: N, warpgroups, waves, wgmmas per commit, promotion, wait mode
  run<64, 2, 1, 4, 0, 0>("n64  wg2 wave1 k4 wait0", num_sms, d_cycles, d_sink);
  run<128, 2, 1, 4, 0, 0>("n128 wg2 wave1 k4 wait0", num_sms, d_cycles, d_sink);
  run<192, 2, 1, 4, 0, 0>("n192 wg2 wave1 k4 wait0", num_sms, d_cycles, d_sink);
  run<256, 2, 1, 4, 0, 0>("n256 wg2 wave1 k4 wait0", num_sms, d_cycles, d_sink);
  run<128, 1, 1, 4, 0, 0>("n128 wg1 wave1 k4 wait0", num_sms, d_cycles, d_sink);
  run<128, 3, 1, 4, 0, 0>("n128 wg3 wave1 k4 wait0", num_sms, d_cycles, d_sink);
  run<128, 2, 2, 4, 0, 0>("n128 wg2 wave2 k4 wait0 (256x128)", num_sms, d_cycles, d_sink);
  run<128, 2, 1, 16, 0, 0>("n128 wg2 wave1 k16 wait0", num_sms, d_cycles, d_sink);
  run<128, 2, 1, 4, 0, -1>("n128 wg2 wave1 k4 nowait", num_sms, d_cycles, d_sink);
  run<256, 2, 1, 4, 0, -1>("n256 wg2 wave1 k4 nowait", num_sms, d_cycles, d_sink);
  run<64, 2, 1, 4, 0, -1>("n64  wg2 wave1 k4 nowait", num_sms, d_cycles, d_sink);
  run<128, 2, 1, 4, 0, 1>("n128 wg2 wave1 k4 wait1 (acc pipeline)", num_sms, d_cycles, d_sink);
  run<128, 2, 1, 4, 1, 0>("n128 wg2 wave1 k4 wait0 promote", num_sms, d_cycles, d_sink);
  run<128, 2, 2, 4, 1, 0>("n128 wg2 wave2 k4 wait0 promote (256x128)", num_sms, d_cycles, d_sink);
  run<192, 2, 1, 4, 1, 0>("n192 wg2 wave1 k4 wait0 promote", num_sms, d_cycles, d_sink);
  // The GEMM kernel's feeding: 128 x 128 tiles (one wave per consumer) and 256 x 128 (two), L2-resident source.
  const long long src_bytes = 24ll << 20;
  unsigned char* src;
  CHECK(cudaMalloc(&src, src_bytes));
  if (random_fill) {  // random bytes, every e4m3 value but NaN (as in fill_byte)
    std::vector<unsigned char> host(src_bytes);
    unsigned long long x = 88172645463325252ull;
    for (auto& b : host) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      b = static_cast<unsigned char>(x >> 56);
      if ((b & 0x7f) == 0x7f) b ^= 1;
    }
    CHECK(cudaMemcpy(src, host.data(), src_bytes, cudaMemcpyHostToDevice));
  } else {
    CHECK(cudaMemset(src, 0x38, src_bytes));  // e4m3 1.0 (as floats, the row scales are small normal numbers)
  }
  run_ring<128, 1, 6, 0>("ring 128x128 s6 no barriers", num_sms, d_cycles, d_sink, src, src_bytes);
  run_ring<128, 1, 6, 1>("ring 128x128 s6 barriers, no data", num_sms, d_cycles, d_sink, src, src_bytes);
  run_ring<128, 1, 6, 2>("ring 128x128 s6 bulk copies from L2", num_sms, d_cycles, d_sink, src, src_bytes);
  run_ring<128, 2, 3, 0>("ring 256x128 s3 no barriers", num_sms, d_cycles, d_sink, src, src_bytes);
  run_ring<128, 2, 3, 1>("ring 256x128 s3 barriers, no data", num_sms, d_cycles, d_sink, src, src_bytes);
  run_ring<128, 2, 3, 2>("ring 256x128 s3 bulk copies from L2", num_sms, d_cycles, d_sink, src, src_bytes);
  run_ring<128, 2, 4, 2>("ring 256x128 s4 bulk copies from L2", num_sms, d_cycles, d_sink, src, src_bytes);
  run_ring<128, 2, 4, 2, 2>("ring 256x128 s4 L2, cluster 2 multicast A", num_sms, d_cycles, d_sink, src, src_bytes);
  run_ring<128, 1, 6, 2, 2>("ring 128x128 s6 L2, cluster 2 multicast A", num_sms, d_cycles, d_sink, src, src_bytes);
  run_ring<128, 2, 4, 2>("ring 256x128 s4 L2, 66 CTAs", 66, d_cycles, d_sink, src, src_bytes);
  run_ring<128, 2, 4, 2>("ring 256x128 s4 L2, 33 CTAs", 33, d_cycles, d_sink, src, src_bytes);
  run_ring<128, 1, 6, 2>("ring 128x128 s6 L2, 66 CTAs", 66, d_cycles, d_sink, src, src_bytes);
  return 0;
}
