// Small inline-PTX wrappers for the Hopper (sm_90a) kernels: mbarriers, TMA (the bulk tensor copy engine), wgmma,
// setmaxnreg, fences and a few conversions. Our own code: no CUTLASS/CuTe, no CUDA header, so NVRTC compiles it
// with no include path but ours (see DESIGN.md).
//
// Conventions:
//  * Shared-memory operands are 32-bit addresses in the shared window (`smem_addr(ptr)`), as PTX's
//    `.shared::cta` / `.shared::cluster` instructions take them.
//  * Everything is `__device__ __forceinline__` (the runtime compiles with -default-device anyway; nvcc needs it).
//  * asm that orders memory carries a "memory" clobber so the compiler keeps loads/stores on the right side.
#pragma once

#include <jax_deepgemm/wgmma_fp8.cuh>

namespace jdg {
namespace ptx {

// ----------------------------------------------------------------------------------------------- thread identity

__device__ __forceinline__ unsigned int lane_id() {
  unsigned int r;
  asm("mov.u32 %0, %%laneid;" : "=r"(r));
  return r;
}

// One lane of the (fully active) warp returns true. elect.sync picks it in hardware and tells the compiler that
// the branch is warp-uniform apart from that one lane.
__device__ __forceinline__ bool elect_one_sync() {
  unsigned int pred;
  asm volatile(
      "{\n.reg .b32 r;\n.reg .pred p;\n"
      "elect.sync r|p, 0xffffffff;\n"
      "selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(pred));
  return pred != 0;
}

// Broadcast lane 0's value to the warp; used to make a value warp-uniform so the compiler can keep it in a uniform
// register.
__device__ __forceinline__ int shfl0(int v) {
  int r;
  asm volatile("shfl.sync.idx.b32 %0, %1, 0, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v));
  return r;
}

// Lane `src`'s value, for every lane of the (converged) warp.
__device__ __forceinline__ float shfl_f32(float v, int src) {
  float r;
  asm volatile("shfl.sync.idx.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=f"(r) : "f"(v), "r"(src));
  return r;
}

// The same for an int.
__device__ __forceinline__ int shfl_s32(int v, int src) {
  int r;
  asm volatile("shfl.sync.idx.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v), "r"(src));
  return r;
}

// Lane (this lane - delta)'s value; lanes below delta get their own.
__device__ __forceinline__ unsigned int shfl_up_u32(unsigned int v, int delta) {
  unsigned int r;
  asm volatile("shfl.sync.up.b32 %0, %1, %2, 0, 0xffffffff;" : "=r"(r) : "r"(v), "r"(delta));
  return r;
}

// Bit l set where lane l's predicate holds (the warp must be converged).
__device__ __forceinline__ unsigned int ballot(bool p) {
  unsigned int r;
  asm volatile("{\n.reg .pred p;\nsetp.ne.u32 p, %1, 0;\nvote.sync.ballot.b32 %0, p, 0xffffffff;\n}\n"
               : "=r"(r)
               : "r"(static_cast<unsigned int>(p)));
  return r;
}

// Lane (this lane ^ lane_mask)'s value, for every lane of the (converged) warp.
__device__ __forceinline__ float shfl_xor_f32(float v, int lane_mask) {
  float r;
  asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=f"(r) : "f"(v), "r"(lane_mask));
  return r;
}

__device__ __forceinline__ unsigned int shfl_xor_u32(unsigned int v, int lane_mask) {
  unsigned int r;
  asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v), "r"(lane_mask));
  return r;
}

// Warp-wide min of a signed value over all 32 lanes (the warp must be converged).
__device__ __forceinline__ int redux_min(int v) {
  int r;
  asm volatile("redux.sync.min.s32 %0, %1, 0xffffffff;" : "=r"(r) : "r"(v));
  return r;
}

// Warp-wide maximum of a signed value over all 32 lanes (the warp must be converged).
__device__ __forceinline__ int redux_max(int v) {
  int r;
  asm volatile("redux.sync.max.s32 %0, %1, 0xffffffff;" : "=r"(r) : "r"(v));
  return r;
}

// Warp-wide sum of a signed value over all 32 lanes (the warp must be converged).
__device__ __forceinline__ int redux_add(int v) {
  int r;
  asm volatile("redux.sync.add.s32 %0, %1, 0xffffffff;" : "=r"(r) : "r"(v));
  return r;
}

// Whether the predicate holds in any / every lane of the (converged) warp.
__device__ __forceinline__ bool vote_any(bool p) {
  unsigned int r;
  asm volatile(
      "{\n.reg .pred p, q;\nsetp.ne.u32 p, %1, 0;\nvote.sync.any.pred q, p, 0xffffffff;\nselp.u32 %0, 1, 0, q;\n}\n"
      : "=r"(r)
      : "r"(static_cast<unsigned int>(p)));
  return r != 0;
}

__device__ __forceinline__ bool vote_all(bool p) {
  unsigned int r;
  asm volatile(
      "{\n.reg .pred p, q;\nsetp.ne.u32 p, %1, 0;\nvote.sync.all.pred q, p, 0xffffffff;\nselp.u32 %0, 1, 0, q;\n}\n"
      : "=r"(r)
      : "r"(static_cast<unsigned int>(p)));
  return r != 0;
}

// ----------------------------------------------------------------------------------------------- shared memory

__device__ __forceinline__ unsigned int smem_addr(const void* p) {
  unsigned int r;
  asm("{\n.reg .u64 t;\ncvta.to.shared.u64 t, %1;\ncvt.u32.u64 %0, t;\n}\n" : "=r"(r) : "l"(p));
  return r;
}

// ----------------------------------------------------------------------------------------------- mbarrier
// An mbarrier (8 bytes of shared memory) completes a phase when `count` arrivals and all expected transaction bytes
// (from TMA copies that signal it) have arrived. Waiters poll for the phase with a given parity: phase k is done
// once try_wait.parity(k & 1) succeeds. A fresh barrier is in phase 0, so waiting on parity 1 passes at once (the
// producer's first pass over the empty barriers relies on this).

__device__ __forceinline__ void mbarrier_init(unsigned int bar, unsigned int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

// Make barrier initialisation visible to the other threads and to the async proxy (TMA complete_tx).
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// One arrival (release semantics, CTA scope) by the calling thread.
__device__ __forceinline__ void mbarrier_arrive(unsigned int bar) {
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

// One arrival (release semantics, CTA scope) by lane 0 of the warp alone, predicated inside the asm rather than behind
// a branch: a branch on the lane splits the warp, and ptxas then keeps values computed after it (the stage index, the
// wgmma descriptors) in vector registers, moving them to uniform ones before every wgmma.
__device__ __forceinline__ void mbarrier_arrive_if_lane0(unsigned int bar, int lane) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.eq.s32 p, %1, 0;\n@p mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];\n}\n" ::"r"(bar),
      "r"(lane)
      : "memory");
}

// Arrive on the barrier at the same shared-memory offset in CTA `cta` of the cluster (possibly this one). The
// pipeline's consumers arrive after their wgmmas completed (wait_group), so the reads of the stage are over; the
// default (CTA-scope) release, as CUTLASS's cluster barriers use it: a cluster-scope one measured far slower (and
// waits until this thread's earlier stores are performed, NOTES 49).
__device__ __forceinline__ void mbarrier_arrive_cluster(unsigned int bar, unsigned int cta) {
  asm volatile(
      "{\n.reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(bar),
      "r"(cta)
      : "memory");
}

// Arrive once and announce `bytes` of TMA transactions that must land before the phase can complete.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(unsigned int bar, unsigned int bytes) {
  asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
               : "memory");
}

