// The Python extension jax_deepgemm._C: FFI handler capsules for registration, and the JIT runtime's Python API.
// Importing it needs neither a GPU nor CUDA: libcuda and libnvrtc are loaded on first use.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_driver.h"
#include "env.h"
#include "fp8_gemm.h"
#include "fp8_quantize.h"
#include "heuristics.h"
#include "jit_compiler.h"
#include "jit_runtime.h"
#include "sass_hints.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

template <typename Fn>
nb::capsule handler_capsule(Fn* fn) {
  return nb::capsule(reinterpret_cast<void*>(fn));
}

nb::dict config_dict(const jdg::Fp8GemmConfig& c) {
  nb::dict d;
  d["block_m"] = c.block_m;
  d["block_n"] = c.block_n;
  d["stages"] = c.stages;
  d["num_threads"] = c.num_threads;
  d["smem_bytes"] = c.smem_bytes;
  d["cluster"] = c.cluster;
  d["tma_store"] = c.tma_store;
  d["acc_pipeline"] = c.acc_pipeline;
  d["split_halves"] = c.split_halves;
  d["paired_stages"] = c.paired_stages;
  d["split_k"] = c.split_k;
  d["tail_split"] = c.tail_split;
  d["segments"] = c.segments;
  d["dynamic_tiles"] = c.dynamic_tiles;
  d["c_prefetch"] = c.c_prefetch;
  d["multicast_b"] = c.multicast_b;
  d["grid"] = c.grid;
  d["tiles"] = c.tiles;
  d["waves"] = c.waves;
  return d;
}

nb::object or_none(const std::string& s) { return s.empty() ? nb::none() : nb::object(nb::str(s.c_str())); }

nb::dict tool_dict(const jdg::jit::ToolStatus& s) {
  nb::dict d;
  d["available"] = s.available;
  d["path"] = or_none(s.path);
  d["version"] = or_none(s.version);
  d["error"] = or_none(s.error);
  return d;
}

int to_int(std::int64_t v, const char* name) {
  if (v < INT32_MIN || v > INT32_MAX) throw std::invalid_argument(std::string(name) + " is out of range");
  return static_cast<int>(v);
}

}  // namespace

