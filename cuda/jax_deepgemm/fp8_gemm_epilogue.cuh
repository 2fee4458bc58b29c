// Part of fp8_gemm.cuh (included after fp8_gemm_tiles.cuh): the register epilogue. Its store layout, the loads of C
// and the bounds-checked stores of D.
#pragma once

namespace jdg {
namespace fp8_gemm {

// The register epilogue (f32 out, C, and the tiles the TMA store does not take) works in a *store layout*: the
// wgmma fragment gives each lane of a quad two columns of every 8-column chunk of its rows; one exchange with the
// neighbouring lane (to_store_layout) makes it four consecutive columns of every other chunk, so that each store and
// each load of C moves 16 bytes (f32) or 8 (bf16) instead of 8 or 4: half the instructions, each touching the same
// 8 rows' lines. In chunk pair p (chunks 2p, 2p + 1) and row half h (rows wave_row0 and + 8), a lane's four values
// are slot A = out[8p + 2h], out[8p + 2h + 1] and slot B = out[8p + 4 + 2h], out[8p + 4 + 2h + 1], at columns
// store_col(p, lane) .. + 3: lanes 0, 2 take chunk 2p's columns 0-3 / 4-7, lanes 1, 3 chunk 2p + 1's. bf16 stores of
// tiles whose width is a multiple of 32 take one more exchange to 16 bytes (store_wave_bf16x8, NOTES 105), and so do
// k-grouped f32 tiles' stores and loads of C, to cover whole 128-byte lines (to_line_layout, NOTES 106).
__device__ __forceinline__ int store_col(int n0, int p, int lane) {
  return n0 + 16 * p + 8 * (lane & 1) + 2 * (lane & 2);
}

// One exchange between a lane and the lane kMask over: the upper one (lane & kMask) gives its b for the lower one's
// a; the upper lane's a then holds the lower lane's b, and the lower lane's b the upper lane's a.
template <int kMask>
__device__ __forceinline__ void trade(float& a, float& b, bool upper) {
  const float got = ptx::shfl_xor_f32(upper ? a : b, kMask);
  if (upper) {
    a = got;
  } else {
    b = got;
  }
}

__device__ __forceinline__ void to_store_layout(float (&out)[kAccRegs], int lane) {
  // odd lanes keep slot B (their chunk 2p + 1 columns) and receive slot A, even ones the reverse: each sends the
  // slot its neighbour needs
#pragma unroll
  for (int p = 0; p < kNumChunks / 2; ++p)
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int i = 0; i < 2; ++i) trade<1>(out[8 * p + 2 * h + i], out[8 * p + 4 + 2 * h + i], lane & 1);
}

// k-grouped f32 tiles (kF32LineStores) take one more exchange after the store layout, with the lane four over (lane ^
// 4: the same place in the neighbouring quad, whose rows are the next ones), so that each 16-byte access of a warp
// covers 4 rows x 32 columns (128 contiguous bytes of a row: whole lines where N % 32 == 0; rows 2 apart) instead of 8
// rows x 16 columns. Of chunk pairs 2j and 2j + 1, the even quad keeps pair 2j of its rows and takes the odd quad's,
// the odd quad pair 2j + 1 of both; each lane's slots of pair 2j then hold the even row of the two, of pair 2j + 1 the
// odd row (slot_row, slot_col). With C, every wave is exchanged before C is loaded, so that C's loads cover lines too;
// without, each wave just before its stores.
// Where they serve: k-grouped f32 tiles with C measured 0.7% to 1.3% faster with them than with 8 rows x 64 bytes
// (N from 1024 to 8192, M from 2048 to 7168), but 4% to 5% slower at N = 2048 (a store's rows 16 KB apart; every M
// and group count tried), unexplained. The partner four quads over (lane ^ 16: consecutive rows) lost 0.1-0.4% there,
// and gained nothing elsewhere. Short-K k-grouped tiles without C: no change; dense f32 with C: 0.6% slower
// (NOTES 106). Against the exchange made inside the store loop and C loaded in the store layout, this order measured
// 0.2-0.3% faster with C (N 4096 and 7168), without C 1.5% faster at 8192 tokens per group, 1.1% slower at 1024
// (NOTES 107). Rows of N % 4 != 0 are not line-aligned: they take the store layout's shifted stores.
constexpr bool kF32LineStores = kOutF32 && kKGrouped && kNumChunks % 4 == 0 && kN * 4 != 8192 && kN % 4 == 0;
template <int kChunks = kNumChunks>  // (a template: its static_assert applies only where it is called)
__device__ __forceinline__ void to_line_layout(float (&out)[kAccRegs], int lane) {
  static_assert(kChunks % 4 == 0, "whole 32-column chunk quads");
  // the odd quad sends its pair 2j, the even one its pair 2j + 1
#pragma unroll
  for (int j = 0; j < kChunks / 4; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int i = 2 * h + (e & 1) + 4 * (e >> 1);
        trade<4>(out[8 * (2 * j) + i], out[8 * (2 * j + 1) + i], lane & 4);
      }
}

// The row (from row0: wave_row0 + 8h) and first column of a lane's four values of slot pair p, row half h.
template <bool kLines>
__device__ __forceinline__ int slot_row(int row0, int p, int lane) {
  return kLines ? row0 - ((lane >> 2) & 1) + (p & 1) : row0;
}
template <bool kLines>
__device__ __forceinline__ int slot_col(int n0, int p, int lane) {
  return kLines ? store_col(n0, (p & ~1) + ((lane >> 2) & 1), lane) : store_col(n0, p, lane);
}

// Whether the four columns at `col` can move as one vector: inside N, and (N % 4 == 0, and D's and C's addresses
// 16-byte aligned, `aligned`) at a vector-aligned address.
__device__ __forceinline__ bool vector4(int col, bool aligned) { return kN % 4 == 0 && aligned && col + 3 < kN; }

// Whether bf16 C at `col` comes as packed pairs (c_quad_value): a vector of four, or where N % 4 == 2, pairs inside N
// (rows of even N are 4-byte aligned; N % 4 == 0 keeps vector4's code).
__device__ __forceinline__ bool c_pairs(int col, bool aligned) {
  return kN % 4 == 0 ? vector4(col, aligned) : kN % 2 == 0 && aligned && col + 1 < kN;
}

// C's raw bits at (row, col .. col + 3), 0 past N: f32 as four floats, bf16 as two 32-bit words (c_pairs; or,
// elementwise, four 16-bit values), loaded as wide as the rows allow (as the stores: store_bf16_words). They become
// floats only after a whole batch is loaded (c_quad_value): a conversion inside the bounds check's branch would wait
// there for its load. (Loads shifted to the rows' alignment as the stores are, two aligned pieces per lane and the
// window between them, ran 4096 x 7169 x 2048 with f32 C 1.4x and bf16 C 1.07x the time of these: NOTES 110.)
template <int kKind>
struct CQuadBitsOf {
  float v[4];
};
template <>
struct CQuadBitsOf<1> {
  unsigned int w[4];  // vector: w[0], w[1] each two bf16; elementwise: w[i] the i-th bf16
};
using CQuadBits = CQuadBitsOf<kCKind>;

// (Templates on the C kind so that the other kind's branch, discarded, need not compile.)
template <int kKind = kCKind>
__device__ __forceinline__ CQuadBitsOf<kKind> load_c_quad(const void* c, int row, int col, bool aligned) {
  const unsigned long long idx = (unsigned long long)row * kN + col;
  CQuadBitsOf<kKind> bits{};
  if constexpr (kKind == 1) {
    const unsigned short* c16 = static_cast<const unsigned short*>(c) + idx;
    if (vector4(col, aligned)) {
      const uint2 w = *reinterpret_cast<const uint2*>(c16);
      bits.w[0] = w.x;
      bits.w[1] = w.y;
    } else if (kN % 4 != 0 && c_pairs(col, aligned)) {
      bits.w[0] = *reinterpret_cast<const unsigned int*>(c16);
      if (col + 3 < kN) bits.w[1] = *reinterpret_cast<const unsigned int*>(c16 + 2);
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i)
        if (col + i < kN) bits.w[i] = c16[i];
    }
  } else {
    const float* c32 = static_cast<const float*>(c) + idx;
    if (vector4(col, aligned)) {
      const float4 f = *reinterpret_cast<const float4*>(c32);
      bits.v[0] = f.x;
      bits.v[1] = f.y;
      bits.v[2] = f.z;
      bits.v[3] = f.w;
    } else if (kN % 4 != 0 && kN % 2 == 0 && aligned && col + 1 < kN) {
      const float2 f = *reinterpret_cast<const float2*>(c32);
      bits.v[0] = f.x;
      bits.v[1] = f.y;
      if (col + 3 < kN) {
        const float2 g = *reinterpret_cast<const float2*>(c32 + 2);
        bits.v[2] = g.x;
        bits.v[3] = g.y;
      }
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i)
        if (col + i < kN) bits.v[i] = c32[i];
    }
  }
  return bits;
}