// kClusterAcquire: cluster-scope acquire, for data that other CTAs of the cluster stored (st_async_f32x4, whose
// transaction completion releases at cluster scope: split K's and the tail split's exchanges).
template <bool kClusterAcquire = false>
__device__ __forceinline__ bool mbarrier_try_wait(unsigned int bar, unsigned int parity) {
  unsigned int done;
  if constexpr (kClusterAcquire) {
    asm volatile(
        "{\n.reg .pred p;\n"
        "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } else {
    asm volatile(
        "{\n.reg .pred p;\n"
        "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  }
  return done != 0;
}

__device__ __forceinline__ unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Block until the phase with `parity` has completed. try_wait itself suspends the thread for a while in hardware,
// so the loop does not spin hot. With JDG_DEBUG_HANG_NS defined (test builds), a wait longer than that many
// nanoseconds traps, turning a pipeline deadlock into a launch error instead of a hung process.
template <bool kClusterAcquire = false>
__device__ __forceinline__ void mbarrier_wait(unsigned int bar, unsigned int parity) {
#ifdef JDG_DEBUG_HANG_NS
  unsigned long long start = 0;
  for (unsigned int it = 0; !mbarrier_try_wait<kClusterAcquire>(bar, parity); ++it) {
    if (it == 0) start = global_timer_ns();
    if ((it & 1023u) == 1023u && global_timer_ns() - start > (unsigned long long)(JDG_DEBUG_HANG_NS)) {
      asm volatile("trap;");
    }
  }
#else
  while (!mbarrier_try_wait<kClusterAcquire>(bar, parity)) {
  }
#endif
}

// mbarrier_wait for a converged warp, every lane on the same barrier and phase: one try_wait answers for all lanes,
// so the spin loop's branch is uniform and says so (bra.uni). ptxas takes a plain spin loop's exit as divergent and
// any shared load after it as non-uniform, and the tile loop then carries its stage counters in vector registers
// (the dynamic tile index read that way cost the K loop R2URs and 3-7%: benchmarks/NOTES.md 134).
template <bool kClusterAcquire = false>
__device__ __forceinline__ void mbarrier_wait_warp(unsigned int bar, unsigned int parity) {
#ifdef JDG_DEBUG_HANG_NS
  mbarrier_wait<kClusterAcquire>(bar, parity);
#else
  if constexpr (kClusterAcquire) {
    asm volatile(
        "{\n.reg .pred p;\nJDG_WAIT_WARP:\n"
        "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%0], %1;\n"
        "@!p bra.uni JDG_WAIT_WARP;\n}\n" ::"r"(bar), "r"(parity)
        : "memory");
  } else {
    asm volatile(
        "{\n.reg .pred p;\nJDG_WAIT_WARP:\n"
        "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%0], %1;\n"
        "@!p bra.uni JDG_WAIT_WARP;\n}\n" ::"r"(bar), "r"(parity)
        : "memory");
  }
#endif
}

// ----------------------------------------------------------------------------------------------- clusters

__device__ __forceinline__ unsigned int cluster_cta_rank() {
  unsigned int rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}

// Every thread of every CTA of the cluster arrives, then waits for all of them (barrier.cluster is per thread).
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// The same with relaxed arrivals, which do not wait for this thread's earlier memory operations to be performed
// (a release arrival does: ~700 cycles at a kernel's start, NOTES 49). For the start, where all that the other CTAs
// need is the barriers' initialisation, which fence_barrier_init has published, and for the end of clusters that
// have no remote write or arrival in flight (see the kernel's end).
__device__ __forceinline__ void cluster_sync_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// The shared::cluster address of the shared-memory address `addr` in CTA `cta` of the cluster.
__device__ __forceinline__ unsigned int cluster_smem_addr(unsigned int addr, unsigned int cta) {
  unsigned int remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(addr), "r"(cta));
  return remote;
}

// 16 bytes into another CTA's shared memory (`remote`, a shared::cluster address) that complete 16 bytes of the
// transaction count of the barrier `remote_bar` in that CTA: the receiver expects the bytes and waits for the
// barrier's phase as for a TMA load, and the sender needs no release fence (which waits until its stores are
// performed: ~1000 cycles per exchange with plain stores and a cluster-scope arrival, NOTES 49).
__device__ __forceinline__ void st_async_f32x4(unsigned int remote, float x, float y, float z, float w,
                                               unsigned int remote_bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, %4}, [%5];" ::"r"(remote),
               "f"(x), "f"(y), "f"(z), "f"(w), "r"(remote_bar)
               : "memory");
}

