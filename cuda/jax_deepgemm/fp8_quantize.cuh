// The FP8 quantization kernels, one pass over x [batch, rows, cols] (bfloat16 or float32) each:
// - `jdg_fp8_quantize_t`: the float8_e4m3fn quantization of x^T, [batch, cols, out_rows]. It makes the operands that
//   the GEMMs want transposed: weights W [K, N] as W^T's 128x128 blocks, and the token-major 1x128 operands of the
//   weight gradients (X^T, grad^T), each group's tokens starting at a 128-row block where the groups are k-grouped.
// - `jdg_fp8_quantize_rows` (JDG_Q_ROWWISE 1): x's own per-token quantization, [batch, rows, cols] with one scale per
//   row and 128 columns: the activations and output gradients that the forward and dgrad GEMMs take as A. (As two
//   XLA fusions, an amax pass and a cast pass, this reads x twice.)
//
// A generated source #defines the macros below, then #includes this file (fp8_quantize_abi.h has the contract):
//   JDG_Q_IN_F32     0: x is bfloat16; 1: x is float32
//   JDG_Q_PER_BLOCK  0: one scale per output row and 128-row block of x (scale [batch, rblocks, cols]: the
//                       GEMMs' layout, in which a CTA's 128 scales are adjacent);
//                    1: one scale per 128x128 block (scale [batch, ceil(cols / 128), rblocks])
//   JDG_Q_BLOCK_MAP  0: row block b of the output is rows 128 b .. of x (out_rows = rows);
//                    1: it is rows block_src[b] .. block_src[b] + block_rows[b] - 1 of x, then zeros
//                       (out_rows = 128 rblocks); device data, clamped to x whatever it holds
//   JDG_Q_ROW_MAP    0: row i of x is x's stored row i (x_rows = rows);
//                    1: it is stored row row_index[i] of x_rows, zeros where row_index[i] is outside [0, x_rows):
//                       the rows of a gather x[row_index] without the gathered copy (device data, any values)
//   JDG_Q_ROWWISE    1 (with JDG_Q_PER_BLOCK, JDG_Q_BLOCK_MAP and JDG_Q_UNTRANSPOSED 0): the rowwise kernel above
//                    (scale [batch, rows, cblocks]) instead of the transposing one; with JDG_Q_ROW_MAP, of x's rows
//                    through the map (a gather's per-token quantization without the gathered copy)
//   JDG_Q_UNTRANSPOSED 1 (with JDG_Q_PER_BLOCK 1, JDG_Q_BLOCK_MAP 0): also x's own 128x128 quantization,
//                    [batch, rows, cols] (its block scales are the transposed ones): a weight's dgrad operand, which
//                    would otherwise be an FP8 transpose of the output
//
// The arithmetic (fp8_cast.cuh) is jax_deepgemm.quantization's as XLA compiles it for the GPU: the results equal the
// helpers' there bit for bit.
//
// One CTA per (batch, 128-column tile, 128-row block), 256 threads. Each thread loads 16-byte vectors (8 bfloat16 or 4
// float32 adjacent columns; cols is a multiple of 8 / 4, the host checks) of 8 or 16 consecutive rows: 128 or 256 bytes
// in flight per thread. Transposing: the column amaxes meet through warp shuffles and shared memory; each thread then
// turns its rows of each of its columns into 8 or 16 consecutive bytes of one output row, stored into a shared 128 x
// 128 byte tile (XOR-swizzled: no bank conflicts), which the CTA writes out as 128-byte segments of output rows.
// Rowwise: a row's 128 columns lie in the 16 (bfloat16) or 32 (float32) adjacent lanes of one warp, whose shuffles
// form its amax; each thread stores its own 8 or 4 bytes of each of its rows (a warp's store: 256 or 128 contiguous
// bytes of output rows).
#pragma once

#include <jax_deepgemm/fp8_cast.cuh>
#include <jax_deepgemm/fp8_quantize_abi.h>

