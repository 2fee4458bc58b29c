// Standalone GPU test of the FP8 GEMM kernel (cuda/jax_deepgemm/fp8_gemm.cuh), independent of JAX and of the
// runtime in ffi/. One configuration per binary: build with the JDG_* macros on the command line, e.g.
//
//   nvcc -std=c++17 -O2 -gencode=arch=compute_90a,code=sm_90a -Icuda -DJDG_N=2112 -DJDG_K=7168 -DJDG_BLOCK_M=128 \
//        -DJDG_BLOCK_N=128 -DJDG_STAGES=6 -DJDG_A_E5M2=0 -DJDG_B_E5M2=0 -DJDG_B_SCALE_PER_ROW=0 -DJDG_OUT_F32=0 \
//        -DJDG_C_KIND=0 -DJDG_DEBUG_HANG_NS=2000000000 tests/cuda/fp8_gemm_harness.cu -o harness
//   ./harness [M ...]                     (default M list: 1 64 130 257)
//
// For every M it makes random FP8 inputs with per-token (A) and 128x128 or per-row (B) scales on the host,
// encodes the tensor maps exactly as fp8_gemm_abi.h prescribes, poisons D (and guard zones around it) with a NaN
// pattern, launches the kernel twice (grid = min(#SMs, tiles), then a small grid so every CTA walks many tiles), and
// compares with a float64 CPU reference of the same math: calc_diff < 1e-3, no NaN left, guards untouched.
// For large M the reference covers a sample of rows. Prints one "PASS"/"FAIL" line per (M, grid); exit code 1 on
// any failure. The driver entry point cuTensorMapEncodeTiled is fetched through the runtime, so no -lcuda is needed.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <jax_deepgemm/fp8_gemm.cuh>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using jdg::fp8_gemm::kBlockM;
using jdg::fp8_gemm::kBlockN;
using jdg::fp8_gemm::kK;
using jdg::fp8_gemm::kN;
using jdg::fp8_gemm::kStages;

constexpr bool kAE5M2 = JDG_A_E5M2 != 0;
constexpr bool kBE5M2 = JDG_B_E5M2 != 0;
constexpr bool kPerRow = JDG_B_SCALE_PER_ROW != 0;
constexpr bool kOutF32 = JDG_OUT_F32 != 0;
constexpr int kCKind = JDG_C_KIND;
constexpr int kKB = (kK + 127) / 128;
constexpr int kNB = (kN + 127) / 128;

#define CHECK_CUDA(x)                                                                                \
  do {                                                                                               \
    cudaError_t e_ = (x);                                                                            \
    if (e_ != cudaSuccess) {                                                                         \
      std::fprintf(stderr, "CUDA error %s at %s:%d: %s\n", cudaGetErrorName(e_), __FILE__, __LINE__, \
                   cudaGetErrorString(e_));                                                          \
      std::exit(2);                                                                                  \
    }                                                                                                \
  } while (0)

// ------------------------------------------------------------------ FP8 on the host (decode table, nearest encode)
struct Fp8Codec {
  float table[256];
  std::vector<std::pair<float, uint8_t>> positives;  // sorted finite values >= 0
  float max_finite;
  explicit Fp8Codec(bool e5m2) {
    for (int b = 0; b < 256; ++b) {
      const int sign = b >> 7;
      float v;
      if (!e5m2) {  // e4m3fn: bias 7, no inf, 0x7F/0xFF NaN
        const int e = (b >> 3) & 15, m = b & 7;
        if (e == 15 && m == 7) v = NAN;
        else if (e == 0) v = std::ldexp(m / 8.0f, -6);
        else v = std::ldexp(1.0f + m / 8.0f, e - 7);
      } else {  // e5m2: bias 15, exponent 31 = inf/NaN
        const int e = (b >> 2) & 31, m = b & 3;
        if (e == 31) v = m == 0 ? INFINITY : NAN;
        else if (e == 0) v = std::ldexp(m / 4.0f, -14);
        else v = std::ldexp(1.0f + m / 4.0f, e - 15);
      }
      table[b] = sign ? -v : v;
      if (!sign && std::isfinite(v)) positives.push_back({v, static_cast<uint8_t>(b)});
    }
    std::sort(positives.begin(), positives.end());
    max_finite = positives.back().first;
  }
  uint8_t encode(float x) const {  // round to nearest (ties: either), saturating
    const float a = std::min(std::fabs(x), max_finite);
    auto it = std::lower_bound(positives.begin(), positives.end(), std::make_pair(a, uint8_t(0)));
    if (it == positives.end()) it = positives.end() - 1;
    if (it != positives.begin() && std::fabs((it - 1)->first - a) <= std::fabs(it->first - a)) --it;
    return static_cast<uint8_t>(it->second | (x < 0 ? 0x80 : 0));
  }
};

