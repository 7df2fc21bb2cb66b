#include "operator/controller/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace bsw {

StatusOr<Journal> Journal::Open(const std::string& dir) {
  std::string path = dir + "/journal.jsonl";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return UnavailableError(path + ": cannot open (" + std::strerror(errno) + ")");
  // Cut a record torn by a crash, so that new records start on a line of their own.
  off_t size = ::lseek(fd, 0, SEEK_END);
  off_t keep = size;
  char c = '\n';
  while (keep > 0 && ::pread(fd, &c, 1, keep - 1) == 1 && c != '\n') --keep;
  if (keep != size && ::ftruncate(fd, keep) != 0) {
    ::close(fd);
    return UnavailableError(path + ": cannot repair a torn record (" + std::strerror(errno) + ")");
  }
  return Journal(path, fd);
}

Journal::Journal(Journal&& other) noexcept : path_(std::move(other.path_)), fd_(other.fd_) {
  other.fd_ = -1;
}

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

StatusOr<std::vector<Event>> Journal::ReadAll() { return Read(path_); }

StatusOr<std::vector<Event>> Journal::Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return UnavailableError(path + ": cannot read (" + std::strerror(errno) + ")");
  std::vector<Event> events;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    // A record is complete only with its newline; the last line without one was torn by a crash.
    if (in.eof()) break;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
      return InvalidArgumentError(path + ":" + std::to_string(number) + ": not a JSON record");
    }
    StatusOr<Event> e = EventFromJson(j);
    if (!e.ok())
      return InvalidArgumentError(path + ":" + std::to_string(number) + ": " +
                                  e.status().message());
    events.push_back(std::move(*e));
  }
  return events;
}

Status Journal::Append(const std::vector<Event>& events) {
  if (events.empty()) return OkStatus();
  std::string text;
  for (const Event& e : events) text += EventToJson(e).dump() + "\n";
  size_t written = 0;
  while (written < text.size()) {
    ssize_t n = ::write(fd_, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return UnavailableError(path_ + ": write failed (" + std::strerror(errno) + ")");
    written += static_cast<size_t>(n);
  }
  if (::fdatasync(fd_) != 0) {
    return UnavailableError(path_ + ": sync failed (" + std::strerror(errno) + ")");
  }
  return OkStatus();
}

}  // namespace bsw
