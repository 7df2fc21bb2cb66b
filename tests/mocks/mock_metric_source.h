#ifndef BSW_TESTS_MOCKS_MOCK_METRIC_SOURCE_H_
#define BSW_TESTS_MOCKS_MOCK_METRIC_SOURCE_H_

#include <gmock/gmock.h>

#include "operator/ports/metric_source.h"

namespace bsw {

class MockMetricSource : public MetricSource {
 public:
  MOCK_METHOD(StatusOr<TrialMetrics>, Read,
              (const std::string& sweep, const SegmentStatus& segment,
               const std::string& objective_metric),
              (override));
};

}  // namespace bsw

#endif  // BSW_TESTS_MOCKS_MOCK_METRIC_SOURCE_H_
