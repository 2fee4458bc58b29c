#include "fp8_gemm.h"

#include <jax_deepgemm/fp8_gemm_abi.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "cuda_driver.h"
#include "env.h"
#include "ffi_common.h"
#include "jit_compiler.h"
#include "xla/ffi/api/ffi.h"

namespace jdg {

// ---------------------------------------------------------------------------------------------------------------
// Problem, name, source, build (no GPU).

const char* grouping_name(Grouping g) {
  switch (g) {
    case Grouping::kDense: return "dense";
    case Grouping::kContiguous: return "contiguous";
    case Grouping::kRagged: return "ragged";
    case Grouping::kMasked: return "masked";
    case Grouping::kKGrouped: return "k_grouped";
  }
  return "?";
}

Grouping parse_grouping(const std::string& name) {
  for (Grouping g : {Grouping::kDense, Grouping::kContiguous, Grouping::kRagged, Grouping::kMasked, Grouping::kKGrouped})
    if (name == grouping_name(g)) return g;
  throw std::invalid_argument("jdg_fp8_gemm: grouping must be \"dense\", \"contiguous\", \"ragged\", \"masked\" or "
                              "\"k_grouped\", got \"" + name + "\"");
}

namespace {
bool grouped(const Fp8GemmProblem& p) { return p.grouping != Grouping::kDense; }
int mode(const Fp8GemmProblem& p) { return static_cast<int>(p.grouping); }
}  // namespace

void validate(const Fp8GemmProblem& p) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("jdg_fp8_gemm: " + what); };
  constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
  if (p.m < 0 || p.m > kIntMax) fail("m must be in [0, 2^31), got " + std::to_string(p.m));
  if (p.n < 1 || p.n > kIntMax) fail("n must be in [1, 2^31), got " + std::to_string(p.n));
  if (p.k < 1 || p.k > kIntMax) fail("k must be in [1, 2^31), got " + std::to_string(p.k));
  if (p.k % 16 != 0) fail("k must be a multiple of 16 (TMA row stride), got " + std::to_string(p.k));
  if (p.num_sms < 1) fail("num_sms must be >= 1, got " + std::to_string(p.num_sms));
  if (p.hbm_gbs < 0) fail("hbm_gbs must be >= 0 (0: unknown), got " + std::to_string(p.hbm_gbs));
  if (p.sms_cap < 0) fail("sms_cap must be >= 0 (0: none), got " + std::to_string(p.sms_cap));
  if (p.c_kind < 0 || p.c_kind > 2) fail("c_kind must be 0 (no C), 1 (bf16) or 2 (f32), got " + std::to_string(p.c_kind));
  jit::check_arch(p.arch);
  if (!grouped(p)) {
    if (p.num_groups != 1) fail("a dense GEMM has num_groups 1, got " + std::to_string(p.num_groups));
    return;
  }
  // Grouped: every row, column and tile index the kernel forms must fit in int32.
  if (p.grouping == Grouping::kKGrouped) {
    if (!p.b_scale_per_row || p.c_kind == 1 || (!p.out_f32 && p.c_kind != 0))
      fail("the k-grouped GEMM takes per-row B scales, and a float32 output with no C or a float32 one, or a bf16 "
           "output without C");
    if (p.k % kFp8BlockK != 0) fail("the k-grouped GEMM needs k % 128 == 0, got " + std::to_string(p.k));
  } else if (p.c_kind != 0) {
    fail(std::string("the ") + grouping_name(p.grouping) + " grouped GEMM takes no C");
  }
  if (p.num_groups < 1 || p.num_groups > kIntMax)
    fail("num_groups must be in [1, 2^31), got " + std::to_string(p.num_groups));
  if (p.num_groups * p.n > kIntMax)
    fail("num_groups * n must be < 2^31 (rows of the stacked B), got " + std::to_string(p.num_groups * p.n));
  if ((p.grouping == Grouping::kMasked || p.grouping == Grouping::kKGrouped) && p.num_groups * p.m > kIntMax)
    fail("num_groups * m must be < 2^31 (rows of the stacked A or D), got " + std::to_string(p.num_groups * p.m));
  // The largest tile count any configuration can have (BLOCK_M 64, BLOCK_N 16).
  if (fp8_gemm_max_tiles(mode(p), p.m, p.n, p.num_groups, 64, 16) > kIntMax)
    fail("too many tiles (m=" + std::to_string(p.m) + ", n=" + std::to_string(p.n) + ", num_groups=" +
         std::to_string(p.num_groups) + ")");
}

