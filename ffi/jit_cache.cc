#include "jit_cache.h"

#include <cerrno>
#include <cstdio>
#include <mutex>
#include <set>
#include <sstream>

#include "files.h"
#include "hash.h"

namespace jdg::jit {
namespace {

constexpr const char* kMetaHeader = "jax_deepgemm kernel cache entry v1";

std::string make_meta(const CompiledKernel& k) {
  std::ostringstream out;
  out << kMetaHeader << "\n"
      << "name " << k.name << "\n"
      << "digest " << k.digest << "\n"
      << "compiler " << k.compiler << "\n"
      << "cubin_size " << k.cubin.size() << "\n"
      << "cubin_checksum " << hash_hex(k.cubin) << "\n";
  return out.str();
}

// Value of `key` in a kernel.meta text ("" when absent).
std::string meta_field(const std::string& meta, const std::string& key) {
  std::istringstream in(meta);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key + " ", 0) == 0) return line.substr(key.size() + 1);
  return "";
}

enum class EntryState { kMissing, kIntact, kDamaged };

// Reads an entry and checks its cubin against kernel.meta. `why` says what is wrong with a damaged entry.
EntryState inspect(const std::string& dir, CompiledKernel* out, std::string* why) {
  if (!files::is_dir(dir)) return EntryState::kMissing;
  std::string error;
  auto meta = files::read(dir + "/kernel.meta", &error);
  if (!meta || meta->rfind(kMetaHeader, 0) != 0) {
    *why = meta ? "kernel.meta is not a cache entry description" : error;
    return EntryState::kDamaged;
  }
  auto cubin = files::read(dir + "/kernel.cubin", &error);
  if (!cubin) {
    *why = error;
    return EntryState::kDamaged;
  }
  const std::string size = std::to_string(cubin->size());
  if (meta_field(*meta, "cubin_size") != size) {
    *why = "kernel.cubin has " + size + " bytes, kernel.meta says " + meta_field(*meta, "cubin_size");
    return EntryState::kDamaged;
  }
  if (meta_field(*meta, "cubin_checksum") != hash_hex(*cubin)) {
    *why = "kernel.cubin does not match the checksum in kernel.meta";
    return EntryState::kDamaged;
  }
  if (out != nullptr) {
    out->cubin = std::move(*cubin);
    out->compiler = meta_field(*meta, "compiler");
    out->source = files::read(dir + "/kernel.cu").value_or("");
    out->log = files::read(dir + "/kernel.log").value_or("");
  }
  return EntryState::kIntact;
}

}  // namespace

std::string verify_entry(const std::string& dir) {
  std::string why;
  switch (inspect(dir, nullptr, &why)) {
    case EntryState::kMissing:
      return dir + " is not a directory";
    case EntryState::kDamaged:
      return why;
    case EntryState::kIntact:
      return "";
  }
  return "unreachable";
}

void warn_once(const std::string& key, const std::string& message) {
  static std::mutex mutex;
  static std::set<std::string>* warned = new std::set<std::string>();
  std::lock_guard<std::mutex> lock(mutex);
  if (!warned->insert(key).second) return;
  std::fprintf(stderr, "jax_deepgemm: warning: %s\n", message.c_str());
}

std::string DiskCache::entry_dir(const std::string& name, const std::string& digest) const {
  return root_ + "/cache/" + name + "." + digest;
}

bool DiskCache::prepare(std::string* error) const {
  return files::make_dirs(root_ + "/cache", error) && files::make_dirs(root_ + "/tmp", error);
}

std::optional<CompiledKernel> DiskCache::load(const std::string& name, const std::string& digest,
                                              bool* damaged) const {
  *damaged = false;
  CompiledKernel kernel;
  std::string why;
  const std::string dir = entry_dir(name, digest);
  switch (inspect(dir, &kernel, &why)) {
    case EntryState::kMissing:
      return std::nullopt;
    case EntryState::kDamaged:
      *damaged = true;
      std::fprintf(stderr, "jax_deepgemm: warning: the cached kernel %s is damaged (%s); rebuilding it\n",
                   dir.c_str(), why.c_str());
      return std::nullopt;
    case EntryState::kIntact:
      kernel.name = name;
      kernel.digest = digest;
      return kernel;
  }
  return std::nullopt;
}

void DiskCache::store(const CompiledKernel& kernel) const {
  const std::string not_usable = "the JIT cache directory " + root_ + " is not usable (";
  const std::string memory_only = "); compiled kernels are kept in memory only";
  std::string error;
  if (!prepare(&error)) return warn_once(root_, not_usable + error + memory_only);

  const std::string tmp_root = root_ + "/tmp";
  auto tmp = files::make_temp_dir(tmp_root, kernel.name + "." + kernel.digest.substr(0, 8) + ".", &error);
  if (!tmp) return warn_once(root_, not_usable + error + memory_only);
  bool written = files::write_new_synced(*tmp + "/kernel.cu", kernel.source, &error) &&
                 files::write_new_synced(*tmp + "/kernel.cubin", kernel.cubin, &error) &&
                 (kernel.log.empty() || files::write_new_synced(*tmp + "/kernel.log", kernel.log, &error)) &&
                 files::write_new_synced(*tmp + "/kernel.meta", make_meta(kernel), &error) &&
                 files::fsync_dir(*tmp, &error);
  if (!written) {
    files::remove_tree(*tmp);
    return warn_once(root_, not_usable + error + memory_only);
  }

  const std::string target = entry_dir(kernel.name, kernel.digest);
  for (int attempt = 0; attempt < 4; ++attempt) {
    if (std::rename(tmp->c_str(), target.c_str()) == 0) {
      files::fsync_dir(root_ + "/cache", nullptr);
      return;
    }
    if (errno != EEXIST && errno != ENOTEMPTY) {
      error = "cannot rename " + *tmp + " to " + target + ": " + files::errno_string(errno);
      break;
    }
    // Another entry is there: another process published the same kernel first (keep theirs), or it is damaged.
    std::string why;
    if (inspect(target, nullptr, &why) == EntryState::kIntact) {
      files::remove_tree(*tmp);
      return;
    }
    // Move the damaged entry out of the way (rename onto an empty directory replaces it), then retry.
    if (auto trash = files::make_temp_dir(tmp_root, "damaged.", nullptr)) {
      if (std::rename(target.c_str(), trash->c_str()) != 0 && errno != ENOENT) {
        error = "cannot move the damaged entry " + target + " away: " + files::errno_string(errno);
        files::remove_tree(*trash);
        break;
      }
      files::remove_tree(*trash);
    }
  }
  files::remove_tree(*tmp);
  if (!error.empty()) warn_once(root_ + "\n" + target, "cannot publish " + target + " (" + error + memory_only);
}

}  // namespace jdg::jit
