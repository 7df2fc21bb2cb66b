#ifndef BSW_CONTROLLER_METRIC_READS_H_
#define BSW_CONTROLLER_METRIC_READS_H_

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/status.h"
#include "operator/core/read_error.h"
#include "operator/core/trial_metrics.h"
#include "operator/ports/clock.h"
#include "operator/ports/metric_source.h"
#include "operator/ports/trial_backend.h"

namespace bsw {

struct MetricReadOptions {
  // Reads in flight at once, each on a worker thread of the reader's own, started as needed.
  int max_in_flight = 8;
  // How long ReadAll waits for the reads it starts, on the reader's clock: a proven segment's (its
  // last read gave metrics within `deadline_seconds`) for up to `deadline_seconds`, a segment's
  // first read for up to `first_read_deadline_seconds` (a trial that just started has no rung value
  // yet), and a slow segment's (its last read took longer, failed, or is still running) not at all.
  // A read that answers later is not lost: the next ReadAll hands it out. The source's own timeout
  // bounds how long a hung read holds a worker.
  double deadline_seconds = 0.25;
  double first_read_deadline_seconds = 0.02;
  // A segment whose endpoint answered with what a read refuses (a body over a cap, malformed
  // text: any error but Unavailable) is not read again for `refused_backoff_seconds`, doubling
  // with each refusal in a row up to `max_refused_backoff_seconds`: such an answer does not heal
  // between passes, and each read of it costs the operator what the caps allow (inflating 16 MiB
  // of a gzip bomb). Prometheus reads such a target once a scrape interval.
  double refused_backoff_seconds = 1;
  double max_refused_backoff_seconds = 16;
};

// Reads running segments' metrics side by side, at most `max_in_flight` at once, and waits for
// them up to one deadline: a hung endpoint costs a pass one deadline, not one per trial, and the
// other trials' metrics are still read.
//
// A read still running at its deadline fails Unavailable for that pass (Unknown to the planner).
// It is not started again while it runs, so a hung endpoint holds one worker at most; when it
// ends, its result is handed to the next ReadAll that asks for the same segment. The segment is
// slow from then on: its reads go on, but no pass waits for them until one answers within the
// deadline. A hung endpoint thus costs one pass one deadline (or a first-read deadline, when it
// hung from the start), once.
// REQUIRES: the source's Read may be called from several threads at once. Thread-compatible.
class MetricReader {
 public:
  // `source` and `clock` must outlive the reader.
  MetricReader(MetricSource* source, const Clock* clock, MetricReadOptions options = {});
  ~MetricReader();  // Waits for the reads in flight, each bounded by the source's own timeout.
  MetricReader(const MetricReader&) = delete;
  MetricReader& operator=(const MetricReader&) = delete;

  // Reads each segment's `objective_metric` and progress series; one result per segment, in
  // order. Returns once every read it waits for has answered or the deadline has passed.
  // REQUIRES: no segment twice.
  std::vector<StatusOr<TrialMetrics>> ReadAll(const std::string& sweep,
                                              const std::vector<SegmentStatus>& segments,
                                              const std::string& objective_metric);

 private:
  using Key = std::pair<std::string, int>;  // trial (or probe run), segment
  struct Read {
    bool started = false;  // taken by a worker
    std::optional<StatusOr<TrialMetrics>> result;
    double took_seconds = 0;  // once it has a result
  };
  struct Job {
    Key key;
    std::string sweep;
    SegmentStatus segment;
    std::string objective_metric;
  };

  void Work();
  // Drops what concerns only segments not asked for this time: their ended reads, reads queued
  // for them that no worker took, and their standing. REQUIRES: mu_ held.
  // Keeps the segment's last failure and, for a refused answer, when it may be read again.
  void NoteResult(const Key& key, const Status& status);
  void ForgetAllBut(const std::vector<Key>& keys);

  MetricSource* const source_;
  const Clock& clock_;
  const MetricReadOptions options_;

  std::mutex mu_;
  std::condition_variable work_;  // a job was queued, or stopping_
  std::condition_variable done_;  // a read ended
  std::map<Key, Read> reads_;     // queued, in flight, or ended and not yet handed out
  // How the segment's last read went; absent before its first read has answered or missed.
  enum class Standing { kProven, kSlow };
  std::map<Key, Standing> standing_;
  // The error of each segment's last read that answered and failed, until one gives metrics: a
  // pass that cannot wait for the segment says it with its "no answer" (a hostile endpoint's
  // cap is not lost behind the wait).
  std::map<Key, std::string> last_failure_;
  struct Refusal {
    int in_a_row = 0;
    double until = 0;  // monotonic seconds: no read starts before
  };
  std::map<Key, Refusal> refusals_;
  std::deque<Job> jobs_;
  int idle_workers_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace bsw

#endif  // BSW_CONTROLLER_METRIC_READS_H_