std::string fp8_gemm_kernel_name(const Fp8GemmProblem& p, const Fp8GemmConfig& c, bool profile_waits) {
  std::ostringstream s;
  s << "jdg_fp8_gemm_";
  if (grouped(p)) s << grouping_name(p.grouping) << "_";
  s << "n" << p.n << "_k" << p.k << "_bm" << c.block_m << "_bn" << c.block_n << "_s" << c.stages << "_"
    << (p.a_e5m2 ? "e5m2" : "e4m3") << "_" << (p.b_e5m2 ? "e5m2" : "e4m3") << "_" << (p.b_scale_per_row ? "sr" : "sb")
    << "_" << (p.out_f32 ? "f32" : "bf16") << "_c" << p.c_kind;
  if (c.cluster > 1) s << "_x" << c.cluster;
  if (c.multicast_b) s << "_mb";
  if (c.tma_store) s << "_ts";
  if (c.acc_pipeline) s << "_ap";
  if (c.paired_stages) s << "_ps";
  if (c.split_halves) s << "_sh";
  if (c.split_k > 1) s << "_sk" << c.split_k;
  if (c.tail_split) s << "_tail";
  if (c.segments) s << "_seg";
  if (c.dynamic_tiles) s << "_dt";
  if (c.c_prefetch > 0) s << "_cpf" << c.c_prefetch;
  if (profile_waits) s << "_pw";
  return s.str();
}

std::string fp8_gemm_source(const Fp8GemmProblem& p, const Fp8GemmConfig& c, bool profile_waits) {
  std::ostringstream s;
  s << "// Generated by jax_deepgemm: kernel " << fp8_gemm_kernel_name(p, c, profile_waits) << " for " << p.arch
    << ".\n"
    << "// The macros are described in <jax_deepgemm/fp8_gemm_abi.h>.\n"
    << "#define JDG_N " << p.n << "\n"
    << "#define JDG_K " << p.k << "\n"
    << "#define JDG_BLOCK_M " << c.block_m << "\n"
    << "#define JDG_BLOCK_N " << c.block_n << "\n"
    << "#define JDG_STAGES " << c.stages << "\n"
    << "#define JDG_A_E5M2 " << int(p.a_e5m2) << "\n"
    << "#define JDG_B_E5M2 " << int(p.b_e5m2) << "\n"
    << "#define JDG_B_SCALE_PER_ROW " << int(p.b_scale_per_row) << "\n"
    << "#define JDG_OUT_F32 " << int(p.out_f32) << "\n"
    << "#define JDG_C_KIND " << p.c_kind << "\n";
  if (grouped(p)) s << "#define JDG_GROUPED_MODE " << mode(p) << "\n";
  if (c.cluster > 1) s << "#define JDG_CLUSTER " << c.cluster << "\n";
  if (c.multicast_b) s << "#define JDG_MULTICAST_B 1\n";
  if (c.tma_store) s << "#define JDG_TMA_STORE 1\n";
  if (c.acc_pipeline) s << "#define JDG_ACC_PIPELINE 1\n";
  if (c.paired_stages) s << "#define JDG_PAIRED_STAGES 1\n";
  if (c.split_halves) s << "#define JDG_SPLIT_HALVES 1\n";
  if (c.split_k > 1) s << "#define JDG_SPLIT_K " << c.split_k << "\n";
  if (c.tail_split) s << "#define JDG_TAIL_SPLIT 1\n";
  if (c.segments) s << "#define JDG_CONTIGUOUS_SEGMENTS 1\n";
  if (c.dynamic_tiles) s << "#define JDG_DYNAMIC_TILES 1\n";
  if (c.c_prefetch > 0) s << "#define JDG_C_PREFETCH " << c.c_prefetch << "\n";
  if (profile_waits) s << "#define JDG_PROFILE_WAITS 1\n";
  s << "#include <jax_deepgemm/fp8_gemm.cuh>\n";
  return s.str();
}

