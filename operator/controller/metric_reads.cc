#include "operator/controller/metric_reads.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace bsw {

MetricReader::MetricReader(MetricSource* source, const Clock* clock, MetricReadOptions options)
    : source_(source), clock_(*clock), options_(options) {}

MetricReader::~MetricReader() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    jobs_.clear();
  }
  work_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void MetricReader::Work() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    ++idle_workers_;
    work_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
    --idle_workers_;
    if (stopping_) return;
    Job job = std::move(jobs_.front());
    jobs_.pop_front();
    reads_[job.key].started = true;
    lock.unlock();
    const double started = clock_.MonotonicSeconds();
    StatusOr<TrialMetrics> result = source_->Read(job.sweep, job.segment, job.objective_metric);
    const double took_seconds = clock_.MonotonicSeconds() - started;
    lock.lock();
    Read& read = reads_[job.key];
    read.result = std::move(result);
    read.took_seconds = took_seconds;
    done_.notify_all();
  }
}

void MetricReader::ForgetAllBut(const std::vector<Key>& keys) {
  const std::set<Key> wanted(keys.begin(), keys.end());
  std::erase_if(jobs_, [&](const Job& job) { return !wanted.contains(job.key); });
  std::erase_if(standing_, [&](const auto& entry) { return !wanted.contains(entry.first); });
  std::erase_if(last_failure_, [&](const auto& entry) { return !wanted.contains(entry.first); });
  std::erase_if(refusals_, [&](const auto& entry) { return !wanted.contains(entry.first); });
  for (auto it = reads_.begin(); it != reads_.end();) {
    const Read& read = it->second;
    bool unwanted = !wanted.contains(it->first) && (read.result.has_value() || !read.started);
    it = unwanted ? reads_.erase(it) : std::next(it);
  }
}

void MetricReader::NoteResult(const Key& key, const Status& status) {
  if (status.ok()) {
    last_failure_.erase(key);
    refusals_.erase(key);
    return;
  }
  last_failure_[key] = status.message();
  if (!AnswerRefused(status)) return;
  Refusal& refusal = refusals_[key];
  const double backoff = std::min(options_.max_refused_backoff_seconds,
                                  options_.refused_backoff_seconds * std::pow(2, refusal.in_a_row));
  ++refusal.in_a_row;
  refusal.until = clock_.MonotonicSeconds() + backoff;
}

std::vector<StatusOr<TrialMetrics>> MetricReader::ReadAll(
    const std::string& sweep, const std::vector<SegmentStatus>& segments,
    const std::string& objective_metric) {
  std::vector<Key> keys;
  keys.reserve(segments.size());
  for (const SegmentStatus& s : segments) keys.emplace_back(s.trial, s.segment);

  std::unique_lock<std::mutex> lock(mu_);
  ForgetAllBut(keys);
  // A segment whose read is queued, in flight or ended unclaimed is not read again. Of the reads
  // started here, a slow segment's are not waited for.
  std::set<Key> proven_reads;
  std::set<Key> new_reads;
  const double now = clock_.MonotonicSeconds();
  std::set<Key> refused;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (auto r = refusals_.find(keys[i]); r != refusals_.end() && now < r->second.until) {
      if (!reads_.contains(keys[i])) refused.insert(keys[i]);
      continue;
    }
    if (!reads_.try_emplace(keys[i]).second) continue;
    jobs_.push_back(Job{keys[i], sweep, segments[i], objective_metric});
    auto standing = standing_.find(keys[i]);
    if (standing == standing_.end()) {
      new_reads.insert(keys[i]);
    } else if (standing->second == Standing::kProven) {
      proven_reads.insert(keys[i]);
    }
  }
  const size_t busy_workers = workers_.size() - static_cast<size_t>(idle_workers_);
  const size_t wanted_workers = std::min(static_cast<size_t>(std::max(1, options_.max_in_flight)),
                                         busy_workers + jobs_.size());
  while (workers_.size() < wanted_workers) workers_.emplace_back([this] { Work(); });
  work_.notify_all();

  auto answered = [&](const std::set<Key>& waited) {
    return std::all_of(waited.begin(), waited.end(),
                       [&](const Key& key) { return reads_.at(key).result.has_value(); });
  };
  const double start = clock_.MonotonicSeconds();
  clock_.WaitUntil(done_, lock, start + options_.first_read_deadline_seconds,
                   [&] { return answered(proven_reads) && answered(new_reads); });
  clock_.WaitUntil(done_, lock, start + options_.deadline_seconds,
                   [&] { return answered(proven_reads); });

  std::vector<StatusOr<TrialMetrics>> results;
  results.reserve(keys.size());
  for (const Key& key : keys) {
    std::ostringstream message;
    message << "reading the metrics of " << key.first << " segment " << key.second << ": ";
    if (refused.contains(key)) {
      message << "not read again yet, after its endpoint's answer was refused: "
              << last_failure_[key];
      results.push_back(UnavailableError(message.str()));
      continue;
    }
    auto it = reads_.find(key);
    if (it->second.result) {
      // Proven only by a value in time: an endpoint that fails fast (a hostile body refused at a
      // cap, a trainer still starting) is not waited for, or every pass would wait on it.
      const bool in_time = it->second.took_seconds <= options_.deadline_seconds;
      standing_[key] = in_time && it->second.result->ok() ? Standing::kProven : Standing::kSlow;
      NoteResult(key, it->second.result->status());
      results.push_back(std::move(*it->second.result));
      reads_.erase(it);
      continue;
    }
    if (proven_reads.contains(key) || new_reads.contains(key)) standing_[key] = Standing::kSlow;
    if (proven_reads.contains(key)) {
      message << "no answer within " << options_.deadline_seconds << " s";
    } else if (new_reads.contains(key)) {
      message << "no answer within " << options_.first_read_deadline_seconds << " s";
    } else {
      message << "no answer yet from an endpoint that was slow before";
    }
    if (auto last = last_failure_.find(key); last != last_failure_.end()) {
      message << " (its last read failed: " << last->second << ")";
    }
    results.push_back(UnavailableError(message.str()));
  }
  return results;
}

}  // namespace bsw
