#ifndef BSW_OPERATOR_COLLECT_COLLECTOR_H_
#define BSW_OPERATOR_COLLECT_COLLECTOR_H_

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "operator/collect/child_process.h"
#include "operator/collect/file_tail.h"
#include "operator/collect/line_parser.h"
#include "operator/collect/line_splitter.h"
#include "operator/collect/metrics_server.h"
#include "operator/collect/options.h"

namespace bsw::collect {

// Runs the command and collects its values: passes its output through, forwards SIGTERM and
// SIGINT to its group, stops it at BUDGETSWEEP_UNTIL, and after it ends serves the last values
// until they were scraped (or the grace ran out).
class Collector {
 public:
  using Clock = std::chrono::steady_clock;

  // `server` may be null (serve nothing); `tail` is non-null exactly for --source=file.
  Collector(CollectOptions options, CollectEnvironment env, LineParser parser,
            std::unique_ptr<MetricsServer> server, std::unique_ptr<FileTail> tail);

  // Returns the code to exit with: 0 when the command was stopped at BUDGETSWEEP_UNTIL, else the
  // command's exit code or 128 + its signal; kExitInternal when it could not be started.
  [[nodiscard]] int Run();

 private:
  void Step();
  void ReadStream(int* fd, int to_fd, LineSplitter& splitter);
  void DrainStreams();
  void TailFile(Clock::time_point now, bool to_end);
  void HandleSignals();
  void Reap(Clock::time_point now);
  void StopAtUntil(Clock::time_point now);
  void Parse(std::string_view line);
  void PublishIfChanged();
  [[nodiscard]] bool Done(Clock::time_point now) const;
  // Says what went unread at exit: lines over the limit, and an objective never read (so that a
  // trial that ends without values shows why in its output).
  void NoteWhatWasNotRead() const;

  CollectOptions options_;
  CollectEnvironment env_;
  LineParser parser_;
  std::unique_ptr<MetricsServer> server_;
  std::unique_ptr<FileTail> tail_;
  LineSplitter stdout_lines_;
  LineSplitter stderr_lines_;
  LineSplitter file_lines_;
  Child child_;
  bool running_ = false;
  int wait_status_ = 0;
  Clock::time_point exited_at_;
  bool signaled_after_exit_ = false;
  bool reached_until_ = false;
  std::optional<Clock::time_point> kill_at_;
  Clock::time_point next_tail_at_;
  size_t published_values_ = 0;
  double published_resource_ = -1;
  bool noted_dropped_ = false;
};

}  // namespace bsw::collect

#endif  // BSW_OPERATOR_COLLECT_COLLECTOR_H_
