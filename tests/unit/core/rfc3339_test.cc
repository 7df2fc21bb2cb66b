#include "operator/core/rfc3339.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>

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

struct ParseRow {
  std::string name;
  std::string text;
  std::optional<double> unix_seconds;  // nullopt: refused
};

// What the API server writes (metav1.Time, MicroTime, offsets) reads back; anything else is
// refused rather than read as some other time.
const ParseRow kParseRows[] = {
    {"the epoch", "1970-01-01T00:00:00Z", 0.0},
    {"metav1.Time", "2024-05-01T12:00:00Z", 1714564800.0},
    {"metav1.MicroTime", "2024-05-01T12:00:00.123456Z", 1714564800.123456},
    {"a leap day", "2024-02-29T00:00:00Z", 1709164800.0},
    {"a positive offset", "2024-05-01T14:00:00+02:00", 1714564800.0},
    {"a negative offset", "2024-05-01T11:30:00-00:30", 1714564800.0},
    {"lower case t and z", "2024-05-01t12:00:00z", 1714564800.0},
    {"a space for the T", "2024-05-01 12:00:00Z", 1714564800.0},
    {"a leap second", "2016-12-31T23:59:60Z", 1483228800.0},
    {"an offset with a fraction", "2024-05-01T14:00:00.25+02:00", 1714564800.25},
    {"empty", "", std::nullopt},
    {"not a time", "yesterday", std::nullopt},
    {"no seconds", "2024-05-01 12:00", std::nullopt},
    {"no zone", "2024-05-01T12:00:00", std::nullopt},
    {"a dot without digits", "2024-05-01T12:00:00.Z", std::nullopt},
    {"no leap day in 2023", "2023-02-29T00:00:00Z", std::nullopt},
    {"month 13", "2024-13-01T00:00:00Z", std::nullopt},
    {"hour 24", "2024-05-01T24:00:00Z", std::nullopt},
    {"something after the Z", "2024-05-01T12:00:00Zjunk", std::nullopt},
    {"something before the Z", "2024-05-01T12:00:00junkZ", std::nullopt},
    {"a signed field", "2024-05-+1T12:00:00Z", std::nullopt},
    {"an offset without a colon", "2024-05-01T12:00:00+0200", std::nullopt},
    {"an offset with a letter", "2024-05-01T12:00:00+0a:00", std::nullopt},
};

TEST(ParseRfc3339, ReadsWhatTheApiServerWritesAndRefusesTheRest) {
  for (const ParseRow& row : kParseRows) {
    std::optional<double> parsed = ParseRfc3339(row.text);
    if (!row.unix_seconds) {
      EXPECT_EQ(parsed, std::nullopt) << row.name;
    } else {
      ASSERT_TRUE(parsed) << row.name;
      EXPECT_NEAR(*parsed, *row.unix_seconds, 1e-6) << row.name;
    }
  }
}

TEST(ParseRfc3339, ReadsBackWhatRfc3339Writes) {
  for (double unix_seconds : {0.0, 1709164800.0, 1714564800.5, -0.5}) {
    EXPECT_EQ(ParseRfc3339(Rfc3339(unix_seconds)), std::floor(unix_seconds)) << unix_seconds;
    EXPECT_NEAR(*ParseRfc3339(Rfc3339(unix_seconds, true)), unix_seconds, 1e-6) << unix_seconds;
  }
}

}  // namespace
}  // namespace bsw