template <int kKind = kCKind>
__device__ __forceinline__ float c_quad_value(const CQuadBitsOf<kKind>& bits, int i, bool pairs) {
  if constexpr (kKind == 1) {
    const unsigned int w = pairs ? bits.w[i / 2] >> (16 * (i % 2)) : bits.w[i];
    return ptx::bf16_to_f32((unsigned short)(w & 0xFFFFu));
  } else {
    return bits.v[i];
  }
}

// C added to this thread's part of the tile (store layout) before any of it is stored, the loads of kCBatchPairs chunk
// pairs in flight at a time (8: a 128-wide wave's 16 loads per thread). Loads placed between the stores (a load of
// C, its add, its store to D, the next load) cannot be moved above the stores before them, since D may alias C:
// every load then waited out a memory round trip alone (NOTES 36). The empty asm bounds the loads in flight
// (registers; wider batches spilled at 176- and 192-wide tiles) by making the next batch's row index depend on this
// batch's sums.
constexpr int kCBatchPairs = 8;
template <bool kLines>
__device__ __forceinline__ void add_c(const void* c, float (&out)[kWaves][kAccRegs], const int (&wave_row0)[kWaves],
                                      int rows, int d_row0, int n0, int lane, bool aligned) {
  constexpr int kPairs = kNumChunks / 2, kBatch = kCBatchPairs < kPairs ? kCBatchPairs : kPairs;
  unsigned int row_base = static_cast<unsigned int>(d_row0);  // see depend_on below
#pragma unroll
  for (int v = 0; v < kWaves; ++v)
#pragma unroll
    for (int p0 = 0; p0 < kPairs; p0 += kBatch) {
      CQuadBits bits[kBatch][2];
#pragma unroll
      for (int j = 0; j < kBatch && p0 + j < kPairs; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int r = slot_row<kLines>(wave_row0[v] + 8 * h, p0 + j, lane);
          bits[j][h] = r < rows ? load_c_quad(c, static_cast<int>(row_base) + r, slot_col<kLines>(n0, p0 + j, lane),
                                              aligned)
                                : CQuadBits{};
        }
#pragma unroll
      for (int j = 0; j < kBatch && p0 + j < kPairs; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int i = 8 * (p0 + j) + 2 * h;
          const bool pairs = c_pairs(slot_col<kLines>(n0, p0 + j, lane), aligned);
          out[v][i + 0] += c_quad_value(bits[j][h], 0, pairs);
          out[v][i + 1] += c_quad_value(bits[j][h], 1, pairs);
          out[v][i + 4] += c_quad_value(bits[j][h], 2, pairs);
          out[v][i + 5] += c_quad_value(bits[j][h], 3, pairs);
        }
      ptx::depend_on(row_base, out[v][8 * (p0 + kBatch < kPairs ? p0 + kBatch : kPairs) - 1]);
    }
}

