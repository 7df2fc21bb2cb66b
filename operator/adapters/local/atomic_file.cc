#include "operator/adapters/local/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace bsw::local {
namespace {

std::string ErrnoText(const std::string& what, const std::filesystem::path& path) {
  return what + " " + path.string() + ": " + std::strerror(errno);
}

// Writes `content` to a temp file beside `path`, unique to this process and call, and fsyncs it.
StatusOr<std::filesystem::path> WriteTempFile(const std::filesystem::path& path,
                                              std::string_view content) {
  static std::atomic<unsigned> counter{0};
  std::filesystem::path temp = path;
  temp += ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
  int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return InternalError(ErrnoText("cannot create", temp));
  while (!content.empty()) {
    ssize_t n = write(fd, content.data(), content.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Status error = InternalError(ErrnoText("cannot write", temp));
      close(fd);
      unlink(temp.c_str());
      return error;
    }
    content.remove_prefix(static_cast<size_t>(n));
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    Status error = InternalError(ErrnoText("cannot sync", temp));
    unlink(temp.c_str());
    return error;
  }
  return temp;
}

}  // namespace

Status WriteFileAtomically(const std::filesystem::path& path, std::string_view content) {
  StatusOr<std::filesystem::path> temp = WriteTempFile(path, content);
  if (!temp.ok()) return temp.status();
  if (rename(temp->c_str(), path.c_str()) != 0) {
    Status error = InternalError(ErrnoText("cannot rename onto", path));
    unlink(temp->c_str());
    return error;
  }
  return OkStatus();
}

Status CreateFileExclusively(const std::filesystem::path& path, std::string_view content) {
  StatusOr<std::filesystem::path> temp = WriteTempFile(path, content);
  if (!temp.ok()) return temp.status();
  // link() never replaces an existing file, unlike rename(): that makes the claim exclusive.
  int rc = link(temp->c_str(), path.c_str());
  int link_errno = errno;
  unlink(temp->c_str());
  if (rc == 0) return OkStatus();
  if (link_errno == EEXIST) {
    return Status(StatusCode::kAlreadyExists, path.string() + " already exists");
  }
  errno = link_errno;
  return InternalError(ErrnoText("cannot create", path));
}

StatusOr<std::string> ReadFile(const std::filesystem::path& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return NotFoundError(path.string() + " does not exist");
    return InternalError(ErrnoText("cannot open", path));
  }
  std::string content;
  char buffer[4096];
  while (true) {
    ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Status error = InternalError(ErrnoText("cannot read", path));
      close(fd);
      return error;
    }
    if (n == 0) break;
    content.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  return content;
}

bool IsDiskFull(const Status& status) {
  return !status.ok() && status.message().find(std::strerror(ENOSPC)) != std::string::npos;
}

}  // namespace bsw::local