// 4 bytes into the shared memory of a CTA of the cluster (this one or another), completing 4 bytes of the
// transaction count of that CTA's barrier (as above). Needs a cluster launch, even of one CTA.
__device__ __forceinline__ void st_async_b32(unsigned int remote, unsigned int v, unsigned int remote_bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];" ::"r"(remote), "r"(v),
               "r"(remote_bar)
               : "memory");
}

__device__ __forceinline__ void st_shared_b32(unsigned int addr, unsigned int v) {
  asm volatile("st.shared.b32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
}

__device__ __forceinline__ unsigned int ld_shared_b32(unsigned int addr) {
  unsigned int v;
  asm volatile("ld.shared.b32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
  return v;
}

__device__ __forceinline__ void ld_shared_f32x4(unsigned int addr, float& x, float& y, float& z, float& w) {
  asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(x), "=f"(y), "=f"(z), "=f"(w) : "r"(addr) : "memory");
}


// ----------------------------------------------------------------------------------------------- TMA

// Pull the 128-byte tensor map (a __grid_constant__ kernel parameter) into the descriptor cache early.
__device__ __forceinline__ void prefetch_tensormap(const void* tmap) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(tmap) : "memory");
}

// The box at {c0, c1} of the tensor map pulled into L2 only (no shared memory, no barrier).
__device__ __forceinline__ void tma_prefetch_l2_2d(const void* tmap, int c0, int c1) {
  asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];" ::"l"(tmap), "r"(c0), "r"(c1)
               : "memory");
}

