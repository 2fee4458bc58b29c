// Small POSIX file helpers for the JIT (no exceptions: each returns false / nullopt and fills `error`).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace jdg::files {

std::optional<std::string> read(const std::string& path, std::string* error = nullptr);

// Creates `path` (which must not exist), writes `data`, fsyncs and closes it.
bool write_new_synced(const std::string& path, const std::string& data, std::string* error);

bool fsync_dir(const std::string& path, std::string* error);

// mkdir -p. Fails with a reason when a component is not a directory or cannot be created.
bool make_dirs(const std::string& path, std::string* error);

// Creates a fresh directory `<parent>/<prefix>XXXXXX` and returns its path.
std::optional<std::string> make_temp_dir(const std::string& parent, const std::string& prefix, std::string* error);

// rm -r, best effort.
void remove_tree(const std::string& path);

bool is_dir(const std::string& path);
bool is_executable_file(const std::string& path);

// Regular files below `root`, as paths relative to it, sorted.
std::vector<std::string> list_files(const std::string& root);

// strerror(errno) as a string.
std::string errno_string(int err);

}  // namespace jdg::files