// The widest stores D's rows allow. A row starts at a multiple of N elements, so bf16 takes 16-byte stores where
// N % 8 == 0, 8-byte where N % 4 == 0, 4-byte (a pair) where N % 2 == 0, element stores only at odd N; f32 16-byte
// (`aligned`: D itself 16-byte aligned). Narrower stores cost far more than their count: element stores of bf16 rows
// of N % 8 == 4 ran 4096 x 7172 x 2048 2.2x slower than 8-byte ones (NOTES 107). (bf16 tiles of whole chunk quads,
// and f32 rows of N % 4 != 0, store 16 bytes at any N: store_pieces_shifted.)
// kWords 32-bit words of bf16 pairs, columns c .. c + 2 * kWords - 1 (c a multiple of 2 * kWords), those < N.
template <int kWords>
__device__ __forceinline__ void store_bf16_words(unsigned short* d, int c, const unsigned int (&w)[kWords],
                                                 bool aligned) {
  static_assert(kWords == 2 || kN % 8 == 0, "8 columns only where rows are 16-byte multiples (else: shifted)");
  if constexpr (kWords == 4) {
    if (aligned && c + 7 < kN) {
      *reinterpret_cast<uint4*>(d) = make_uint4(w[0], w[1], w[2], w[3]);
      return;
    }
  } else if constexpr (kN % 4 == 0) {
    if (aligned && c + 3 < kN) {
      *reinterpret_cast<uint2*>(d) = make_uint2(w[0], w[1]);
      return;
    }
  } else if constexpr (kN % 2 == 0) {
    if (aligned && c + 1 < kN) {
#pragma unroll
      for (int i = 0; i < kWords; ++i)
        if (c + 2 * i + 1 < kN) *reinterpret_cast<unsigned int*>(d + 2 * i) = w[i];
      return;
    }
  }
#pragma unroll
  for (int i = 0; i < 2 * kWords; ++i)
    if (c + i < kN) d[i] = static_cast<unsigned short>(w[i / 2] >> (16 * (i % 2)));
}