// 2-D tile copy global -> shared through the tensor map; the copy engine adds the box's byte count to `bar`'s
// transaction count when it lands. Coordinates are in elements, innermost first; out-of-bounds parts of the box
// are filled with zeros (and still count as bytes).
__device__ __forceinline__ void tma_load_2d(unsigned int dst, const void* tmap, unsigned int bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];" ::"r"(
          dst),
      "l"(tmap), "r"(bar), "r"(c0), "r"(c1)
      : "memory");
}

// The same copy delivered to every CTA in `cta_mask` of the cluster: the same shared-memory offset `dst` in each,
// each CTA's barrier at offset `bar` receiving the bytes.
__device__ __forceinline__ void tma_load_2d_multicast(unsigned int dst, const void* tmap, unsigned int bar, int c0,
                                                      int c1, unsigned short cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%3, "
      "%4}], [%2], %5;" ::"r"(dst),
      "l"(tmap), "r"(bar), "r"(c0), "r"(c1), "h"(cta_mask)
      : "memory");
}

// 2-D tile copy shared -> global through the tensor map (elements past the map's bounds are not written), in the
// thread's current bulk group (commit with bulk_commit_group).
__device__ __forceinline__ void tma_store_2d(const void* tmap, unsigned int src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];" ::"l"(tmap), "r"(src),
               "r"(c0), "r"(c1)
               : "memory");
}

__device__ __forceinline__ void bulk_commit_group() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }

// Wait until at most N of this thread's committed bulk groups are still reading their shared-memory source.
template <int N>
__device__ __forceinline__ void bulk_wait_group_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

// Wait until at most N of this thread's committed bulk groups are still in flight (writes done).
template <int N>
__device__ __forceinline__ void bulk_wait_group() {
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}

// Make this thread's generic-proxy writes to shared memory visible to the async proxy (a following TMA store).
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// The same over every state space (shared::cluster included): before writing another CTA's shared memory that the
// async proxy (TMA, wgmma) used last.
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async;" ::: "memory"); }

// Barrier `id` (1-15; 0 is __syncthreads) over `threads` threads (a multiple of 32) of the CTA.
__device__ __forceinline__ void named_barrier_sync(unsigned int id, unsigned int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// Two consecutive floats from shared memory, in this position among the volatile asm statements (the barrier waits
// that make the data visible come before it).
__device__ __forceinline__ void ld_shared_f32x2(unsigned int addr, float& x, float& y) {
  asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];" : "=f"(x), "=f"(y) : "r"(addr) : "memory");
}

// One 16-byte store to global memory at a 16-byte aligned address. (NVVM split a uint4 store through a pointer of
// 2-byte elements at a computed offset into four 32-bit stores, NOTES 108; PTX's vector store cannot be split.)
__device__ __forceinline__ void st_global_v4(void* p, unsigned int a, unsigned int b, unsigned int c, unsigned int d) {
  asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(a), "r"(b), "r"(c), "r"(d) : "memory");
}

