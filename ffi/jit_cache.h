// The on-disk kernel cache.
//
// Layout under the root (DG_JIT_CACHE_DIR, default ~/.jax_deepgemm):
//   cache/<kernel name>.<digest>/kernel.cu      the generated source
//                               /kernel.cubin   the compiled image
//                               /kernel.log     the compiler log (only when it said something)
//                               /kernel.meta    written last: compiler, cubin size and checksum
//   tmp/                                        entries being written, and damaged entries being removed
//
// Publication is atomic: an entry is written and fsync'ed in a fresh directory under tmp/, then rename()d to its
// final name. When several processes compile the same kernel at once, the first rename wins and the others discard
// their copy (every copy was built from the same source by the same compiler, so they are interchangeable). An entry
// whose cubin does not match the size and checksum in kernel.meta is reported as damaged; the caller rebuilds it and
// the new entry replaces the damaged one. When the root cannot be created or written, the cache warns once and the
// process keeps its kernels in memory only.
#pragma once

#include <optional>
#include <string>

namespace jdg::jit {

struct CompiledKernel {
  std::string name;      // e.g. jdg_fp8_gemm_n7168_k2048_bm128_bn112_s5_...
  std::string digest;    // 32 hex digits: the cache key
  std::string source;    // the generated kernel.cu
  std::string cubin;     // the ELF image
  std::string compiler;  // "NVRTC 13.5" / "NVCC 13.0"
  std::string log;       // compiler log (empty when loaded from disk and the compiler said nothing)
};

class DiskCache {
 public:
  explicit DiskCache(std::string root) : root_(std::move(root)) {}

  const std::string& root() const { return root_; }
  std::string entry_dir(const std::string& name, const std::string& digest) const;

  // The cached kernel, if its entry is complete and intact. Sets *damaged (and warns) when an entry exists but its
  // cubin does not match its metadata.
  std::optional<CompiledKernel> load(const std::string& name, const std::string& digest, bool* damaged) const;

  // Publishes `kernel`; replaces an existing entry only when it is damaged. Failures warn (once per root) and leave
  // the kernel in memory only.
  void store(const CompiledKernel& kernel) const;

 private:
  bool prepare(std::string* error) const;  // creates cache/ and tmp/
  std::string root_;
};

// Why the directory `dir` is not an intact cache entry ("" when it is: its cubin matches the size and checksum in
// its kernel.meta). For tests and tools that check a cache directory.
std::string verify_entry(const std::string& dir);

// Prints "jax_deepgemm: warning: <message>" to stderr once per distinct `key`.
void warn_once(const std::string& key, const std::string& message);

}  // namespace jdg::jit