// Store four consecutive outputs (row, col .. col + 3), those < N.
__device__ __forceinline__ void store_quad(const Fp8GemmArgs& args, int row, int col, float v0, float v1, float v2,
                                           float v3, bool aligned) {
  const unsigned long long idx = (unsigned long long)row * kN + col;
  if constexpr (kOutF32) {
    float* d = static_cast<float*>(args.d) + idx;
    if (vector4(col, aligned)) {
      *reinterpret_cast<float4*>(d) = make_float4(v0, v1, v2, v3);
    } else {  // (D not 16-byte aligned, or columns from N on; rows of N % 4 != 0 take store_wave_f32_shifted)
      const float v[4] = {v0, v1, v2, v3};
#pragma unroll
      for (int i = 0; i < 4; ++i)
        if (col + i < kN) d[i] = v[i];
    }
  } else {
    const unsigned int words[2] = {ptx::pack_bf16x2(v0, v1), ptx::pack_bf16x2(v2, v3)};
    store_bf16_words(static_cast<unsigned short*>(args.d) + idx, col, words, aligned);
  }
}

// bf16 out, tiles of whole 32-column chunk quads: one more exchange, with the lane two over (lane ^ 2), after the bf16
// packing of the store layout. Of chunk pairs 2q and 2q + 1, lanes 0 and 2 hold columns 0-3 / 4-7 of pair 2q and of
// pair 2q + 1 (lanes 1 and 3 their columns 8-15): lanes 0 and 1 keep pair 2q and take their partner's half of it,
// lanes 2 and 3 pair 2q + 1. Lane l then holds 8 consecutive columns, 32q + 8l .. + 7, of each row half: one 16-byte
// store each, a quad's four covering 64 contiguous bytes of a row (register stores of 8 bytes: 32), half the store
// instructions for 2 exchanges per 16-byte store. Passes each row half h's 8 columns of chunk quad q, 4 words, to
// use(h, words) as soon as they are made.
template <class Use>
__device__ __forceinline__ void bf16x8_words(const float (&out)[kAccRegs], int q, int lane, Use use) {
  const bool upper = lane & 2;  // keeps pair 2q + 1
  unsigned int mine[2][2][2];   // [pair 2q / 2q + 1][row half][word]: this lane's 4 columns of each
#pragma unroll
  for (int j = 0; j < 2; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int i = 8 * (2 * q + j) + 2 * h;
      mine[j][h][0] = ptx::pack_bf16x2(out[i], out[i + 1]);
      mine[j][h][1] = ptx::pack_bf16x2(out[i + 4], out[i + 5]);
    }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    unsigned int got[2];
#pragma unroll
    for (int w = 0; w < 2; ++w) got[w] = ptx::shfl_xor_u32(upper ? mine[0][h][w] : mine[1][h][w], 2);
    // Columns 0-3 of the kept pair's 8 are the lower lane's (lane & 2 == 0), 4-7 the upper one's.
    const unsigned int* kept = upper ? mine[1][h] : mine[0][h];
    use(h, upper ? make_uint4(got[0], got[1], kept[0], kept[1]) : make_uint4(kept[0], kept[1], got[0], got[1]));
  }
}

