// Part of fp8_gemm.cuh (included after fp8_gemm_promote.cuh): the pipeline ring's waits and slots, and the FP32
// partial tiles that the CTAs of a cluster exchange (split K, the tail split).
#pragma once

namespace jdg {
namespace fp8_gemm {

// A partial tile in shared memory: BLOCK_M x BLOCK_N floats, each consumer thread's registers 16 bytes at a time,
// consecutive threads at consecutive addresses (conflict-free). send_partial writes this thread's part into another
// CTA's slot (`slot`: a shared::cluster address), each 16 bytes completing as many of the transaction count of that
// CTA's barrier `bar` (a shared::cluster address); add_partial adds this CTA's slot (a shared address) into `out`.
constexpr unsigned int kPartialBytes = kBlockM * kBlockN * 4;
static_assert(kPartialBytes == 4u * kNumMathThreads * kWaves * kAccRegs && kAccRegs % 4 == 0, "");

__device__ __forceinline__ void send_partial(const float (&out)[kWaves][kAccRegs], unsigned int slot,
                                             unsigned int bar) {
  slot += 16u * threadIdx.x;  // consumer threads are 0 .. kNumMathThreads - 1
#pragma unroll
  for (int v = 0; v < kWaves; ++v)
#pragma unroll
    for (int j = 0; j < kAccRegs / 4; ++j)
      ptx::st_async_f32x4(slot + (v * kAccRegs / 4 + j) * 16u * kNumMathThreads, out[v][4 * j], out[v][4 * j + 1],
                          out[v][4 * j + 2], out[v][4 * j + 3], bar);
}

__device__ __forceinline__ void add_partial(float (&out)[kWaves][kAccRegs], unsigned int slot) {
  slot += 16u * threadIdx.x;
#pragma unroll
  for (int v = 0; v < kWaves; ++v)
#pragma unroll
    for (int j = 0; j < kAccRegs / 4; ++j) {
      float x, y, z, w;
      ptx::ld_shared_f32x4(slot + (v * kAccRegs / 4 + j) * 16u * kNumMathThreads, x, y, z, w);
      out[v][4 * j] += x;
      out[v][4 * j + 1] += y;
      out[v][4 * j + 2] += z;
      out[v][4 * j + 3] += w;
    }
}

// The exchanges' barriers (kernel start): CTA 0's `full_bar` completes a phase on its consumer thread 0's arrival,
// which expects the bytes of the partial tiles, and those bytes (send_partial); a sender's `free_bar` on one arrival
// per consumer warp of CTA 0, once that warp has read the sender's slot.
constexpr unsigned int kExchangeFreeArrivals = kNumMathThreads / 32;

// CTA 0's consumer warps are done reading what CTA `cta` sent: one arrival per warp on its `free_bar` (CTA-scope
// release, as the pipeline's empty barriers: the reads' values are in registers by then).
__device__ __forceinline__ void free_partial(unsigned int free_bar, unsigned int cta, int lane) {
  __syncwarp();
  if (lane == 0) ptx::mbarrier_arrive_cluster(free_bar, cta);
}

// Split K, after a tile's K loop: CTA `part` > 0 of the cluster sends its FP32 partial tile `out` into slot part - 1
// of CTA 0's partial area (`partial`) and returns false: CTA 0 stores the tile. CTA 0 waits for every slot and adds
// them to its own partial in rank order, the same sum in every run whatever the timing, and returns true. A slot is
// written again only after CTA 0 has read it (free_partial; a fresh barrier counts as released). `phase`: the tiles
// exchanged so far, mod 2, the same in every CTA of the cluster.
__device__ __forceinline__ bool split_k_exchange(float (&out)[kWaves][kAccRegs], int part, unsigned int& phase,
                                                 unsigned int partial, unsigned int full_bar, unsigned int free_bar,
                                                 int lane) {
  bool stores = true;
  if (part > 0) {
    ptx::mbarrier_wait(free_bar, phase ^ 1u);
    send_partial(out, ptx::cluster_smem_addr(partial + (part - 1) * kPartialBytes, 0),
                 ptx::cluster_smem_addr(full_bar, 0));
    stores = false;
  } else {
    if (threadIdx.x == 0) ptx::mbarrier_arrive_expect_tx(full_bar, (kSplitK - 1) * kPartialBytes);
    ptx::mbarrier_wait<true>(full_bar, phase);
#pragma unroll
    for (int r = 1; r < kSplitK; ++r) add_partial(out, partial + (r - 1) * kPartialBytes);
#pragma unroll
    for (int r = 1; r < kSplitK; ++r) free_partial(free_bar, static_cast<unsigned int>(r), lane);
  }
  phase ^= 1u;
  return stores;
}

// Tail split, after the K loop of a split tile (the last tile of both CTAs of the pair, so each exchanges once):
// CTA 0 has no more stages coming, so once its consumers are done with them (free_partial on CTA 1's `free_bar`)
// CTA 1 writes its partial tile into CTA 0's A and B stages (`ring`) and returns false; CTA 0 adds the partial to
// its own and returns true: it stores the tile.
__device__ __forceinline__ bool tail_exchange(float (&out)[kWaves][kAccRegs], int part, unsigned int ring,
                                              unsigned int full_bar, unsigned int free_bar, int lane) {
  if (part > 0) {
    ptx::mbarrier_wait(free_bar, 0);
    ptx::fence_proxy_async();  // CTA 0's stages were last written by TMA and read by wgmma (the async proxy)
    send_partial(out, ptx::cluster_smem_addr(ring, 0), ptx::cluster_smem_addr(full_bar, 0));
    return false;
  }
  ptx::fence_proxy_async_shared();  // the stages' last TMA writes and wgmma reads come before CTA 1's writes
  free_partial(free_bar, 1, lane);
  if (threadIdx.x == 0) ptx::mbarrier_arrive_expect_tx(full_bar, kPartialBytes);
  ptx::mbarrier_wait<true>(full_bar, 0);
  add_partial(out, ring);
  return true;
}

// A pipeline barrier wait; with JDG_PROFILE_WAITS its cycles are added to `waited` (see the end of fp8_gemm.cuh).
__device__ __forceinline__ void wait_stage(unsigned int bar, unsigned int parity, unsigned long long& waited) {
  if constexpr (kProfileWaits) {
    const long long start = clock64();
    ptx::mbarrier_wait(bar, parity);
    waited += static_cast<unsigned long long>(clock64() - start);
  } else {
    ptx::mbarrier_wait(bar, parity);
  }
}

// The ring slot after `stage` (wrapping at kRingSlots flips the phase that its barriers' waits expect).
__device__ __forceinline__ void next_slot(int& stage, unsigned int& phase) {
  if (++stage == kRingSlots) {
    stage = 0;
    phase ^= 1u;
  }
}

}  // namespace fp8_gemm
}  // namespace jdg
