#ifndef BSW_TESTS_UNIT_CONTROLLER_RUNNING_SEGMENT_H_
#define BSW_TESTS_UNIT_CONTROLLER_RUNNING_SEGMENT_H_

#include "operator/core/segment.h"

namespace bsw::testing {

// What a backend lists for the segment it started from `spec` at `now`: running since then.
inline SegmentStatus RunningSegment(const SegmentSpec& spec, double now) {
  SegmentStatus st;
  st.trial = spec.trial;
  st.segment = spec.segment;
  st.state = SegmentState::kRunning;
  st.started_unix_seconds = now;
  st.devices = spec.devices;
  st.deadline_unix_seconds = spec.deadline_unix_seconds;
  return st;
}

}  // namespace bsw::testing

#endif  // BSW_TESTS_UNIT_CONTROLLER_RUNNING_SEGMENT_H_