NB_MODULE(_C, m) {
  m.doc() = "jax_deepgemm native runtime: XLA FFI handlers and the kernel JIT (NVRTC/NVCC, memory + disk cache).";

  m.def(
      "configure",
      [](const std::string& kernel_include_dir, std::vector<std::string> nvrtc_candidates) {
        jdg::jit::configure(kernel_include_dir, std::move(nvrtc_candidates));
      },
      "kernel_include_dir"_a, "nvrtc_candidates"_a,
      "Set the kernel header directory (containing jax_deepgemm/*.cuh) and the libnvrtc paths to try first.");

  m.def(
      "registrations",
      [] {
        nb::dict fp8_gemm;
        fp8_gemm["instantiate"] = handler_capsule(JdgFp8GemmInstantiate);
        fp8_gemm["initialize"] = handler_capsule(JdgFp8GemmInitialize);
        fp8_gemm["execute"] = handler_capsule(JdgFp8GemmExecute);
        nb::dict fp8_quantize;
        fp8_quantize["instantiate"] = handler_capsule(JdgFp8QuantizeInstantiate);
        fp8_quantize["initialize"] = handler_capsule(JdgFp8QuantizeInitialize);
        fp8_quantize["execute"] = handler_capsule(JdgFp8QuantizeExecute);
        nb::dict out;
        out["jdg_fp8_gemm"] = fp8_gemm;
        out["jdg_fp8_quantize_t"] = fp8_quantize;
        return out;
      },
      "FFI targets: {target name: {stage: capsule}}, for jax.ffi.register_ffi_target(..., platform='CUDA').");

  m.def(
      "state_types",
      [] {
        nb::dict fp8_gemm;
        fp8_gemm["type_id"] = nb::capsule(static_cast<void*>(jdg::fp8_gemm_state_type_id()));
        fp8_gemm["type_info"] = nb::capsule(static_cast<const void*>(jdg::fp8_gemm_state_type_info()));
        nb::dict fp8_quantize;
        fp8_quantize["type_id"] = nb::capsule(static_cast<void*>(jdg::fp8_quantize_state_type_id()));
        fp8_quantize["type_info"] = nb::capsule(static_cast<const void*>(jdg::fp8_quantize_state_type_info()));
        nb::dict out;
        out[jdg::kFp8GemmStateTypeName] = fp8_gemm;
        out[jdg::kFp8QuantizeStateTypeName] = fp8_quantize;
        return out;
      },
      "FFI state types: {name: {'type_id': capsule, 'type_info': capsule}}, for jax.ffi.register_ffi_type(..., "
      "platform='CUDA'), to be registered before the targets.");

  m.def(
      "compile_fp8_gemm",
      [](const std::string& arch, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t num_sms, bool a_e5m2,
         bool b_e5m2, bool b_scale_per_row, bool out_f32, std::int64_t c_kind, const std::string& grouping,
         std::int64_t num_groups, std::int64_t expected_m, std::int64_t hbm_gbs, std::int64_t sms_cap) {
        jdg::Fp8GemmProblem p;
        p.grouping = jdg::parse_grouping(grouping);
        p.num_groups = num_groups;
        p.expected_m = expected_m;
        p.arch = arch;
        p.m = m;
        p.n = n;
        p.k = k;
        p.num_sms = to_int(num_sms, "num_sms");
        p.hbm_gbs = to_int(hbm_gbs, "hbm_gbs");
        p.sms_cap = to_int(sms_cap, "sms_cap");
        p.a_e5m2 = a_e5m2;
        p.b_e5m2 = b_e5m2;
        p.b_scale_per_row = b_scale_per_row;
        p.out_f32 = out_f32;
        p.c_kind = to_int(c_kind, "c_kind");
        jdg::Fp8GemmBuild built;
        {
          nb::gil_scoped_release release;
          built = jdg::build_fp8_gemm(p);
        }
        const jdg::jit::CompiledKernel& kernel = *built.result.kernel;
        nb::dict d;
        d["kernel"] = kernel.name;
        d["num_sms"] = jdg::used_sms(p);
        d["config"] = config_dict(built.config);
        d["source"] = kernel.source;
        d["cache"] = built.result.cache;
        d["seconds"] = built.result.seconds;
        d["compiler"] = kernel.compiler;
        d["digest"] = kernel.digest;
        d["cubin_size"] = kernel.cubin.size();
        d["log"] = kernel.log;
        return d;
      },
      "arch"_a, "m"_a, "n"_a, "k"_a, "num_sms"_a, "a_e5m2"_a = false, "b_e5m2"_a = false,
      "b_scale_per_row"_a = false, "out_f32"_a = false, "c_kind"_a = 0, "grouping"_a = "dense", "num_groups"_a = 1,
      "expected_m"_a = 0, "hbm_gbs"_a = 0, "sms_cap"_a = 0,
      "Select the config and JIT-compile the FP8 GEMM kernel (no GPU needed). Returns kernel, num_sms (those used: "
      "num_sms under sms_cap, set_num_sms's cap, 0: none), config, source, cache ('memory' | 'disk' | 'compiled'), "
      "seconds, compiler. grouping: 'dense', 'contiguous', 'ragged' or "
      "'masked' (then m is the rows per group), with num_groups and (masked) the expected_m hint; hbm_gbs: the "
      "GPU's peak HBM bandwidth in GB/s (0: unknown), which the dense split-K choice weighs.");

  m.def(
      "compile_fp8_quantize",
      [](const std::string& arch, bool in_f32, bool per_block, bool block_map, bool untransposed, bool row_map,
         bool rowwise, bool swiglu_backward, bool swiglu_forward) {
        jdg::Fp8QuantizeProblem p;
        p.arch = arch;
        p.in_f32 = in_f32;
        p.per_block = per_block;
        p.block_map = block_map;
        p.untransposed = untransposed;
        p.row_map = row_map;
        p.rowwise = rowwise;
        p.swiglu_backward = swiglu_backward;
        p.swiglu_forward = swiglu_forward;
        // (shapes are runtime arguments; one row of 16 bytes passes the checks, [g | u] of 128 columns each)
        p.cols = swiglu_backward || swiglu_forward ? 256 : in_f32 ? 4 : 8;
        jdg::jit::BuildResult built;
        {
          nb::gil_scoped_release release;
          built = jdg::build_fp8_quantize(p);
        }
        nb::dict d;
        d["kernel"] = built.kernel->name;
        d["source"] = built.kernel->source;
        d["cache"] = built.cache;
        d["seconds"] = built.seconds;
        d["log"] = built.kernel->log;
        return d;
      },
      "arch"_a, "in_f32"_a = false, "per_block"_a = false, "block_map"_a = false, "untransposed"_a = false,
      "row_map"_a = false, "rowwise"_a = false, "swiglu_backward"_a = false, "swiglu_forward"_a = false,
      "JIT-compile a quantization kernel, the transposing one, (rowwise) the per-token one or (swiglu_forward, "
      "swiglu_backward) the SwiGLU forward or backward with its per-token quantization (no GPU needed; its shapes "
      "are runtime arguments). Returns kernel, source, cache ('memory' | 'disk' | 'compiled'), seconds, log.");

  m.def(
      "verify_cache_entry",
      [](const std::string& dir) {
        nb::gil_scoped_release release;
        return jdg::jit::verify_entry(dir);
      },
      "dir"_a,
      "Why a kernel cache entry directory (<cache dir>/cache/<kernel>.<digest>) is not intact: '' when its cubin "
      "matches the size and checksum recorded in its kernel.meta (for tests and tools).");

  m.def(
      "rewrite_ffma_hints",
      [](nb::bytes cubin, int period) {
        int changed = 0;
        std::string out = jdg::jit::rewrite_ffma_hints(std::string(cubin.c_str(), cubin.size()), period, &changed);
        return nb::make_tuple(nb::bytes(out.data(), out.size()), changed);
      },
      "cubin"_a, "period"_a,
      "The JIT's FFMA hint pass (ffi/sass_hints.h) on a cubin: (rewritten cubin, instructions changed). For tests "
      "and tools; compiled sm_90 kernels get it with DG_JIT_FFMA_YIELD_PERIOD's period.");

  m.def(
      "select_fp8_gemm_config",
      [](std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t num_sms, bool b_scale_per_row,
         const std::string& grouping, std::int64_t num_groups, std::int64_t expected_m, bool out_f32,
         std::int64_t c_kind, std::int64_t hbm_gbs) {
        const jdg::Grouping g = jdg::parse_grouping(grouping);
        const int sms = to_int(num_sms, "num_sms"), c = to_int(c_kind, "c_kind"), hbm = to_int(hbm_gbs, "hbm_gbs");
        if (hbm < 0)
          throw std::invalid_argument("select_fp8_gemm_config: hbm_gbs must be >= 0 (0: unknown), got " +
                                      std::to_string(hbm));
        if (c < 0 || c > 2)
          throw std::invalid_argument("select_fp8_gemm_config: c_kind must be 0 (none), 1 (bf16) or 2 (f32), got " +
                                      std::to_string(c));
        if (g == jdg::Grouping::kDense)
          return config_dict(jdg::select_fp8_gemm_config(m, n, k, sms, b_scale_per_row, out_f32, c, hbm));
        return config_dict(jdg::select_grouped_fp8_gemm_config(static_cast<int>(g), m, n, k, num_groups, expected_m,
                                                               sms, b_scale_per_row, out_f32, c));
      },
      "m"_a, "n"_a, "k"_a, "num_sms"_a, "b_scale_per_row"_a = false, "grouping"_a = "dense", "num_groups"_a = 1,
      "expected_m"_a = 0, "out_f32"_a = false, "c_kind"_a = 0, "hbm_gbs"_a = 0,
      "The FP8 GEMM configuration the heuristic picks (no compilation); grouping and hbm_gbs as for "
      "compile_fp8_gemm.");

  m.def(
      "min_peak_memory_gbs",
      [] {
        nb::gil_scoped_release release;
        return jdg::cu::min_peak_memory_gbs();
      },
      "The lowest peak memory bandwidth (GB/s) over the GPUs the CUDA driver sees; RuntimeError when it cannot say "
      "(no driver, no device).");

  m.def(
      "runtime_info",
      [] {
        nb::dict driver;
        int version = 0;
        std::string error;
        bool ok = jdg::cu::driver_version(&version, &error);
        driver["loaded"] = ok;
        driver["version"] =
            ok ? nb::object(nb::str((std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10)).c_str()))
               : nb::none();
        driver["error"] = or_none(error);
        nb::dict out;
        out["driver"] = driver;
        {
          jdg::jit::ToolStatus nvrtc, nvcc;
          {
            nb::gil_scoped_release release;
            nvrtc = jdg::jit::nvrtc_status();
            nvcc = jdg::jit::nvcc_status();
          }
          out["nvrtc"] = tool_dict(nvrtc);
          out["nvcc"] = tool_dict(nvcc);
        }
        out["cache_dir"] = jdg::env::cache_dir();
        out["kernel_include_dir"] = or_none(jdg::jit::kernel_include_dir());
        return out;
      },
      "What the JIT can use here: driver, nvrtc and nvcc ({available/loaded, path, version, error}), cache_dir.");
}