int used_sms(const Fp8GemmProblem& p) { return p.sms_cap > 0 ? std::min(p.num_sms, p.sms_cap) : p.num_sms; }

Fp8GemmConfig select_config(const Fp8GemmProblem& p) {
  validate(p);
  const int sms = used_sms(p);
  if (!grouped(p)) return select_fp8_gemm_config(p.m, p.n, p.k, sms, p.b_scale_per_row, p.out_f32, p.c_kind, p.hbm_gbs);
  return select_grouped_fp8_gemm_config(mode(p), p.m, p.n, p.k, p.num_groups, p.expected_m, sms, p.b_scale_per_row,
                                        p.out_f32, p.c_kind);
}

Fp8GemmBuild build_fp8_gemm(const Fp8GemmProblem& p) {
  Fp8GemmBuild out;
  out.config = select_config(p);
  out.profile_waits = env::profile_waits();
  out.result = jit::build(fp8_gemm_kernel_name(p, out.config, out.profile_waits),
                          fp8_gemm_source(p, out.config, out.profile_waits), p.arch);
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// XLA FFI handlers.

namespace {
namespace ffi = xla::ffi;

constexpr const char* kTarget = "jdg_fp8_gemm";
constexpr const char* kKernelSymbol = "jdg_fp8_gemm";
constexpr const char* kProfileReportSymbol = "jdg_fp8_gemm_profile_report";  // JDG_PROFILE_WAITS builds only

// Per call site (shared by all devices and executions of one executable). Set at instantiate; `devices` fills in
// at initialize, one slot per device ordinal, and is read without locking at execute.
struct Fp8GemmState {
  static ffi::TypeId id;

  Fp8GemmProblem problem;
  Fp8GemmConfig config;
  std::shared_ptr<const jit::CompiledKernel> kernel;
  bool profile_waits = false;   // the kernel was built with JDG_PROFILE_WAITS
  bool poison_outputs = false;  // DG_POISON_OUTPUTS, read once at instantiate
  int tile_queue = 0;           // this call site's tile counters (Fp8GemmArgs::tile_queue)
  ffi_common::DeviceKernels devices;
};

ffi::TypeId Fp8GemmState::id = XLA_FFI_UNKNOWN_TYPE_ID;

ffi::Error check_buffer(const char* name, const ffi::AnyBuffer& buffer, ffi::DataType dtype,
                        std::initializer_list<std::int64_t> shape) {
  return ffi_common::check_buffer(kTarget, name, buffer, dtype, shape);
}

// A row-major 2-D tensor map: dims {cols, rows} (elements of elem_bytes), boxes of box_cols x box_rows, zero fill
// past either end.
ffi::Error encode_map(const cu::DriverApi& d, TmaDescriptor* map, const char* name, int data_type, int elem_bytes,
                      int swizzle, void* base, std::uint64_t rows, std::uint64_t cols, std::uint32_t box_cols,
                      std::uint32_t box_rows) {
  const cu::cuuint64_t dims[2] = {cols, rows};
  const cu::cuuint64_t strides[1] = {cols * elem_bytes};
  const cu::cuuint32_t box[2] = {box_cols, box_rows};
  const cu::cuuint32_t element_strides[2] = {1, 1};
  cu::CUresult r = d.cuTensorMapEncodeTiled(map, data_type, 2, base, dims, strides, box, element_strides,
                                            cu::CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                                            cu::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                            cu::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r == cu::CUDA_SUCCESS) return ffi::Error::Success();
  return ffi::Error::Internal(std::string("jdg_fp8_gemm: tensor map of ") + name + ": " +
                              cu::error_message("cuTensorMapEncodeTiled", r));
}

// FP8 operand [rows, K] (K % 16 == 0): boxes of 128 x box_rows bytes, 128-byte swizzle (what wgmma reads).
ffi::Error encode_operand_map(const cu::DriverApi& d, TmaDescriptor* map, const char* name, void* base,
                              std::uint64_t rows, std::uint64_t k, std::uint32_t box_rows) {
  return encode_map(d, map, name, cu::CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, cu::CU_TENSOR_MAP_SWIZZLE_128B, base, rows, k,
                    kFp8BlockK, box_rows);
}

// float32 scales [rows, cols] (cols % 4 == 0: 16-byte row strides): boxes of box_cols x 1, no swizzle.
ffi::Error encode_scale_map(const cu::DriverApi& d, TmaDescriptor* map, const char* name, void* base,
                            std::uint64_t rows, std::uint64_t cols, std::uint32_t box_cols) {
  return encode_map(d, map, name, cu::CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, cu::CU_TENSOR_MAP_SWIZZLE_NONE, base, rows,
                    cols, box_cols, 1);
}

// The result's swizzle for the TMA store: one atom row (fp8_gemm_d_atom_cols bf16 columns) per swizzle span.
int d_atom_swizzle(int block_n) {
  switch (fp8_gemm_d_atom_cols(block_n) * 2) {
    case 128: return cu::CU_TENSOR_MAP_SWIZZLE_128B;
    case 64: return cu::CU_TENSOR_MAP_SWIZZLE_64B;
    default: return cu::CU_TENSOR_MAP_SWIZZLE_32B;
  }
}

// Loads the state's kernel into the current context for `device` (once); thread-safe.
ffi::ErrorOr<const jit::LoadedKernel*> ensure_loaded(Fp8GemmState* state, std::int32_t device) {
  return state->devices.get(kTarget, device, [&] {
    const jit::LoadedKernel* loaded =
        jit::load_kernel(*state->kernel, state->problem.arch, kKernelSymbol,
                         state->profile_waits ? kProfileReportSymbol : nullptr, state->config.smem_bytes);
    if (env::jit_debug())
      std::fprintf(stderr,
                   "jax_deepgemm: %s ready on device ordinal %d (CUDA device %d): grid=%d block=%d smem=%d B, "
                   "%d registers, %d B local memory per thread\n",
                   state->kernel->name.c_str(), device, loaded->device, state->config.grid,
                   state->config.num_threads, state->config.smem_bytes, loaded->num_regs, loaded->local_bytes);
    return loaded;
  });
}

// The problem the attributes describe (see fp8_gemm.h for the list).
ffi::ErrorOr<Fp8GemmProblem> decode_problem(const ffi::Dictionary& attrs) {
  Fp8GemmProblem p;
#define JDG_ATTR(var, type, name, ...)                                          \
  auto var = ffi_common::attribute<type>(kTarget, attrs, name __VA_OPT__(, ) __VA_ARGS__); \
  if (!var.has_value()) return var.error();
  JDG_ATTR(m, std::int64_t, "m")
  JDG_ATTR(n, std::int64_t, "n")
  JDG_ATTR(k, std::int64_t, "k")
  JDG_ATTR(num_sms, std::int64_t, "num_sms")
  JDG_ATTR(c_kind, std::int64_t, "c_kind")
  JDG_ATTR(arch, std::string_view, "arch")
  JDG_ATTR(a_e5m2, bool, "a_e5m2")
  JDG_ATTR(b_e5m2, bool, "b_e5m2")
  JDG_ATTR(b_scale_per_row, bool, "b_scale_per_row")
  JDG_ATTR(out_f32, bool, "out_f32")
  JDG_ATTR(grouping, std::string_view, "grouping", std::string_view("dense"))
  JDG_ATTR(num_groups, std::int64_t, "num_groups", std::int64_t{1})
  JDG_ATTR(expected_m, std::int64_t, "expected_m", std::int64_t{0})
  JDG_ATTR(hbm_gbs, std::int64_t, "hbm_gbs", std::int64_t{0})
  JDG_ATTR(sms_cap, std::int64_t, "sms_cap", std::int64_t{0})
#undef JDG_ATTR
  p.m = *m;
  p.n = *n;
  p.k = *k;
  p.num_sms = static_cast<int>(std::clamp<std::int64_t>(*num_sms, 0, std::numeric_limits<int>::max()));
  p.hbm_gbs = static_cast<int>(std::clamp<std::int64_t>(*hbm_gbs, -1, std::numeric_limits<int>::max()));
  p.sms_cap = static_cast<int>(std::clamp<std::int64_t>(*sms_cap, -1, std::numeric_limits<int>::max()));
  p.c_kind = static_cast<int>(*c_kind < 0 || *c_kind > 2 ? -1 : *c_kind);
  p.arch = std::string(*arch);
  p.a_e5m2 = *a_e5m2;
  p.b_e5m2 = *b_e5m2;
  p.b_scale_per_row = *b_scale_per_row;
  p.out_f32 = *out_f32;
  p.num_groups = *num_groups;
  p.expected_m = *expected_m;
  try {
    p.grouping = parse_grouping(std::string(*grouping));
    validate(p);
  } catch (const std::exception& e) {
    return ffi::Error::InvalidArgument(e.what());
  }
  return p;
}

// INSTANTIATE: attributes only, no device. Choose the config and compile (through the caches). The SM count and
// bandwidth the lowering saw (attributes num_sms, hbm_gbs) give way to those of this process's GPUs, the fewest SMs
// (under set_num_sms's cap, sms_cap) and the lowest bandwidth, as jax_deepgemm.runtime reads them when it lowers:
// a program lowered elsewhere (jax.export, or ahead of time without a GPU) takes the configuration for these GPUs.
ffi::ErrorOr<std::unique_ptr<Fp8GemmState>> Instantiate(ffi::Dictionary attrs) {
  auto problem = decode_problem(attrs);
  if (!problem.has_value()) return problem.error();
  auto state = std::make_unique<Fp8GemmState>();
  state->problem = *problem;
  static std::atomic<unsigned int> call_sites{0};  // (call sites past kFp8GemmTileQueues share pairs, modulo)
  state->tile_queue = static_cast<int>(call_sites.fetch_add(1, std::memory_order_relaxed) % kFp8GemmTileQueues);
  try {
    state->problem.num_sms = cu::min_multiprocessor_count();  // (under sms_cap: select_config applies it)
    state->problem.hbm_gbs = cu::min_peak_memory_gbs();
  } catch (const std::runtime_error&) {
    // No driver or no device here (instantiated without a GPU, as the CPU tests do): the lowering's values stand,
    // and loading the kernel onto a device (initialize) reports what is missing.
  }
  try {
    Fp8GemmBuild built = build_fp8_gemm(state->problem);
    state->config = built.config;
    state->kernel = built.result.kernel;
    state->profile_waits = built.profile_waits;
    state->poison_outputs = env::poison_outputs();
  } catch (const std::exception& e) {
    return ffi::Error::Internal(std::string("jdg_fp8_gemm: ") + e.what());
  }
  return state;
}

// INITIALIZE: every execution, outside graph capture. Load the cubin into this device's context once.
ffi::Error Initialize(std::int32_t device, Fp8GemmState* state) {
  if (state == nullptr) return ffi::Error::Internal("jdg_fp8_gemm: no state (instantiate did not run)");
  auto loaded = ensure_loaded(state, device);
  return loaded.has_value() ? ffi::Error::Success() : loaded.error();
}

// EXECUTE: check the buffers, encode the tensor maps (A, B, A scales; per-row B scales and D where the kernel reads
// them), launch. No allocation, no synchronisation. `extra` is C (dense) or the int32 group data (grouped).
ffi::Error Execute(cu::CUstream stream, std::int32_t device, Fp8GemmState* state, ffi::AnyBuffer a,
                   ffi::AnyBuffer a_scale, ffi::AnyBuffer b, ffi::AnyBuffer b_scale,
                   std::optional<ffi::AnyBuffer> extra, std::optional<ffi::AnyBuffer> k_grouped_c,
                   ffi::Result<ffi::AnyBuffer> d) {
  if (state == nullptr) return ffi::Error::Internal("jdg_fp8_gemm: no state (instantiate did not run)");
  const Fp8GemmProblem& p = state->problem;
  const Fp8GemmConfig& cfg = state->config;
  const bool is_grouped = p.grouping != Grouping::kDense;
  const std::int64_t g = p.num_groups;
  const std::int64_t kb = (p.k + kFp8BlockK - 1) / kFp8BlockK;
  const std::int64_t nb = (p.n + kFp8BlockK - 1) / kFp8BlockK;
  const bool k_grouped = p.grouping == Grouping::kKGrouped;
  const std::int64_t a_rows = p.grouping == Grouping::kMasked ? g * p.m : p.m;  // masked: groups stacked
  const std::int64_t d_rows = k_grouped ? g * p.m : a_rows;                      // k-grouped: one [m, n] per group
  const std::int64_t b_groups = k_grouped ? 1 : g;                               // k-grouped: one B, split along K
  const ffi::DataType a_type = p.a_e5m2 ? ffi::DataType::F8E5M2 : ffi::DataType::F8E4M3FN;
  const ffi::DataType b_type = p.b_e5m2 ? ffi::DataType::F8E5M2 : ffi::DataType::F8E4M3FN;
  const ffi::DataType d_type = p.out_f32 ? ffi::DataType::F32 : ffi::DataType::BF16;
  if (auto e = check_buffer("a", a, a_type, {a_rows, p.k}); e.failure()) return e;
  const std::int64_t a_rows4 = fp8_gemm_pad4(a_rows), n4 = fp8_gemm_pad4(p.n);  // scale rows: 16-byte strides
  if (auto e = check_buffer("a_scale", a_scale, ffi::DataType::F32, {kb, a_rows4}); e.failure()) return e;
  if (auto e = check_buffer("b", b, b_type, {b_groups * p.n, p.k}); e.failure()) return e;
  if (auto e = p.b_scale_per_row ? check_buffer("b_scale", b_scale, ffi::DataType::F32, {b_groups * kb, n4})
                                 : check_buffer("b_scale", b_scale, ffi::DataType::F32, {b_groups * nb, kb});
      e.failure())
    return e;
  if (is_grouped) {
    if (!extra.has_value())
      return ffi::Error::InvalidArgument(std::string("jdg_fp8_gemm: the ") + grouping_name(p.grouping) +
                                         " GEMM needs its int32 group operand");
    const std::int64_t len = p.grouping == Grouping::kContiguous ? p.m : g;
    if (auto e = check_buffer("groups", *extra, ffi::DataType::S32, {len}); e.failure()) return e;
    if (k_grouped_c.has_value() != (p.c_kind != 0))
      return ffi::Error::InvalidArgument(std::string("jdg_fp8_gemm: c_kind=") + std::to_string(p.c_kind) + " but " +
                                         (k_grouped_c.has_value() ? "a C operand was" : "no C operand was") +
                                         " passed");
    if (k_grouped_c.has_value() && !k_grouped)
      return ffi::Error::InvalidArgument("jdg_fp8_gemm: only the k-grouped GEMM takes a C operand");
    if (k_grouped_c.has_value()) {
      if (auto e = check_buffer("c", *k_grouped_c, ffi::DataType::F32, {d_rows, p.n}); e.failure()) return e;
    }
  } else {
    if (k_grouped_c.has_value())
      return ffi::Error::InvalidArgument("jdg_fp8_gemm: the dense GEMM takes at most one operand after b_scale");
    if (extra.has_value() != (p.c_kind != 0))
      return ffi::Error::InvalidArgument(std::string("jdg_fp8_gemm: c_kind=") + std::to_string(p.c_kind) +
                                         " but " + (extra.has_value() ? "a C operand was" : "no C operand was") +
                                         " passed");
    if (extra.has_value()) {
      const ffi::DataType c_type = p.c_kind == 2 ? ffi::DataType::F32 : ffi::DataType::BF16;
      if (auto e = check_buffer("c", *extra, c_type, {p.m, p.n}); e.failure()) return e;
    }
  }
  if (auto e = check_buffer("d (result)", *d, d_type, {d_rows, p.n}); e.failure()) return e;
  if (a_rows == 0) return ffi::Error::Success();

  auto loaded = ensure_loaded(state, device);  // normally done at initialize already
  if (!loaded.has_value()) return loaded.error();
  const cu::DriverApi& driver = cu::driver();  // loaded by ensure_loaded

  cu::CUresult r = cu::CUDA_SUCCESS;
  TmaDescriptor map_a, map_b, map_sa, map_sb, map_d;
  if (auto e = encode_operand_map(driver, &map_a, "a", a.untyped_data(), a_rows, p.k, cfg.block_m / cfg.cluster);
      e.failure())
    return e;
  if (auto e = encode_operand_map(driver, &map_b, "b", b.untyped_data(), b_groups * p.n, p.k,
                                  cfg.multicast_b ? cfg.block_n / 2 : cfg.block_n);
      e.failure())
    return e;
  if (auto e = encode_scale_map(driver, &map_sa, "a_scale", a_scale.untyped_data(), kb, a_rows4,
                                fp8_gemm_sa_box(cfg.block_m));
      e.failure())
    return e;
  if (!p.b_scale_per_row) {
    map_sb = map_sa;  // unused by the kernel
  } else if (auto e = encode_scale_map(driver, &map_sb, "b_scale", b_scale.untyped_data(), b_groups * kb, n4,
                                       cfg.block_n);
             e.failure()) {
    return e;
  }
  void* c_data = k_grouped_c.has_value() ? k_grouped_c->untyped_data()
                                         : (!is_grouped && extra.has_value() ? extra->untyped_data() : nullptr);
  if (cfg.c_prefetch > 0) {  // the D map over C, for its prefetch (fp8_gemm_abi.h)
    const bool f32 = p.c_kind == 2;
    if (auto e = encode_map(driver, &map_d, "c", f32 ? cu::CU_TENSOR_MAP_DATA_TYPE_FLOAT32
                                                     : cu::CU_TENSOR_MAP_DATA_TYPE_UINT16,
                            f32 ? 4 : 2, cu::CU_TENSOR_MAP_SWIZZLE_NONE, c_data, d_rows, p.n, cfg.block_n, cfg.block_m);
        e.failure())
      return e;
  } else if (!cfg.tma_store) {
    map_d = map_sa;  // unused by the kernel
  } else if (auto e = encode_map(driver, &map_d, "d (result)", cu::CU_TENSOR_MAP_DATA_TYPE_UINT16, 2,
                                 d_atom_swizzle(cfg.block_n), d->untyped_data(), d_rows, p.n,
                                 fp8_gemm_d_atom_cols(cfg.block_n), fp8_gemm_d_box_rows(cfg.block_m));
             e.failure()) {
    return e;
  }
  Fp8GemmArgs args;
  args.b_scale = static_cast<const float*>(b_scale.untyped_data());
  args.c = c_data;
  args.d = d->untyped_data();
  args.m = static_cast<int>(a_rows);
  args.groups = is_grouped ? static_cast<const int*>(extra->untyped_data()) : nullptr;
  args.num_groups = static_cast<int>(g);
  args.group_m = static_cast<int>(p.m);
  args.tile_queue = state->tile_queue;
  if (state->poison_outputs && args.d != args.c) {  // (D written over C, overwrite_c: the poison would wipe C)
    r = driver.cuMemsetD8Async(args.d, 0xFF, d->size_bytes(), stream);  // 0xFF.. is NaN in bf16 and f32
    if (r != cu::CUDA_SUCCESS) return ffi::Error::Internal(cu::error_message("cuMemsetD8Async", r));
  }
  void* params[] = {&map_a, &map_b, &map_sa, &map_sb, &map_d, &args};
  cu::CUlaunchAttribute cluster{};
  cluster.id = cu::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  cluster.value.cluster_dim[0] = static_cast<unsigned>(fp8_gemm_cluster_ctas(cfg.cluster, cfg.split_k, cfg.tail_split));
  cluster.value.cluster_dim[1] = 1;
  cluster.value.cluster_dim[2] = 1;
  cu::CUlaunchConfig launch{};
  launch.grid_dim[0] = static_cast<unsigned>(cfg.grid);
  launch.grid_dim[1] = launch.grid_dim[2] = 1;
  launch.block_dim[0] = static_cast<unsigned>(cfg.num_threads);
  launch.block_dim[1] = launch.block_dim[2] = 1;
  launch.shared_bytes = static_cast<unsigned>(cfg.smem_bytes);
  launch.stream = stream;
  launch.attrs = &cluster;
  // A dense kernel without clusters launches with no cluster attribute: as a cluster launch of size 1 it ran
  // 0.2-1.0% slower on five dense rows (benchmarks/NOTES.md 81). Without it consecutive CTAs fill one GPC after
  // another, with it they went round the GPCs (NOTES 82). Grouped kernels keep it: without it their GPU tests passed
  // but their rows moved -0.4% to +1.3% (NOTES 82). Dynamic tiles hand out indices by st.async, which needs a cluster
  // launch (outside one it raised an illegal instruction, NOTES 134).
  launch.num_attrs = cluster.value.cluster_dim[0] == 1 && !is_grouped && !cfg.dynamic_tiles ? 0 : 1;
  r = driver.cuLaunchKernelEx(&launch, (*loaded)->function, params, nullptr);
  if (r != cu::CUDA_SUCCESS)
    return ffi::Error::Internal("jdg_fp8_gemm: launching " + state->kernel->name + ": " +
                                cu::error_message("cuLaunchKernelEx", r));
  if ((*loaded)->profile_report != nullptr) {  // DG_PROFILE_WAITS: print what the kernel measured (fp8_gemm_abi.h)
    int grid = cfg.grid;
    void* report_params[] = {&grid};
    cu::CUlaunchConfig report{};
    report.grid_dim[0] = report.grid_dim[1] = report.grid_dim[2] = 1;
    report.block_dim[0] = 256;
    report.block_dim[1] = report.block_dim[2] = 1;
    report.stream = stream;
    r = driver.cuLaunchKernelEx(&report, (*loaded)->profile_report, report_params, nullptr);
    if (r != cu::CUDA_SUCCESS)
      return ffi::Error::Internal("jdg_fp8_gemm: launching the profile report of " + state->kernel->name + ": " +
                                  cu::error_message("cuLaunchKernelEx", r));
  }
  return ffi::Error::Success();
}

using Stream = ffi::PlatformStream<cu::CUstream>;
using State = ffi::State<Fp8GemmState>;

}  // namespace

XLA_FFI_TypeId* fp8_gemm_state_type_id() { return &Fp8GemmState::id; }

const XLA_FFI_TypeInfo* fp8_gemm_state_type_info() {
  static const XLA_FFI_TypeInfo info = ffi::MakeTypeInfo<Fp8GemmState>();
  return &info;
}

}  // namespace jdg

