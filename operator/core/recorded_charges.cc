#include "operator/core/recorded_charges.h"

namespace bsw {

std::vector<SegmentStatus> RecordedCharges(const SweepModel& model,
                                           const std::set<std::pair<std::string, int>>& listed) {
  std::vector<SegmentStatus> segments;
  for (int64_t i = 0; i < model.trial_count(); ++i) {
    const Trial& t = model.trial(i);
    for (const SegmentRecord& seg : t.segments) {
      if (!seg.ended || seg.started <= 0 || listed.contains({t.name, seg.number})) continue;
      SegmentStatus recorded;
      recorded.trial = t.name;
      recorded.segment = seg.number;
      recorded.state = SegmentState::kSucceeded;
      recorded.started_unix_seconds = seg.started;
      recorded.finished_unix_seconds = seg.finished;
      recorded.devices = seg.devices;
      segments.push_back(std::move(recorded));
    }
  }
  for (const ProbeRun& p : model.probes()) {
    if (!p.ended || p.charged_device_seconds <= 0 || listed.contains({p.name, 0})) continue;
    SegmentStatus recorded;
    recorded.trial = p.name;
    recorded.state = SegmentState::kSucceeded;
    recorded.started_unix_seconds = p.launched_at;
    recorded.finished_unix_seconds = p.launched_at + p.charged_device_seconds;
    recorded.devices = 1;
    segments.push_back(std::move(recorded));
  }
  return segments;
}

}  // namespace bsw