uint16_t f32_to_bf16_rne(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}
float bf16_to_f32(uint16_t h) {
  uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// ------------------------------------------------------------------ tensor maps, exactly as fp8_gemm_abi.h says
PFN_cuTensorMapEncodeTiled_v12000 get_encode() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = nullptr;
  if (!fn) {
    cudaDriverEntryPointQueryResult q;
    void* p = nullptr;
    CHECK_CUDA(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || !p) {
      std::fprintf(stderr, "cuTensorMapEncodeTiled not found\n");
      std::exit(2);
    }
    fn = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }
  return fn;
}

jdg::TmaDescriptor make_map(const void* ptr, uint64_t rows, uint64_t k, uint32_t box_rows) {
  static_assert(sizeof(CUtensorMap) == sizeof(jdg::TmaDescriptor), "TmaDescriptor must be a CUtensorMap");
  CUtensorMap map;
  const cuuint64_t dims[2] = {k, rows};
  const cuuint64_t strides[1] = {k};  // bytes, rank - 1 entries
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(jdg::kFp8BlockK), box_rows};
  const cuuint32_t elem_strides[2] = {1, 1};
  CUresult r = get_encode()(&map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, const_cast<void*>(ptr), dims, strides, box,
                            elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "cuTensorMapEncodeTiled failed: %d\n", static_cast<int>(r));
    std::exit(2);
  }
  jdg::TmaDescriptor d;
  std::memcpy(&d, &map, sizeof(d));
  return d;
}

// ------------------------------------------------------------------ one problem
struct Problem {
  int m;
  std::vector<uint8_t> a8, b8;           // [M, K], [N, K]
  std::vector<float> a_scale, b_scale;   // [kb, M]; [nb, kb] or [kb, N]
  std::vector<uint16_t> c_bf16;          // [M, N]
  std::vector<float> c_f32;              // [M, N]
};

