#include "files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace jdg::files {
namespace fs = std::filesystem;

std::string errno_string(int err) { return std::strerror(err); }

std::optional<std::string> read(const std::string& path, std::string* error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (error) *error = "cannot open " + path + ": " + errno_string(errno);
    return std::nullopt;
  }
  std::string out;
  char buffer[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      if (error) *error = "cannot read " + path + ": " + errno_string(errno);
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    out.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

bool write_new_synced(const std::string& path, const std::string& data, std::string* error) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (error) *error = "cannot create " + path + ": " + errno_string(errno);
    return false;
  }
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (error) *error = "cannot write " + path + ": " + errno_string(errno);
      ::close(fd);
      return false;
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    if (error) *error = "cannot fsync " + path + ": " + errno_string(errno);
    ::close(fd);
    return false;
  }
  if (::close(fd) != 0) {
    if (error) *error = "cannot close " + path + ": " + errno_string(errno);
    return false;
  }
  return true;
}

bool fsync_dir(const std::string& path, std::string* error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    if (error) *error = "cannot open directory " + path + ": " + errno_string(errno);
    return false;
  }
  bool ok = ::fsync(fd) == 0;
  if (!ok && error) *error = "cannot fsync directory " + path + ": " + errno_string(errno);
  ::close(fd);
  return ok;
}

bool make_dirs(const std::string& path, std::string* error) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) {
    if (error) *error = "cannot create directory " + path + ": " + ec.message();
    return false;
  }
  if (!is_dir(path)) {
    if (error) *error = path + " is not a directory";
    return false;
  }
  return true;
}

std::optional<std::string> make_temp_dir(const std::string& parent, const std::string& prefix, std::string* error) {
  std::string templ = parent + "/" + prefix + "XXXXXX";
  std::vector<char> buffer(templ.begin(), templ.end());
  buffer.push_back('\0');
  if (::mkdtemp(buffer.data()) == nullptr) {
    if (error) *error = "cannot create a directory in " + parent + ": " + errno_string(errno);
    return std::nullopt;
  }
  return std::string(buffer.data());
}

void remove_tree(const std::string& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
}

bool is_dir(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_executable_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::vector<std::string> list_files(const std::string& root) {
  std::vector<std::string> out;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    std::error_code type_ec;
    if (it->is_regular_file(type_ec)) out.push_back(fs::relative(it->path(), root, type_ec).generic_string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace jdg::files