__device__ __forceinline__ unsigned short bf16_of(const unsigned int (&w)[4], int j) {
  return static_cast<unsigned short>(w[j / 2] >> (16 * (j % 2)));
}

// The 8 columns starting t (0-7) columns into x's 16 (two per word), as 4 words: x's words t / 2 .. t / 2 + 4,
// shifted by a column where t is odd (selects, not indexing: x stays in registers).
__device__ __forceinline__ void window8(const unsigned int (&x)[8], int t, unsigned int (&win)[4]) {
  unsigned int y[5];
#pragma unroll
  for (int k = 0; k < 5; ++k) {
    const unsigned int z = t & 2 ? x[k + 1] : x[k];
    y[k] = t & 4 ? (t & 2 ? x[k + 3] : x[k + 2]) : z;
  }
#pragma unroll
  for (int m = 0; m < 4; ++m) win[m] = __funnelshift_r(y[m], y[m + 1], 16 * (t & 1));
}

__device__ __forceinline__ unsigned int word_of(const unsigned int (&w)[4], int i) {
  return i & 2 ? (i & 1 ? w[3] : w[2]) : (i & 1 ? w[1] : w[0]);
}

// The first n (1-7) columns of a 16-byte aligned block of bf16 (w: its 8 columns) at p, in at most three stores
// aligned to their width (8, 4, 2 bytes) instead of n element stores.
__device__ __forceinline__ void store_block_head(unsigned short* p, const unsigned int (&w)[4], int n) {
  if (n & 4) *reinterpret_cast<uint2*>(p) = make_uint2(w[0], w[1]);
  if (n & 2) *reinterpret_cast<unsigned int*>(p + (n & 4)) = n & 4 ? w[2] : w[0];
  if (n & 1) p[n & 6] = static_cast<unsigned short>(word_of(w, (n & 6) / 2));
}

// Columns from .. 7 (from 1-7) of a 16-byte aligned block of bf16 (w: its 8 columns) at p, the same way.
__device__ __forceinline__ void store_block_tail(unsigned short* p, const unsigned int (&w)[4], int from) {
  if (from & 1) p[from] = static_cast<unsigned short>(word_of(w, from / 2) >> 16);
  const int e = (from + 1) & 6;  // the next even column (8 wraps to 0: none left)
  if (e == 2 || e == 6) *reinterpret_cast<unsigned int*>(p + e) = word_of(w, e / 2);
  if (e != 0 && e <= 4) *reinterpret_cast<uint2*>(p + 4) = make_uint2(w[2], w[3]);
}

