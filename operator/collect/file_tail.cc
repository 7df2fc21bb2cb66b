#include "operator/collect/file_tail.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace bsw::collect {

FileTail::FileTail(std::string trial_dir, std::string relative_path)
    : trial_dir_(std::move(trial_dir)), relative_path_(std::move(relative_path)) {}

FileTail::~FileTail() {
  if (fd_ >= 0) close(fd_);
}

std::string FileTail::Open() {
  std::string full = trial_dir_ + "/" + relative_path_;
  auto refuse = [this, &full](const std::string& why) {
    refused_ = true;
    return "--path=" + relative_path_ + ": " + full + " " + why + "; its values are not collected";
  };
  char real[PATH_MAX];
  if (realpath(full.c_str(), real) == nullptr) {
    if (errno == ENOENT) return "";
    return refuse(std::string("cannot be resolved: ") + std::strerror(errno));
  }
  std::string inside = trial_dir_ == "/" ? "/" : trial_dir_ + "/";
  if (!std::string_view(real).starts_with(inside)) {
    return refuse(std::string("resolves to ") + real + ", outside " + trial_dir_);
  }
  // O_NOFOLLOW: a final component swapped for a link since realpath is refused, not followed;
  // O_NONBLOCK: a FIFO does not hang the collector.
  int fd = open(real, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  struct stat info {};
  if (fd < 0 || fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    std::string why = fd < 0 ? std::string("cannot be opened: ") + std::strerror(errno)
                             : std::string("is not a regular file");
    if (fd >= 0) close(fd);
    return refuse(why);
  }
  fd_ = fd;
  return "";
}

FileTail::Read FileTail::ReadAppended(size_t max_bytes) {
  Read read;
  if (refused_) return read;
  if (fd_ < 0) read.error = Open();
  if (fd_ < 0) return read;
  struct stat info {};
  if (fstat(fd_, &info) == 0 && info.st_size < offset_) {
    offset_ = 0;
    read.started_over = true;
  }
  read.bytes.resize(max_bytes);
  size_t filled = 0;
  while (filled < max_bytes) {
    ssize_t got = pread(fd_, read.bytes.data() + filled, max_bytes - filled, offset_);
    if (got <= 0) break;
    filled += static_cast<size_t>(got);
    offset_ += got;
  }
  read.bytes.resize(filled);
  return read;
}

}  // namespace bsw::collect
