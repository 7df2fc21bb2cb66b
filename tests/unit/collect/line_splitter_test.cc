#include "operator/collect/line_splitter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace bsw::collect {
namespace {

using ::testing::ElementsAre;

class LineSplitterTest : public ::testing::Test {
 protected:
  LineSplitter::OnLine Collect() {
    return [this](std::string_view line) { lines_.emplace_back(line); };
  }
  std::vector<std::string> lines_;
};

TEST_F(LineSplitterTest, JoinsLinesSplitAcrossChunks) {
  LineSplitter splitter(100);
  splitter.Feed("a=1\nb=", Collect());
  splitter.Feed("2\n\nc", Collect());
  EXPECT_THAT(lines_, ElementsAre("a=1", "b=2", ""));
  splitter.Finish(Collect());
  EXPECT_THAT(lines_, ElementsAre("a=1", "b=2", "", "c"));
}

TEST_F(LineSplitterTest, SkipsAndCountsALineOverTheLimitUpToItsNewline) {
  LineSplitter splitter(4);
  splitter.Feed("abcd\nabc", Collect());
  splitter.Feed("de=1", Collect());
  splitter.Feed("more\nok\n", Collect());
  EXPECT_THAT(lines_, ElementsAre("abcd", "ok"));
  EXPECT_EQ(splitter.lines_too_long(), 1u);
}

TEST_F(LineSplitterTest, ResetForgetsTheUnfinishedLine) {
  LineSplitter splitter(100);
  splitter.Feed("half", Collect());
  splitter.Reset();
  splitter.Feed("whole\n", Collect());
  EXPECT_THAT(lines_, ElementsAre("whole"));
}

}  // namespace
}  // namespace bsw::collect