#ifndef JDG_Q_IN_F32
#error "JDG_Q_IN_F32 must be defined"
#endif
#ifndef JDG_Q_PER_BLOCK
#error "JDG_Q_PER_BLOCK must be defined"
#endif
#ifndef JDG_Q_BLOCK_MAP
#error "JDG_Q_BLOCK_MAP must be defined"
#endif
#ifndef JDG_Q_ROW_MAP
#define JDG_Q_ROW_MAP 0
#endif
#ifndef JDG_Q_UNTRANSPOSED
#define JDG_Q_UNTRANSPOSED 0
#endif
#ifndef JDG_Q_ROWWISE
#define JDG_Q_ROWWISE 0
#endif
#if JDG_Q_ROWWISE && (JDG_Q_PER_BLOCK || JDG_Q_BLOCK_MAP || JDG_Q_UNTRANSPOSED)
#error "JDG_Q_ROWWISE needs JDG_Q_PER_BLOCK, JDG_Q_BLOCK_MAP and JDG_Q_UNTRANSPOSED 0"
#endif
#if JDG_Q_UNTRANSPOSED && (!JDG_Q_PER_BLOCK || JDG_Q_BLOCK_MAP || JDG_Q_ROW_MAP)
#error "JDG_Q_UNTRANSPOSED needs JDG_Q_PER_BLOCK 1, JDG_Q_BLOCK_MAP 0 and JDG_Q_ROW_MAP 0"
#endif

namespace jdg {
namespace fp8_quantize {

using namespace fp8_cast;

constexpr int kBlock = kFp8QuantizeBlock;  // 128: rows per block, columns per tile
constexpr int kThreads = kFp8QuantizeThreads;
constexpr int kWarps = kThreads / 32;

#if JDG_Q_IN_F32
using Input = float;
__device__ __forceinline__ float to_f32(Input v) { return v; }
#else
using Input = unsigned short;  // bfloat16 bits
__device__ __forceinline__ float to_f32(Input v) { return __uint_as_float(static_cast<unsigned int>(v) << 16); }
#endif

// A thread's part of the tile: kVec adjacent columns (16 bytes of a row of x) of kRows consecutive rows.
constexpr int kVec = 16 / sizeof(Input);       // 8 (bf16) or 4 (f32)
constexpr int kChunks = kBlock / kVec;         // 16-byte chunks per tile row
constexpr int kRowGroups = kThreads / kChunks;
constexpr int kRows = kBlock / kRowGroups;     // 8 (bf16) or 16 (f32): bytes per column in the FP8 output
constexpr int kUnits = kBlock / kRows;         // kRows-byte units per 128-byte output row segment
static_assert(kChunks <= 32 && kRows * kRowGroups == kBlock, "tile split");

union Chunk {
  uint4 bits;
  Input v[kVec];
};

// Four words, byte i of each = row i of one column, to four words, byte j of each = column j of one row.
__device__ __forceinline__ void transpose_4x4_bytes(unsigned int c0, unsigned int c1, unsigned int c2, unsigned int c3,
                                                    unsigned int (&rows)[4]) {
  const unsigned int lo01 = __byte_perm(c0, c1, 0x5140), hi01 = __byte_perm(c0, c1, 0x7362);  // rows 0-1, 2-3
  const unsigned int lo23 = __byte_perm(c2, c3, 0x5140), hi23 = __byte_perm(c2, c3, 0x7362);
  rows[0] = __byte_perm(lo01, lo23, 0x5410);
  rows[1] = __byte_perm(lo01, lo23, 0x7632);
  rows[2] = __byte_perm(hi01, hi23, 0x5410);
  rows[3] = __byte_perm(hi01, hi23, 0x7632);
}

// Where output row `col`'s unit `unit` (kRows bytes) lies in the shared tile: units XOR-swizzled by the column's
// chunk, so that the threads of a store phase (adjacent chunks, one unit) hit distinct banks.
// (Unsigned: both are >= 0, and the divisions and remainders are then shifts and masks.)
__device__ __forceinline__ unsigned int tile_offset(unsigned int col, unsigned int unit) {
  return col * kBlock + ((unit ^ (col / kVec)) % kUnits) * kRows;
}

// A CTA's tile of x: 128 columns of up to 128 rows of one batch entry.
struct Block {
  int cblock, rblock;
  long long batch;
  long long src, count;  // the rows of x it holds: [src, src + count), count <= 128, inside x whatever a map says
  long long col0;        // this thread's first column
  bool in_cols;          // whether this thread's columns are inside x (cols is a multiple of kVec: all or none)
};

// CTA index -> (batch, column tile, row block): the column tile fastest (neighbouring CTAs read the same rows), or,
// where the rows are gathered, the row block fastest (see below). Loads this thread's kRows rows of kVec columns into
// v as 16-byte vectors (every row starts 16-byte aligned: cols is a multiple of kVec, see the host's check), zeros
// past the block's rows or x's columns.
__device__ __forceinline__ Block load_block(const Fp8QuantizeArgs& args, Chunk (&v)[kRows]) {
  const int chunk = threadIdx.x % kChunks, group = threadIdx.x / kChunks;
  Block b;
#if JDG_Q_ROW_MAP
  // Gathered rows: a stored row of x is read by every row block that picks it (a top-k dispatch: k of them, far apart
  // in the grid). With the column tile fastest, all of x is live at once, and x (59 MB at [4096, 7168] bfloat16, the
  // output streaming past) did not stay in the 50 MB L2 until its last reader: Nsight Compute counted ~2.8 reads of
  // it from DRAM. One column tile's 128 columns of x at a time (1 MB there) serve all their readers from the L2:
  // 88 -> 69 us on that call (H200, 2026-12-01, NOTES 130; groups of 2..8 column tiles measured between the two).
  b.cblock = static_cast<int>(blockIdx.x / args.rblocks % args.cblocks);  // (32-bit: the grid is < 2^31 CTAs)
  b.rblock = static_cast<int>(blockIdx.x % args.rblocks);
#else
  b.cblock = static_cast<int>(blockIdx.x % args.cblocks);  // (32-bit: the grid is < 2^31 CTAs)
  b.rblock = static_cast<int>(blockIdx.x / args.cblocks % args.rblocks);
#endif
  b.batch = blockIdx.x / args.cblocks / args.rblocks;
  b.col0 = static_cast<long long>(b.cblock) * kBlock + chunk * kVec;
  b.in_cols = b.col0 < args.cols;
#if JDG_Q_BLOCK_MAP
  b.count = min(max(static_cast<long long>(args.block_rows[b.rblock]), 0LL), static_cast<long long>(kBlock));
  b.count = min(b.count, args.rows);
  b.src = min(max(static_cast<long long>(args.block_src[b.rblock]), 0LL), args.rows - b.count);
#else
  b.src = static_cast<long long>(b.rblock) * kBlock;
  b.count = min(static_cast<long long>(kBlock), args.rows - b.src);
#endif
#if JDG_Q_ROW_MAP
  // The block's stored rows through the map, one index per thread into shared memory (not 16 copies of each in
  // registers: float32's 16 rows of indices made ptxas spill), then each row from its stored place.
  // Rows outside x (any index outside [0, x_rows)) are zeros: their slot holds -1, and so do the rows past count.
  __shared__ int stored_row[kBlock];
  if (threadIdx.x < kBlock) {
    const int stored = threadIdx.x < b.count ? __ldg(args.row_index + b.src + threadIdx.x) : -1;
    stored_row[threadIdx.x] = stored >= 0 && stored < args.x_rows ? stored : -1;
  }
  __syncthreads();
  const Input* x = static_cast<const Input*>(args.x) + b.batch * args.x_rows * args.cols + b.col0;
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
    const int stored = stored_row[group * kRows + i];
    v[i].bits = stored >= 0 && b.in_cols
                    ? __ldg(reinterpret_cast<const uint4*>(x + static_cast<long long>(stored) * args.cols))
                    : make_uint4(0, 0, 0, 0);
  }
#else
  const Input* x = static_cast<const Input*>(args.x) + (b.batch * args.rows + b.src) * args.cols + b.col0;
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
    const int r = group * kRows + i;
    v[i].bits = r < b.count && b.in_cols ? __ldg(reinterpret_cast<const uint4*>(x + r * args.cols))
                                         : make_uint4(0, 0, 0, 0);
  }
#endif
  return b;
}

