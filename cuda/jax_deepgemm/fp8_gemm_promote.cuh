// Part of fp8_gemm.cuh (included after fp8_gemm_epilogue.cuh): the K loop's math. One K block's wgmma group, and the
// promotion of its accumulator into the FP32 result with the A and B scales.
#pragma once

namespace jdg {
namespace fp8_gemm {

// Where tile row r0's A scale sits in a stage's A scales as loaded, counted from the stage's first float + (row0 & 3):
// they come in kSABoxes boxes of kSABoxRows tile rows, box b loaded from row (row0 & ~3) + b * kSABoxRows into a slot
// of kSASlotFloats floats.
__device__ __forceinline__ int a_scale_offset(int r0) {
  return (r0 / kSABoxRows) * (kSASlotFloats - kSABoxRows) + r0;
}

// This thread's A scales, tile rows r0 and r0 + 8 (one 16-row group of a wave), from the A scales of one stage as
// loaded: `sa_stage` = the stage's first float + (row0 & 3).
__device__ __forceinline__ void read_a_scales(const float* sa_stage, int r0, float& sa0, float& sa1) {
  const int at = a_scale_offset(r0);
  sa0 = sa_stage[at];
  sa1 = sa_stage[at + 8];
}

// The A scales of this thread's rows r0 and r0 + 8 in stage `stage`, for the 128- and 64-row passes (one wave).
// Ragged and masked tiles start on any row, so that row0 & 3 is known only at run time: they read at `index`,
// a_scale_index(row0, r0), computed once per tile (added to the stage's address inside their K loops, the offset
// moved the loops' instructions: ragged 128 x 192 tiles ran 3.4% faster without it, NOTES 91, and 4.1% in the form
// taken, NOTES 92). Elsewhere tiles start on multiples of 64 rows; the offset, 0, stays in the address as before,
// which keeps those K loops as measured.
__device__ __forceinline__ int a_scale_index(int row0, int r0) { return (row0 & 3) + a_scale_offset(r0); }

__device__ __forceinline__ void pass_a_scales(const float* sa_stages, int stage, int row0, int r0, int index,
                                              float& sa0, float& sa1) {
  if constexpr (kWalksGroups) {
    const float* sa_stage = sa_stages + stage * (kSmemSABytes / 4);
    sa0 = sa_stage[index];
    sa1 = sa_stage[index + 8];
  } else {
    read_a_scales(sa_stages + stage * (kSmemSABytes / 4) + (row0 & 3), r0, sa0, sa1);
  }
}

// out += v, or, for a contiguous pass that covers only some of this thread's rows (kRowMask), only where `keep`:
// a select rather than a multiplication by 0, so that NaN or Inf computed for a row of another expert (or a padding
// row's garbage) never reaches it.
template <bool kRowMask>
__device__ __forceinline__ void add_to(float& out, float v, bool keep) {
  if constexpr (kRowMask) {
    out = keep ? out + v : out;
  } else {
    out += v;
  }
}

// Promotion with per-column B scales: this thread's two columns of each 8-column chunk, a float2 of the stage's
// scales at shared address `col_scales` + 32 bytes per chunk (columns past N hold TMA's zero fill, and their products
// are zero too). They are read in groups of kScaleGroup chunks, each group's loads issued while the group before it
// is promoted, the first group's (`head`, load_col_scales) by the caller before it waits for the wgmmas: so no
// load's latency stands between the wgmmas and the promotion's FP32 work (NOTES 44: with one group of 8 chunks
// loaded at a time after the wait, FMULs waiting for them drew 9% of the k-grouped kernel's stall samples). Left
// alone, the compiler hoists every load to the top and spills the accumulators; making the loads of group g + 1
// depend on the results of group g - 1 (an empty asm) keeps two groups in flight. keep0 / keep1: see add_to.
constexpr int kScaleGroup = 4;
constexpr int kScaleGroups = (kNumChunks + kScaleGroup - 1) / kScaleGroup;

__device__ __forceinline__ void load_col_scales(Float2 (&scales)[kScaleGroup], unsigned int col_scales, int group) {
#pragma unroll
  for (int i = 0; i < kScaleGroup; ++i) {
    const int c = group * kScaleGroup + i;
    if (c < kNumChunks) ptx::ld_shared_f32x2(col_scales + 32 * c, scales[i].x, scales[i].y);
  }
}

// Two waves of a 256-row tile promote the same columns: the first (kKeep 1) keeps groups 1 .. kKeptGroups of its
// column scales in `kept`, the second (kKeep 2) takes them from there instead of shared memory (its group 0 is the
// head, read while its wgmmas run).
constexpr int kKeptGroups = kScaleGroups > 2 ? 2 : kScaleGroups - 1;
template <bool kRowMask, int kKeep = 0>
__device__ __forceinline__ void promote_per_row(float (&out)[kAccRegs], const float (&acc)[kAccRegs],
                                                unsigned int col_scales, const Float2 (&head)[kScaleGroup], float sa0,
                                                float sa1, bool keep0, bool keep1,
                                                Float2 (&kept)[kKeptGroups > 0 ? kKeptGroups : 1][kScaleGroup]) {
  Float2 cur[kScaleGroup];
#pragma unroll
  for (int i = 0; i < kScaleGroup; ++i) cur[i] = head[i];
#pragma unroll
  for (int g = 0; g < kScaleGroups; ++g) {
    Float2 next[kScaleGroup];
    const bool kept_group = g + 1 <= kKeptGroups;
    if (g + 1 < kScaleGroups) {
      if (kKeep == 2 && kept_group) {
#pragma unroll
        for (int i = 0; i < kScaleGroup; ++i) next[i] = kept[g][i];
      } else {
        load_col_scales(next, col_scales, g + 1);
        if (kKeep == 1 && kept_group) {
#pragma unroll
          for (int i = 0; i < kScaleGroup; ++i) kept[g][i] = next[i];
        }
      }
    }
#pragma unroll
    for (int i = 0; i < kScaleGroup; ++i) {
      const int c = g * kScaleGroup + i;
      if (c >= kNumChunks) continue;
      add_to<kRowMask>(out[4 * c + 0], sa0 * cur[i].x * acc[4 * c + 0], keep0);
      add_to<kRowMask>(out[4 * c + 1], sa0 * cur[i].y * acc[4 * c + 1], keep0);
      add_to<kRowMask>(out[4 * c + 2], sa1 * cur[i].x * acc[4 * c + 2], keep1);
      add_to<kRowMask>(out[4 * c + 3], sa1 * cur[i].y * acc[4 * c + 3], keep1);
    }
    if (g + 1 < kScaleGroups) {
      const int last = (g + 1) * kScaleGroup - 1 < kNumChunks ? (g + 1) * kScaleGroup - 1 : kNumChunks - 1;
      ptx::depend_on(col_scales, out[4 * last + 3]);
#pragma unroll
      for (int i = 0; i < kScaleGroup; ++i) cur[i] = next[i];
    }
  }
}

// Promotion with 128x128 B scales sb[] of the (up to 3) column blocks the tile touches; n_off = n0 % 128, an int or
// an IntConstant (then each chunk's block is known at compile time). `acc` holds the tile's 8-column chunks
// [kChunk0, kChunk0 + kChunks) (kSplitHalves: one half of the tile), `out` all of them.
template <bool kRowMask, int kChunk0 = 0, int kChunks = kNumChunks, typename NOff>
__device__ __forceinline__ void promote_blocks(float (&out)[kAccRegs], const float (&acc)[4 * kChunks],
                                               const float (&sb)[kMaxBScaleBlocks], float sa0, float sa1, NOff n_off,
                                               bool keep0, bool keep1) {
  if constexpr (kMaxBScaleBlocks == 1) {
    // BLOCK_N divides 128: the whole tile lies in one 128-column scale block, one scalar per K block.
    const float s0 = sa0 * sb[0], s1 = sa1 * sb[0];
#pragma unroll
    for (int i = 0; i < 4 * kChunks; ++i)
      add_to<kRowMask>(out[4 * kChunk0 + i], ((i / 2) % 2 == 0 ? s0 : s1) * acc[i], (i / 2) % 2 == 0 ? keep0 : keep1);
  } else {
    // The tile may straddle 128-column scale blocks: an 8-column chunk never does (n0 and 8c are multiples of 8).
    // Chunk c lies in block j when 8c >= j * 128 - n_off: the products of the row and block scales are formed once,
    // and each chunk only selects (the comparisons depend on the tile alone, not on the K block).
    float s0[kMaxBScaleBlocks], s1[kMaxBScaleBlocks];
#pragma unroll
    for (int j = 0; j < kMaxBScaleBlocks; ++j) {
      s0[j] = sa0 * sb[j];
      s1[j] = sa1 * sb[j];
    }
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      const int col_chunk = kChunk0 + c;
      float r0 = s0[0], r1 = s1[0];
#pragma unroll
      for (int j = 1; j < kMaxBScaleBlocks; ++j) {
        if (8 * col_chunk >= j * 128 - n_off) {
          r0 = s0[j];
          r1 = s1[j];
        }
      }
      add_to<kRowMask>(out[4 * col_chunk + 0], r0 * acc[4 * c + 0], keep0);
      add_to<kRowMask>(out[4 * col_chunk + 1], r0 * acc[4 * c + 1], keep0);
      add_to<kRowMask>(out[4 * col_chunk + 2], r1 * acc[4 * c + 2], keep1);
      add_to<kRowMask>(out[4 * col_chunk + 3], r1 * acc[4 * c + 3], keep1);
    }
  }
}

// A pass's promotion of one wave: the row-selecting variants only where a contiguous pass leaves out some of this
// warp's rows (all_rows false), so that every other pass runs the plain FFMA stream.
template <int kChunk0 = 0, int kChunks = kNumChunks, typename NOff = int>
__device__ __forceinline__ void promote_blocks_of_pass(float (&out)[kAccRegs], const float (&acc)[4 * kChunks],
                                                       const float (&sb)[kMaxBScaleBlocks], float sa0, float sa1,
                                                       NOff n_off, bool all_rows, bool keep0, bool keep1) {
  if (kContiguous && !all_rows) {
    promote_blocks<kContiguous, kChunk0, kChunks>(out, acc, sb, sa0, sa1, n_off, keep0, keep1);
  } else {
    promote_blocks<false, kChunk0, kChunks>(out, acc, sb, sa0, sa1, n_off, true, true);
  }
}

template <int kKeep = 0>
__device__ __forceinline__ void promote_per_row_of_pass(float (&out)[kAccRegs], const float (&acc)[kAccRegs],
                                                        unsigned int col_scales, const Float2 (&head)[kScaleGroup],
                                                        float sa0, float sa1, bool all_rows, bool keep0, bool keep1,
                                                        Float2 (&kept)[kKeptGroups > 0 ? kKeptGroups : 1][kScaleGroup]) {
  if (kContiguous && !all_rows) {
    promote_per_row<kContiguous, kKeep>(out, acc, col_scales, head, sa0, sa1, keep0, keep1, kept);
  } else {
    promote_per_row<false, kKeep>(out, acc, col_scales, head, sa0, sa1, true, true, kept);
  }
}

// One 128-wide K block of one 64-row wave into `acc` (64 x N, N/2 floats per thread) as one wgmma group: 4 x wgmma
// m64nNk32, the first with scale-d = 0, so the tensor-core accumulator restarts at zero every K block (the promotion
// does the long accumulation in FP32). K step k is 32 bytes further along the swizzled rows: 2k in the descriptors'
// (address >> 4) field, ORed in (see desc_a0).
template <int N>
__device__ __forceinline__ void wgmma_k_block(float (&acc)[N / 2], unsigned long long desc_a,
                                              unsigned long long desc_b) {
  ptx::fence_operands(acc);
  ptx::wgmma_fence();
#pragma unroll
  for (int k = 0; k < kBlockK / 32; ++k)
    ptx::wgmma_fp8<N, kAE5M2, kBE5M2>(acc, desc_a | (2 * k), desc_b | (2 * k), k > 0 ? 1u : 0u);
  ptx::wgmma_commit_group();
}

// The 128x128 B scales of K block kb for the (up to 3) column blocks of the tile (global loads).
__device__ __forceinline__ void load_b_scales(float (&sb)[kMaxBScaleBlocks],
                                              const float* const (&b_scale_blk)[kMaxBScaleBlocks], int kb) {
#pragma unroll
  for (int j = 0; j < kMaxBScaleBlocks; ++j) sb[j] = ptx::ldg_f32(b_scale_blk[j] + kb);
}

// The B block scale of a pass (kBScaleChunks), 32 K blocks per global load: if `load`, lane l's `chunk` loads K block
// first + l's (clamped to kb_last, so never past the pass's K range); each K block's scale is then broadcast with a
// shuffle. Why not one load per K block where it is used: its address is warp-uniform, so ptxas keeps the value in a
// uniform register and multiplies it in between the K block's first and second wgmma, which then wait for the load
// (NOTES 15). Predicated inside the asm so that it loads in place: behind a branch, or rotating two chunks in
// registers, ptxas copies the loaded register at once and waits for the load there.
__device__ __forceinline__ void load_b_scale_chunk(float& chunk, const float* b_scale_col, int first, int kb_last,
                                                   int lane, bool load) {
  const int kb = first + lane < kb_last ? first + lane : kb_last;
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %2, 0;\n@p ld.global.nc.f32 %0, [%1];\n}\n"
               : "+f"(chunk)
               : "l"(b_scale_col + kb), "r"(static_cast<int>(load)));
}

}  // namespace fp8_gemm
}  // namespace jdg