Problem make_problem(int m, uint64_t seed) {
  Fp8Codec ca(kAE5M2), cb(kBE5M2);
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Problem p;
  p.m = m;
  p.a8.resize(static_cast<size_t>(m) * kK);
  p.b8.resize(static_cast<size_t>(kN) * kK);
  p.a_scale.resize(static_cast<size_t>(kKB) * m);
  p.b_scale.resize(kPerRow ? static_cast<size_t>(kKB) * kN : static_cast<size_t>(kNB) * kKB);

  // A: rows of very different magnitude, per-token 1x128 quantization.
  std::vector<float> row(kK);
  for (int i = 0; i < m; ++i) {
    const float mag = std::exp(normal(rng));
    for (int k = 0; k < kK; ++k) row[k] = normal(rng) * mag;
    for (int kb = 0; kb < kKB; ++kb) {
      const int k0 = kb * 128, k1 = std::min(kK, k0 + 128);
      float amax = 0;
      for (int k = k0; k < k1; ++k) amax = std::max(amax, std::fabs(row[k]));
      const float s = std::max(amax, 1e-4f) / ca.max_finite;
      p.a_scale[static_cast<size_t>(kb) * m + i] = s;
      for (int k = k0; k < k1; ++k) p.a8[static_cast<size_t>(i) * kK + k] = ca.encode(row[k] / s);
    }
  }
  // B: values N(0,1) times a magnitude per 128x128 block (block mode) or per row (per-row mode).
  std::vector<float> b(static_cast<size_t>(kN) * kK);
  std::vector<float> block_mag(static_cast<size_t>(kNB) * kKB), row_mag(kN);
  for (auto& v : block_mag) v = std::exp(normal(rng));
  for (auto& v : row_mag) v = std::exp(normal(rng));
  for (int n = 0; n < kN; ++n)
    for (int k = 0; k < kK; ++k)
      b[static_cast<size_t>(n) * kK + k] =
          normal(rng) * (kPerRow ? row_mag[n] : block_mag[static_cast<size_t>(n / 128) * kKB + k / 128]);
  if (kPerRow) {
    for (int n = 0; n < kN; ++n)
      for (int kb = 0; kb < kKB; ++kb) {
        const int k0 = kb * 128, k1 = std::min(kK, k0 + 128);
        float amax = 0;
        for (int k = k0; k < k1; ++k) amax = std::max(amax, std::fabs(b[static_cast<size_t>(n) * kK + k]));
        const float s = std::max(amax, 1e-4f) / cb.max_finite;
        p.b_scale[static_cast<size_t>(kb) * kN + n] = s;
        for (int k = k0; k < k1; ++k) p.b8[static_cast<size_t>(n) * kK + k] = cb.encode(b[static_cast<size_t>(n) * kK + k] / s);
      }
  } else {
    for (int nb = 0; nb < kNB; ++nb)
      for (int kb = 0; kb < kKB; ++kb) {
        const int n0 = nb * 128, n1 = std::min(kN, n0 + 128), k0 = kb * 128, k1 = std::min(kK, k0 + 128);
        float amax = 0;
        for (int n = n0; n < n1; ++n)
          for (int k = k0; k < k1; ++k) amax = std::max(amax, std::fabs(b[static_cast<size_t>(n) * kK + k]));
        const float s = std::max(amax, 1e-4f) / cb.max_finite;
        p.b_scale[static_cast<size_t>(nb) * kKB + kb] = s;
        for (int n = n0; n < n1; ++n)
          for (int k = k0; k < k1; ++k)
            p.b8[static_cast<size_t>(n) * kK + k] = cb.encode(b[static_cast<size_t>(n) * kK + k] / s);
      }
  }
  if (kCKind == 1) {
    p.c_bf16.resize(static_cast<size_t>(m) * kN);
    for (auto& v : p.c_bf16) v = f32_to_bf16_rne(normal(rng) * 4.0f);
  } else if (kCKind == 2) {
    p.c_f32.resize(static_cast<size_t>(m) * kN);
    for (auto& v : p.c_f32) v = normal(rng) * 4.0f;
  }
  return p;
}

// float64 reference of the kernel's math for the listed rows (all N columns): ref[r][n].
std::vector<double> reference(const Problem& p, const std::vector<int>& rows) {
  Fp8Codec ca(kAE5M2), cb(kBE5M2);
  std::vector<double> bd(static_cast<size_t>(kN) * kK);
  for (size_t i = 0; i < bd.size(); ++i) bd[i] = cb.table[p.b8[i]];
  std::vector<double> out(rows.size() * static_cast<size_t>(kN));
#pragma omp parallel for schedule(dynamic)
  for (long long ri = 0; ri < static_cast<long long>(rows.size()); ++ri) {
    const int i = rows[ri];
    std::vector<double> a(kK);
    for (int k = 0; k < kK; ++k) a[k] = ca.table[p.a8[static_cast<size_t>(i) * kK + k]];
    for (int n = 0; n < kN; ++n) {
      double acc = 0;
      if (kCKind == 1) acc = bf16_to_f32(p.c_bf16[static_cast<size_t>(i) * kN + n]);
      if (kCKind == 2) acc = p.c_f32[static_cast<size_t>(i) * kN + n];
      const double* brow = &bd[static_cast<size_t>(n) * kK];
      for (int kb = 0; kb < kKB; ++kb) {
        const int k0 = kb * 128, k1 = std::min(kK, k0 + 128);
        double dot = 0;
        for (int k = k0; k < k1; ++k) dot += a[k] * brow[k];
        const double sa = p.a_scale[static_cast<size_t>(kb) * p.m + i];
        const double sb = kPerRow ? p.b_scale[static_cast<size_t>(kb) * kN + n]
                                  : p.b_scale[static_cast<size_t>(n / 128) * kKB + kb];
        acc += sa * sb * dot;
      }
      out[static_cast<size_t>(ri) * kN + n] = acc;
    }
  }
  return out;
}

constexpr int kGuard = 4096;  // poisoned elements before and after D