// max |x| over one vector: NaN if any element is NaN.
__device__ __forceinline__ float vector_amax(const Chunk& c) {
#if JDG_Q_IN_F32
  float amax = 0.0f;
#pragma unroll
  for (int j = 0; j < kVec; ++j) amax = max_nan(amax, fabsf(c.v[j]));
  return amax;
#else
  // On the bfloat16 bits, as the transposing kernel's column amaxes (two columns per instruction).
  unsigned int packed = 0;
#pragma unroll
  for (int p = 0; p < kVec / 2; ++p)
    packed = __vmaxu2(packed, reinterpret_cast<const unsigned int*>(c.v)[p] & 0x7fff7fffu);
  return max_nan(__uint_as_float(packed << 16), __uint_as_float(packed & 0xffff0000u));
#endif
}

}  // namespace fp8_quantize
}  // namespace jdg

#if !JDG_Q_ROWWISE
extern "C" __global__ void __launch_bounds__(jdg::kFp8QuantizeThreads)
    jdg_fp8_quantize_t(const jdg::Fp8QuantizeArgs args) {
  using namespace jdg::fp8_quantize;
  __shared__ float column_amax[kWarps][kBlock];
  __shared__ float column_scale[kBlock];
  __shared__ __align__(16) unsigned char tile[kBlock * kBlock];
#if JDG_Q_PER_BLOCK
  __shared__ float block_amax[kBlock / 32];  // one per warp of the first 128 threads
#endif

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int chunk = threadIdx.x % kChunks, group = threadIdx.x / kChunks;
  Chunk v[kRows];
  const Block block = load_block(args, v);
  const int cblock = block.cblock, rblock = block.rblock;
  const long long batch = block.batch;

  // Column amaxes: over this thread's rows, the lanes of its warp that hold the same columns, then the warps.
  float amax[kVec];
#if JDG_Q_IN_F32
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
    amax[j] = 0.0f;
#pragma unroll
    for (int i = 0; i < kRows; ++i) amax[j] = max_nan(amax[j], fabsf(v[i].v[j]));
  }