// Rows whose byte length is not a multiple of 16 (bf16 at N % 8 != 0, f32 at N % 4 != 0) start at any 2-byte offset
// (odd N) or 4- or 8-byte one, where element stores cost 2.7x the time of 16-byte ones (bf16, 4096 x 7169 x 2048,
// NOTES 107), and 4- or 8-byte ones 1.6x or 1.25x. So the 16 bytes a lane holds of a row are stored shifted by t
// (0-7, per row) 2-byte units, the units to the row's next 16-byte boundary, the last t of them taken from the lane
// holding the row's next 16 bytes (the next lane of the quad in column order; for the last one the first lane's
// next piece). All but a row's first t and last 8 - t units of the tile then move in aligned stores; those are
// stored by the row's first and last lane, in at most three stores each (store_block_tail, store_block_head). Each
// lane's 16 bytes as one st_global_v4 (NVVM split a uint4 store here into four 4-byte ones). bf16 4096 x 7169 x 2048
// 273 -> 119 us, 4096 x 7170 x 2048 160 -> 117, 7172 127 -> 114 (NOTES 108, 109).
// words[u][h]: the lane's 16 bytes of piece u in row half h (rows row0 + 8h), at column col(u); the quad's lanes in
// column order are lane & 3 == 0 first, 3 last, each followed by next_lane. kElemBytes: D's element size (2 or 4).
template <int kElemBytes, int kPieces, class Col>
__device__ __forceinline__ void store_pieces_shifted(const Fp8GemmArgs& args,
                                                     const unsigned int (&words)[kPieces][2][4], int row0, int rows,
                                                     int d_row0, int lane, int next_lane, Col col) {
  constexpr int kE = kElemBytes / 2;  // 2-byte units per element
  constexpr int kNU = kN * kE;        // a row's units
  const bool first = (lane & 3) == 0, last = (lane & 3) == 3;
  // A row's shift: every piece starts a multiple of 8 units into the row (col(u) is a multiple of 8 bf16 or 4 f32
  // columns), so t is the row start's, worked out once per row half rather than per piece.
  int shift[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const auto start = reinterpret_cast<unsigned long long>(args.d) + 2ull * (d_row0 + row0 + 8 * h) * kNU;
    shift[h] = static_cast<int>(0u - static_cast<unsigned int>(start >> 1)) & 7;
  }
#pragma unroll
  for (int u = 0; u < kPieces; ++u)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      unsigned int x[8];  // this lane's 8 units, then the next lane's (the first lane sends its next piece: the last's)
#pragma unroll
      for (int w = 0; w < 4; ++w) x[w] = words[u][h][w];
#pragma unroll
      for (int w = 0; w < 4; ++w) {
        const unsigned int send = first && u + 1 < kPieces ? words[u + 1][h][w] : words[u][h][w];
        x[4 + w] = static_cast<unsigned int>(ptx::shfl_s32(static_cast<int>(send), next_lane));
      }
      const int r = row0 + 8 * h;
      if (r >= rows) continue;
      const int c = col(u) * kE;  // in units from the row's start
      unsigned short* d = static_cast<unsigned short*>(args.d) + (unsigned long long)(d_row0 + r) * kNU + c;
      const int t = shift[h];
      unsigned int win[4];  // units c + t .. + 7
      window8(x, t, win);
      int valid = kNU - (c + t);  // the window's units inside N, and inside the tile for its last lane
      if (last && u == kPieces - 1 && valid > 8 - t) valid = 8 - t;
      if (valid >= 8) {
        ptx::st_global_v4(d + t, win[0], win[1], win[2], win[3]);
      } else if (valid > 0) {
        store_block_head(d + t, win, valid);
      }
      if (first && u == 0 && t > 0) {  // the row's first t units: the end of the 16-byte block before d + t
        if (t <= kNU - c) {
          const unsigned int own[8] = {0u, 0u, 0u, 0u, x[0], x[1], x[2], x[3]};
          unsigned int before[4];  // units c + t - 8 .. c + t - 1
          window8(own, t, before);
          store_block_tail(d + t - 8, before, 8 - t);
        } else {
          const unsigned int own[4] = {x[0], x[1], x[2], x[3]};
#pragma unroll
          for (int j = 0; j < 7; ++j)
            if (j < t && c + j < kNU) d[j] = bf16_of(own, j);
        }
      }
    }
}