template <typename T>
T poison() {  // a NaN bit pattern that the kernel never produces
  if constexpr (sizeof(T) == 2) {
    return static_cast<T>(0x7fa5);
  } else {
    const uint32_t u = 0x7fa5a5a5u;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
}

struct DeviceBuffers {
  void *a8 = nullptr, *b8 = nullptr, *a_scale = nullptr, *b_scale = nullptr, *c = nullptr, *d_alloc = nullptr;
  ~DeviceBuffers() {
    for (void* p : {a8, b8, a_scale, b_scale, c, d_alloc})
      if (p) cudaFree(p);
  }
};

template <typename T>
void* upload(const std::vector<T>& v) {
  void* p = nullptr;
  CHECK_CUDA(cudaMalloc(&p, std::max<size_t>(v.size() * sizeof(T), 16)));
  if (!v.empty()) CHECK_CUDA(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return p;
}

bool run_case(int m, int num_sms, bool bench) {
  using OutT = std::conditional_t<kOutF32, float, uint16_t>;
  const uint64_t seed = 1234567ull * static_cast<uint64_t>(m) + kN * 31 + kK;
  Problem p = make_problem(m, seed);

  // Reference rows: all of them for small M, else a sample including the first and last rows of each M tile edge.
  std::vector<int> rows;
  if (static_cast<long long>(m) * kN * kK <= 4'000'000'000ll) {
    for (int i = 0; i < m; ++i) rows.push_back(i);
  } else {
    std::mt19937 rng(static_cast<unsigned>(seed));
    for (int i = 0; i < m; i += std::max(1, m / 96)) rows.push_back(i);
    rows.push_back(m - 1);
    for (int i = 0; i < 32; ++i) rows.push_back(static_cast<int>(rng() % m));
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  }
  const std::vector<double> ref = reference(p, rows);

  DeviceBuffers buf;
  buf.a8 = upload(p.a8);
  buf.b8 = upload(p.b8);
  buf.a_scale = upload(p.a_scale);
  buf.b_scale = upload(p.b_scale);
  if (kCKind == 1) buf.c = upload(p.c_bf16);
  if (kCKind == 2) buf.c = upload(p.c_f32);
  const size_t d_elems = static_cast<size_t>(m) * kN;
  const size_t total = d_elems + 2 * kGuard;
  CHECK_CUDA(cudaMalloc(&buf.d_alloc, total * sizeof(OutT)));
  OutT* d = static_cast<OutT*>(buf.d_alloc) + kGuard;
  std::vector<OutT> poisoned(total, poison<OutT>());

  const jdg::TmaDescriptor map_a = make_map(buf.a8, m, kK, kBlockM);
  const jdg::TmaDescriptor map_b = make_map(buf.b8, kN, kK, kBlockN);
  jdg::Fp8GemmArgs args;
  args.a_scale = static_cast<const float*>(buf.a_scale);
  args.b_scale = static_cast<const float*>(buf.b_scale);
  args.c = buf.c;
  args.d = d;
  args.m = m;

  const int threads = jdg::fp8_gemm_num_threads(kBlockM);
  const int smem = jdg::fp8_gemm_smem_bytes(kBlockM, kBlockN, kStages);
  CHECK_CUDA(cudaFuncSetAttribute(jdg_fp8_gemm, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const long long tiles = static_cast<long long>((m + kBlockM - 1) / kBlockM) * ((kN + kBlockN - 1) / kBlockN);

  bool all_ok = true;
  const int grids[2] = {static_cast<int>(std::min<long long>(num_sms, tiles)),
                        static_cast<int>(std::min<long long>(3, tiles))};
  for (int gi = 0; gi < 2; ++gi) {
    const int grid = grids[gi];
    if (gi == 1 && grid == grids[0]) continue;
    CHECK_CUDA(cudaMemcpy(buf.d_alloc, poisoned.data(), total * sizeof(OutT), cudaMemcpyHostToDevice));
    jdg_fp8_gemm<<<grid, threads, smem>>>(map_a, map_b, args);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
      std::printf("FAIL M=%d grid=%d: %s (%s)\n", m, grid, cudaGetErrorName(e), cudaGetErrorString(e));
      std::fflush(stdout);
      std::exit(3);  // the context is unusable after a kernel fault
    }
    std::vector<OutT> out(total);
    CHECK_CUDA(cudaMemcpy(out.data(), buf.d_alloc, total * sizeof(OutT), cudaMemcpyDeviceToHost));

    // Guards must still hold the poison; every element of D must have been written.
    long long guard_bad = 0, nan_count = 0;
    for (int i = 0; i < kGuard; ++i) {
      guard_bad += std::memcmp(&out[i], &poisoned[0], sizeof(OutT)) != 0;
      guard_bad += std::memcmp(&out[kGuard + d_elems + i], &poisoned[0], sizeof(OutT)) != 0;
    }
    auto val = [&](size_t idx) -> double {
      if constexpr (kOutF32) return out[kGuard + idx];
      else return bf16_to_f32(out[kGuard + idx]);
    };
    for (size_t i = 0; i < d_elems; ++i) nan_count += std::isnan(val(i));
    double xy = 0, xx_yy = 0, max_abs = 0, max_ref = 0;
    for (size_t ri = 0; ri < rows.size(); ++ri)
      for (int n = 0; n < kN; ++n) {
        const double x = val(static_cast<size_t>(rows[ri]) * kN + n), y = ref[ri * kN + n];
        xy += x * y;
        xx_yy += x * x + y * y;
        if (!(std::fabs(x - y) <= max_abs)) max_abs = std::fabs(x - y);  // NaN-propagating max
        max_ref = std::max(max_ref, std::fabs(y));
      }
    const double diff = xx_yy > 0 ? 1.0 - 2.0 * xy / xx_yy : 0.0;
    const bool ok = nan_count == 0 && guard_bad == 0 && diff < 1e-3 && std::isfinite(diff);
    all_ok &= ok;
    std::printf("%s M=%d grid=%d tiles=%lld rows_checked=%zu calc_diff=%.3e max_abs_err=%.4g (max |ref| %.4g) "
                "nan=%lld guard_writes=%lld\n",
                ok ? "PASS" : "FAIL", m, grid, tiles, rows.size(), diff, max_abs, max_ref, nan_count, guard_bad);
    std::fflush(stdout);
  }

  if (bench) {  // rough kernel time (no L2 flush; inputs may stay in L2): median of 20
    const int grid = grids[0];
    cudaEvent_t e0, e1;
    CHECK_CUDA(cudaEventCreate(&e0));
    CHECK_CUDA(cudaEventCreate(&e1));
    std::vector<float> ms;
    for (int it = 0; it < 25; ++it) {
      CHECK_CUDA(cudaEventRecord(e0));
      jdg_fp8_gemm<<<grid, threads, smem>>>(map_a, map_b, args);
      CHECK_CUDA(cudaEventRecord(e1));
      CHECK_CUDA(cudaEventSynchronize(e1));
      float t;
      CHECK_CUDA(cudaEventElapsedTime(&t, e0, e1));
      if (it >= 5) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    const double t = ms[ms.size() / 2] * 1e-3;
    std::printf("TIME M=%d N=%d K=%d: %.1f us, %.1f TFLOPS (median of %zu, no L2 flush)\n", m, kN, kK, t * 1e6,
                2.0 * m * kN * kK / t / 1e12, ms.size());
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
  }
  return all_ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> ms;
  bool bench = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--bench") bench = true;
    else ms.push_back(std::atoi(argv[i]));
  }
  if (ms.empty()) ms = {1, 64, 130, 257};
  int dev = 0, num_sms = 0;
  CHECK_CUDA(cudaSetDevice(dev));
  CHECK_CUDA(cudaDeviceGetAttribute(&num_sms, cudaDevAttrMultiProcessorCount, dev));
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, dev));
  std::printf("config N=%d K=%d BLOCK_M=%d BLOCK_N=%d STAGES=%d A_E5M2=%d B_E5M2=%d B_SCALE_PER_ROW=%d OUT_F32=%d "
              "C_KIND=%d on %s (%d SMs)\n",
              kN, kK, kBlockM, kBlockN, kStages, JDG_A_E5M2, JDG_B_E5M2, JDG_B_SCALE_PER_ROW, JDG_OUT_F32, JDG_C_KIND,
              prop.name, num_sms);
  bool ok = true;
  for (int m : ms) ok &= run_case(m, num_sms, bench);
  return ok ? 0 : 1;
}
