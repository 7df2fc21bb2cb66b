#include "operator/core/rfc3339.h"

#include <gtest/gtest.h>

namespace bsw {
namespace {

TEST(Rfc3339, FormatsUnixSecondsInUtcDroppingTheFraction) {
  EXPECT_EQ(Rfc3339(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(Rfc3339(1714564800.75), "2024-05-01T12:00:00Z");
  EXPECT_EQ(Rfc3339(1709164800), "2024-02-29T00:00:00Z");
}

TEST(Rfc3339, WithMicrosecondsWritesMicroTime) {
  EXPECT_EQ(Rfc3339(1714564800.123456, true), "2024-05-01T12:00:00.123456Z");
  EXPECT_EQ(Rfc3339(1714564800, true), "2024-05-01T12:00:00.000000Z");
}

TEST(Rfc3339, TimesBeforeTheEpochCountBackwards) {
  EXPECT_EQ(Rfc3339(-0.5, true), "1969-12-31T23:59:59.500000Z");
  EXPECT_EQ(Rfc3339(-0.5), "1969-12-31T23:59:59Z");
}

TEST(ParseRfc3339, ReadsTheApiServersTimestampsBack) {
  EXPECT_EQ(ParseRfc3339("2024-05-01T12:00:00Z"), 1714564800);
  EXPECT_EQ(ParseRfc3339(Rfc3339(1709164800)), 1709164800);
  EXPECT_EQ(ParseRfc3339("2024-05-01T12:00:00+02:00"), std::nullopt);
  EXPECT_EQ(ParseRfc3339("2024-05-01T12:00:00"), std::nullopt);
  EXPECT_EQ(ParseRfc3339("yesterday"), std::nullopt);
}

}  // namespace
}  // namespace bsw