// Four 8x8 matrices of 16-bit elements from a warp's fragments into shared memory: lane l holds element pair
// (row l / 4, columns 2 (l % 4), +1) of matrix j in r_j (the mma / wgmma accumulator layout), and gives the address
// of row l % 8 of matrix l / 8 (16 bytes, 16-byte aligned).
__device__ __forceinline__ void stmatrix_x4(unsigned int row_addr, unsigned int r0, unsigned int r1, unsigned int r2,
                                            unsigned int r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(row_addr), "r"(r0), "r"(r1),
               "r"(r2), "r"(r3)
               : "memory");
}

// ----------------------------------------------------------------------------------------------- wgmma

// Shared-memory matrix descriptor for a K-major tile whose rows are 128 bytes, written by TMA with the 128-byte
// swizzle (8-row / 1024-byte swizzle atoms; the tile base must be 1024-byte aligned so the base-offset field is 0):
//   bits  0-13  start address >> 4
//   bits 16-29  leading-dimension byte offset >> 4: unused for swizzled K-major tiles (one wgmma's K extent,
//               32 bytes, stays inside the 128-byte swizzled row), left 0
//   bits 32-45  stride-dimension byte offset >> 4: 1024 bytes from one 8-row group to the next
//   bits 62-63  swizzle mode, 1 = 128-byte swizzle
// Stepping along K inside the 128-byte row is done by adding (bytes >> 4) to the start address: the hardware applies
// the swizzle XOR to the final address, exactly as TMA did when it wrote the tile.
__device__ __forceinline__ unsigned long long make_smem_desc_sw128(unsigned int smem_address) {
  const unsigned long long start = (smem_address & 0x3FFFFu) >> 4;
  const unsigned long long sbo = 1024u >> 4;
  return start | (sbo << 32) | (1ull << 62);
}

// Order prior register writes of the accumulators before the following wgmma reads them.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }

__device__ __forceinline__ void wgmma_commit_group() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }

template <int N>
__device__ __forceinline__ void wgmma_wait_group() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

// The wgmma asm statements take the accumulators as "+f" operands, so the compiler believes they are final right
// after the (asynchronous) instruction is issued. Passing every accumulator through an empty asm statement after
// wgmma_wait_group pins all reads of them below the wait (and all writes above the next wgmma_fence).
template <int N>
__device__ __forceinline__ void fence_operands(float (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}

// Scheduling barrier: from here on the compiler must treat `value` (a shared address, a row index) as computed from
// `v`, so loads from addresses computed from it cannot be hoisted above the computation of `v`. Emits no instruction.
__device__ __forceinline__ void depend_on(unsigned int& value, float v) { asm volatile("" : "+r"(value) : "f"(v)); }

// ----------------------------------------------------------------------------------------------- registers

// Move registers between warpgroups (the whole warpgroup executes it): the producer gives back what it does not
// need, the consumers take it for their accumulators. Only effective with a register cap at kernel entry
// (__launch_bounds__(threads, 1)).
template <int kRegs>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kRegs));
}

template <int kRegs>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kRegs));
}

// ----------------------------------------------------------------------------------------------- global memory

// Read-only (non-coherent) cached load, for the scales, which nothing writes while the kernel runs. Not volatile:
// the compiler may move, merge or hoist it like any pure load.
__device__ __forceinline__ float ldg_f32(const float* p) {
  float r;
  asm("ld.global.nc.f32 %0, [%1];" : "=f"(r) : "l"(p));
  return r;
}

// The same for the int32 group data of the grouped GEMMs (expert ids, group sizes, masks).
__device__ __forceinline__ int ldg_s32(const int* p) {
  int r;
  asm("ld.global.nc.s32 %0, [%1];" : "=r"(r) : "l"(p));
  return r;
}

// ----------------------------------------------------------------------------------------------- conversions

// Two floats -> packed bf16x2 with round-to-nearest-even; `lo` lands in the low half (the lower address when
// stored), `hi` in the high half. cvt puts its first source operand in the upper half.
__device__ __forceinline__ unsigned int pack_bf16x2(float lo, float hi) {
  unsigned int r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// bf16 -> f32 is exact: the bf16 bits are the top half of the float.
__device__ __forceinline__ float bf16_to_f32(unsigned short x) {
  float r;
  asm("mov.b32 %0, %1;" : "=f"(r) : "r"(((unsigned int)x) << 16));
  return r;
}

}  // namespace ptx
}  // namespace jdg