// bf16 tiles of whole chunk quads at N % 8 != 0: lane l of a quad holds columns 32q + 8l .. + 7 (bf16x8_words).
template <int kChunks = kNumChunks>
__device__ __forceinline__ void store_wave_bf16x8_shifted(const Fp8GemmArgs& args, const float (&out)[kAccRegs],
                                                          int row0, int rows, int d_row0, int n0, int lane) {
  constexpr int kQuads = kChunks / 4;
  unsigned int words[kQuads][2][4];
#pragma unroll
  for (int q = 0; q < kQuads; ++q)
    bf16x8_words(out, q, lane, [&](int h, uint4 v) {
      words[q][h][0] = v.x;
      words[q][h][1] = v.y;
      words[q][h][2] = v.z;
      words[q][h][3] = v.w;
    });
  store_pieces_shifted<2>(args, words, row0, rows, d_row0, lane, (lane & ~3) | ((lane + 1) & 3),
                          [&](int q) { return n0 + 32 * q + 8 * (lane & 3); });
}

// f32 at N % 4 != 0, the store layout: in column order the quad's lanes are 0, 2, 1, 3 (store_col).
__device__ __forceinline__ void store_wave_f32_shifted(const Fp8GemmArgs& args, const float (&out)[kAccRegs], int row0,
                                                       int rows, int d_row0, int n0, int lane) {
  constexpr int kPairs = kNumChunks / 2;
  unsigned int words[kPairs][2][4];
#pragma unroll
  for (int p = 0; p < kPairs; ++p)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int i = 8 * p + 2 * h;
      words[p][h][0] = __float_as_uint(out[i]);
      words[p][h][1] = __float_as_uint(out[i + 1]);
      words[p][h][2] = __float_as_uint(out[i + 4]);
      words[p][h][3] = __float_as_uint(out[i + 5]);
    }
  const int pos = 2 * (lane & 1) + ((lane >> 1) & 1), after = (pos + 1) & 3;
  store_pieces_shifted<4>(args, words, row0, rows, d_row0, lane, (lane & ~3) | ((after & 1) << 1) | (after >> 1),
                          [&](int p) { return store_col(n0, p, lane); });
}

// bf16 stores of one wave of whole chunk quads (bf16x8_words' layout), only rows < rows: shifted at N % 8 != 0, else
// 16 bytes wide (store_bf16_words). (A template so that its static_assert applies only where it is called.)
template <int kChunks = kNumChunks>
__device__ __forceinline__ void store_wave_bf16x8(const Fp8GemmArgs& args, const float (&out)[kAccRegs], int row0,
                                                  int rows, int d_row0, int n0, int lane, bool aligned) {
  static_assert(kChunks % 4 == 0, "whole 32-column chunk quads");
  if constexpr (kN % 8 != 0) {
    store_wave_bf16x8_shifted(args, out, row0, rows, d_row0, n0, lane);
  } else {
#pragma unroll
    for (int q = 0; q < kChunks / 4; ++q)
      bf16x8_words(out, q, lane, [&](int h, uint4 v) {
        const int r = row0 + 8 * h;
        const int c = n0 + 32 * q + 8 * (lane & 3);
        if (r >= rows) return;
        unsigned short* d = static_cast<unsigned short*>(args.d) + (unsigned long long)(d_row0 + r) * kN + c;
        const unsigned int words[4] = {v.x, v.y, v.z, v.w};
        store_bf16_words(d, c, words, aligned);
      });
  }
}

// The register epilogue's stores of one wave in the store layout (kLines: the line layout), only rows < rows.
template <bool kLines>
__device__ __forceinline__ void store_wave(const Fp8GemmArgs& args, const float (&out)[kAccRegs], int row0, int rows,
                                           int d_row0, int n0, int lane, bool aligned) {
  if constexpr (kOutF32 && kN % 4 != 0) {
    static_assert(!kLines, "f32 rows of N % 4 != 0 take the store layout");
    store_wave_f32_shifted(args, out, row0, rows, d_row0, n0, lane);
  } else {
#pragma unroll
    for (int p = 0; p < kNumChunks / 2; ++p)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = slot_row<kLines>(row0 + 8 * h, p, lane);
        if (r < rows)
          store_quad(args, d_row0 + r, slot_col<kLines>(n0, p, lane), out[8 * p + 2 * h], out[8 * p + 2 * h + 1],
                     out[8 * p + 4 + 2 * h], out[8 * p + 4 + 2 * h + 1], aligned);
      }
  }
}

}  // namespace fp8_gemm
}  // namespace jdg