// Attributes are decoded from the dictionary (decode_problem): the grouped GEMMs add optional ones that a dense
// call leaves out.
XLA_FFI_DEFINE_HANDLER_SYMBOL(JdgFp8GemmInstantiate, jdg::Instantiate,
                              xla::ffi::Ffi::BindInstantiate().Attrs());

XLA_FFI_DEFINE_HANDLER_SYMBOL(JdgFp8GemmInitialize, jdg::Initialize,
                              xla::ffi::Ffi::BindInitialize()
                                  .Ctx<xla::ffi::DeviceOrdinal>()
                                  .Ctx<jdg::State>(),
                              {xla::ffi::Traits::kCmdBufferCompatible});

XLA_FFI_DEFINE_HANDLER_SYMBOL(JdgFp8GemmExecute, jdg::Execute,
                              xla::ffi::Ffi::Bind()
                                  .Ctx<jdg::Stream>()
                                  .Ctx<xla::ffi::DeviceOrdinal>()
                                  .Ctx<jdg::State>()
                                  .Arg<xla::ffi::AnyBuffer>()  // a
                                  .Arg<xla::ffi::AnyBuffer>()  // a_scale
                                  .Arg<xla::ffi::AnyBuffer>()  // b
                                  .Arg<xla::ffi::AnyBuffer>()  // b_scale
                                  .OptionalArg<xla::ffi::AnyBuffer>()  // c (dense) or groups (grouped)
                                  .OptionalArg<xla::ffi::AnyBuffer>()  // c (k-grouped)
                                  .Ret<xla::ffi::AnyBuffer>(),  // d
                              {xla::ffi::Traits::kCmdBufferCompatible});
