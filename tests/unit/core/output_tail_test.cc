#include "operator/core/output_tail.h"

#include <gtest/gtest.h>

#include <string>

namespace bsw {
namespace {

TEST(OutputTail, KeepsTheLastLinesWithoutBlankOnesOrTheTrailingNewline) {
  EXPECT_EQ(OutputTail("loading\n\nepoch 1\n  \nerror: --dataset: no such file\n\n"),
            "loading\nepoch 1\nerror: --dataset: no such file");
  EXPECT_EQ(OutputTail("one line, no newline"), "one line, no newline");
}

TEST(OutputTail, KeepsAtMostFiveLines) {
  std::string output;
  for (int i = 1; i <= 8; ++i) output += "line " + std::to_string(i) + "\n";
  EXPECT_EQ(OutputTail(output), "line 4\nline 5\nline 6\nline 7\nline 8");
}

TEST(OutputTail, KeepsAtMostItsByteLimitAndTheEndOfACutLine) {
  std::string last = "Traceback ... " + std::string(2000, 'x') + " the reason";
  std::string tail = OutputTail("first\n" + last + "\n");
  EXPECT_EQ(tail.size(), kOutputTailMaxBytes);
  EXPECT_TRUE(tail.ends_with("x the reason")) << tail.substr(tail.size() - 20);
  EXPECT_EQ(tail.find('\n'), std::string::npos) << "the earlier line no longer fits";
}

TEST(OutputTail, ReplacesInvalidUtf8AndDropsControlCharacters) {
  EXPECT_EQ(OutputTail("bad \xff\xfe byte\n"), "bad ?? byte");
  EXPECT_EQ(OutputTail("truncated \xe2\x82\n"), "truncated ??");
  EXPECT_EQ(OutputTail("overlong \xc0\xaf\n"), "overlong ??");
  EXPECT_EQ(OutputTail("\x1b[31mred\x1b[0m\tdone\r\n"), "[31mred[0m\tdone");
  EXPECT_EQ(OutputTail("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82\n"),
            "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82");
}

TEST(OutputTail, CutsOnACharacterBoundary) {
  // 3-byte characters: the byte limit falls inside one, which goes whole.
  std::string line;
  for (size_t i = 0; i < kOutputTailMaxBytes; ++i) line += "\xe2\x82\xac";
  std::string tail = OutputTail(line);
  EXPECT_EQ(tail.size(), kOutputTailMaxBytes - 1);
  EXPECT_EQ(tail.substr(0, 3), "\xe2\x82\xac");
  EXPECT_EQ(OutputTail(tail), tail) << "the tail is valid UTF-8";
}

TEST(OutputTail, IsEmptyWhenNothingPrintableWasWritten) {
  EXPECT_EQ(OutputTail(""), "");
  EXPECT_EQ(OutputTail("\n\n \r\n"), "");
}

}  // namespace
}  // namespace bsw