#else
  // On the bfloat16 bits, two columns per instruction: without the sign, larger magnitudes are larger integers, and
  // a NaN is larger than any number (so it propagates, as XLA's max does).
  unsigned int packed[kVec / 2];
#pragma unroll
  for (int p = 0; p < kVec / 2; ++p) {
    packed[p] = 0;
#pragma unroll
    for (int i = 0; i < kRows; ++i)
      packed[p] = __vmaxu2(packed[p], reinterpret_cast<const unsigned int*>(v[i].v)[p] & 0x7fff7fffu);
    amax[2 * p] = __uint_as_float(packed[p] << 16);
    amax[2 * p + 1] = __uint_as_float(packed[p] & 0xffff0000u);
  }
#endif
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
#pragma unroll
    for (int offset = 16; offset >= kChunks; offset /= 2)
      amax[j] = max_nan(amax[j], __shfl_xor_sync(0xffffffffu, amax[j], offset));
  }
  if (lane < kChunks) {
#pragma unroll
    for (int j = 0; j < kVec; ++j) column_amax[warp][chunk * kVec + j] = amax[j];
  }
  __syncthreads();
  if (threadIdx.x < kBlock) {
    float a = column_amax[0][threadIdx.x];
#pragma unroll
    for (int w = 1; w < kWarps; ++w) a = max_nan(a, column_amax[w][threadIdx.x]);
#if JDG_Q_PER_BLOCK
    // One amax for the whole 128x128 block: the four warps of the first 128 threads, then their four values.
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) a = max_nan(a, __shfl_xor_sync(0xffffffffu, a, offset));
    if (lane == 0) block_amax[warp] = a;
#else
    const float scale = scale_of(a);
    column_scale[threadIdx.x] = scale;
    const long long c = static_cast<long long>(cblock) * kBlock + threadIdx.x;
    if (c < args.cols) args.scale[(batch * args.rblocks + rblock) * args.cols + c] = scale;
#endif
  }
#if JDG_Q_PER_BLOCK
  __syncthreads();
  if (threadIdx.x == 0) {
    const float scale = scale_of(max_nan(max_nan(block_amax[0], block_amax[1]), max_nan(block_amax[2], block_amax[3])));
    column_scale[0] = scale;
    args.scale[(batch * args.cblocks + cblock) * args.rblocks + rblock] = scale;
  }
#endif
  __syncthreads();

  // Each of this thread's columns: kRows consecutive bytes (one unit) of an output row, into the shared tile.
#if JDG_Q_UNTRANSPOSED
  unsigned int words[kVec][kRows / 4];  // the same bytes, kept for x's own layout below
#endif
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
    const int col = chunk * kVec + j;
    const float scale = column_scale[JDG_Q_PER_BLOCK ? 0 : col];
    unsigned int word[kRows / 4];
#pragma unroll
    for (int q = 0; q < kRows / 4; ++q) {
      float f[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) f[i] = to_f32(v[4 * q + i].v[j]);
      word[q] = quantize_x4(f, scale);
    }
    unsigned char* to = tile + tile_offset(col, group);
    if constexpr (kRows == 16) {
      *reinterpret_cast<uint4*>(to) = make_uint4(word[0], word[1], word[2], word[3]);
    } else {
      *reinterpret_cast<uint2*>(to) = make_uint2(word[0], word[1]);
    }
#if JDG_Q_UNTRANSPOSED
#pragma unroll
    for (int q = 0; q < kRows / 4; ++q) words[j][q] = word[q];
#endif
  }
