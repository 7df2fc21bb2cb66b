#ifndef BSW_TESTS_MOCKS_MOCK_TRIAL_BACKEND_H_
#define BSW_TESTS_MOCKS_MOCK_TRIAL_BACKEND_H_

#include <gmock/gmock.h>

#include "operator/ports/trial_backend.h"

namespace bsw {

class MockTrialBackend : public TrialBackend {
 public:
  MOCK_METHOD(Status, Start, (const SegmentSpec& spec), (override));
  MOCK_METHOD(Status, Stop, (const std::string& trial, int segment), (override));
  MOCK_METHOD(Status, SetDeadline,
              (const std::string& trial, int segment, double deadline_unix_seconds), (override));
  MOCK_METHOD(StatusOr<std::vector<SegmentStatus>>, List, (), (override));
  MOCK_METHOD(Status, ReleaseCharge, (const std::string& trial, int segment), (override));
};

}  // namespace bsw

#endif  // BSW_TESTS_MOCKS_MOCK_TRIAL_BACKEND_H_
