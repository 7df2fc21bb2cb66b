#ifndef BSW_CONTROLLER_JOURNAL_H_
#define BSW_CONTROLLER_JOURNAL_H_

#include <string>
#include <vector>

#include "base/status.h"
#include "operator/core/sweep_model.h"
#include "operator/ports/event_log.h"

namespace bsw {

// The write-ahead record of a local sweep: one JSON event per line in `<dir>/journal.jsonl`.
// Events are made durable (fsync) before the actions they stand for are carried out, so a sweep
// killed at any moment (even kill -9) resumes from the journal without losing or repeating work.
class Journal final : public EventLog {
 public:
  // Opens (creating if needed) the journal in `dir`.
  static StatusOr<Journal> Open(const std::string& dir);

  Journal(Journal&& other) noexcept;
  Journal& operator=(Journal&&) = delete;
  ~Journal();

  // Every event recorded so far. A torn last line (a crash mid-write) is dropped; corruption
  // anywhere else is an error that names the file and line.
  StatusOr<std::vector<Event>> ReadAll() override;
  // The events of the journal file at `path`, as ReadAll reads them, without opening it for
  // writing (a reader beside a running sweep repairs nothing).
  static StatusOr<std::vector<Event>> Read(const std::string& path);

  // Appends `events` and syncs them to disk.
  Status Append(const std::vector<Event>& events) override;

  std::string Describe() const override { return path_; }
  const std::string& path() const { return path_; }

 private:
  Journal(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_ = -1;
};

}  // namespace bsw

#endif  // BSW_CONTROLLER_JOURNAL_H_