#if JDG_Q_UNTRANSPOSED
  // x's own layout: each of this thread's rows as kVec bytes (aligned: cols and col0 are multiples of kVec), from
  // 4 x 4 byte transposes of the column words, straight to global memory.
  if (block.in_cols) {
    unsigned char* direct = args.out_untransposed + (batch * args.rows + block.src) * args.cols + block.col0;
#pragma unroll
    for (int q = 0; q < kRows / 4; ++q) {
      unsigned int row_words[4][kVec / 4];  // [row 4q + i][columns 4h .. 4h + 3]
#pragma unroll
      for (int h = 0; h < kVec / 4; ++h) {
        unsigned int rows[4];
        transpose_4x4_bytes(words[4 * h][q], words[4 * h + 1][q], words[4 * h + 2][q], words[4 * h + 3][q], rows);
#pragma unroll
        for (int i = 0; i < 4; ++i) row_words[i][h] = rows[i];
      }
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int r = group * kRows + 4 * q + i;
        if (r >= block.count) continue;
        if constexpr (kVec == 8) {
          *reinterpret_cast<uint2*>(direct + r * args.cols) = make_uint2(row_words[i][0], row_words[i][1]);
        } else {
          *reinterpret_cast<unsigned int*>(direct + r * args.cols) = row_words[i][0];
        }
      }
    }
  }
#endif
  __syncthreads();

  // Out: 128 output rows (columns of x) x 128 bytes as units of kRows bytes. Each thread writes the same unit of every
  // kRowStride-th output row from its first, through one pointer stepped by kRowStride rows: no index arithmetic
  // per row (static SASS per 8-byte unit: ~27 instructions with it, ~12 without; NOTES 128, 129).
  constexpr int kRowStride = kThreads / kUnits;
  const unsigned int unit = threadIdx.x % kUnits, first_row = threadIdx.x / kUnits;
  const long long r = static_cast<long long>(rblock) * kBlock + unit * kRows;
  if (r >= args.out_rows) return;
  const long long c0 = static_cast<long long>(cblock) * kBlock;
  const int rows_here = static_cast<int>(min(static_cast<long long>(kBlock), args.cols - c0));  // inside x's columns
  const bool whole = args.out_rows % kRows == 0;  // then every unit of a row (r < out_rows) is whole
  const long long stride = kRowStride * args.out_rows;
  unsigned char* to = args.out + (batch * args.cols + c0 + first_row) * args.out_rows + r;
#pragma unroll
  for (int step = 0; step < kBlock / kRowStride; ++step, to += stride) {
    const unsigned int row = first_row + step * kRowStride;
    if (static_cast<int>(row) >= rows_here) break;
    const unsigned char* from = tile + tile_offset(row, unit);
    if (whole) {
      if constexpr (kRows == 16) {
        *reinterpret_cast<uint4*>(to) = *reinterpret_cast<const uint4*>(from);
      } else {
        *reinterpret_cast<uint2*>(to) = *reinterpret_cast<const uint2*>(from);
      }
    } else {
      for (int b = 0; b < kRows && r + b < args.out_rows; ++b) to[b] = from[b];
    }
  }
}
#else  // JDG_Q_ROWWISE

extern "C" __global__ void __launch_bounds__(jdg::kFp8QuantizeThreads)
    jdg_fp8_quantize_rows(const jdg::Fp8QuantizeArgs args) {
  using namespace jdg::fp8_quantize;
  const int chunk = threadIdx.x % kChunks, group = threadIdx.x / kChunks;
  Chunk v[kRows];
  const Block block = load_block(args, v);
  const long long first = block.batch * args.rows + block.src;  // the block's first row of out and scale
  unsigned char* out = args.out + first * args.cols + block.col0;
  float* scale_out = args.scale + first * args.cblocks + block.cblock;
#pragma unroll
  for (int i = 0; i < kRows; ++i) {
    // The row's amax: this thread's columns, then the kChunks adjacent lanes that hold the row's other columns.
    float amax = vector_amax(v[i]);
#pragma unroll
    for (int offset = kChunks / 2; offset > 0; offset /= 2)
      amax = max_nan(amax, __shfl_xor_sync(0xffffffffu, amax, offset));
    const int r = group * kRows + i;
    if (r >= block.count) continue;  // (uniform over the row's lanes; after the shuffles, which every lane joins)
    const float scale = scale_of(amax);
    if (chunk == 0) scale_out[static_cast<long long>(r) * args.cblocks] = scale;
    if (!block.in_cols) continue;
    unsigned int word[kVec / 4];
#pragma unroll
    for (int q = 0; q < kVec / 4; ++q) {
      float f[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) f[j] = to_f32(v[i].v[4 * q + j]);
      word[q] = quantize_x4(f, scale);
    }
    // (aligned: cols and col0 are multiples of kVec)
    if constexpr (kVec == 8) {
      *reinterpret_cast<uint2*>(out + r * args.cols) = make_uint2(word[0], word[1]);
    } else {
      *reinterpret_cast<unsigned int*>(out + r * args.cols) = word[0];
    }
  }
}

#endif  // JDG_Q_ROWWISE
