#include "operator/collect/options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace bsw::collect {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ParseCommandLine, ReadsEveryOptionAndTheCommand) {
  auto parsed = ParseCommandLine({"--source=file", "--path=logs/m.txt", "--format=json",
                                  "--objective=acc", "--resource-key=epoch", "--grace-seconds=1.5",
                                  "--stop-grace-seconds=0", "--", "python3", "train.py", "--lr=1"});
  ASSERT_TRUE(parsed.value) << parsed.error;
  EXPECT_EQ(parsed.value->source, Source::kFile);
  EXPECT_EQ(parsed.value->path, "logs/m.txt");
  EXPECT_EQ(parsed.value->parser.format, LineFormat::kJson);
  EXPECT_EQ(parsed.value->parser.objective, "acc");
  EXPECT_EQ(parsed.value->parser.resource_key, "epoch");
  EXPECT_EQ(parsed.value->grace_seconds, 1.5);
  EXPECT_EQ(parsed.value->stop_grace_seconds, 0);
  EXPECT_THAT(parsed.value->command, ElementsAre("python3", "train.py", "--lr=1"));
}

TEST(ParseCommandLine, DefaultsToStdoutTextAnd30SecondGraces) {
  auto parsed = ParseCommandLine({"--objective=acc", "--", "sh"});
  ASSERT_TRUE(parsed.value) << parsed.error;
  EXPECT_EQ(parsed.value->source, Source::kStdout);
  EXPECT_EQ(parsed.value->parser.format, LineFormat::kText);
  EXPECT_EQ(parsed.value->parser.filter, "");
  EXPECT_EQ(parsed.value->grace_seconds, 30);
  EXPECT_EQ(parsed.value->stop_grace_seconds, 30);
}

TEST(ParseCommandLine, HelpIsNeitherOptionsNorAnError) {
  auto parsed = ParseCommandLine({"--help"});
  EXPECT_FALSE(parsed.value);
  EXPECT_EQ(parsed.error, "");
}

struct BadRow {
  std::vector<std::string> args;
  const char* error_part;
};

class ParseCommandLineBad : public ::testing::TestWithParam<BadRow> {};

TEST_P(ParseCommandLineBad, FailsWithAnErrorNamingTheOption) {
  auto parsed = ParseCommandLine(GetParam().args);
  EXPECT_FALSE(parsed.value);
  EXPECT_THAT(parsed.error, HasSubstr(GetParam().error_part));
}

INSTANTIATE_TEST_SUITE_P(
    Rows, ParseCommandLineBad,
    ::testing::Values(
        BadRow{{"--objective=a", "--bogus=1", "--", "sh"}, "unknown option --bogus"},
        BadRow{{"--objective=a", "sh"}, "missing `--`"},
        BadRow{{"--objective=a", "--"}, "missing the command"}, BadRow{{"--", "sh"}, "--objective"},
        BadRow{{"--objective", "--", "sh"}, "--objective needs a value"},
        BadRow{{"--objective=1a", "--", "sh"}, "--objective=1a"},
        BadRow{{"--objective=a", "--resource-key=a", "--", "sh"}, "--resource-key"},
        BadRow{{"--objective=a", "--grace-seconds=-1", "--", "sh"}, "--grace-seconds=-1"},
        BadRow{{"--objective=a", "--stop-grace-seconds=x", "--", "sh"}, "--stop-grace-seconds=x"},
        BadRow{{"--objective=a", "--source=pipe", "--", "sh"}, "--source"},
        BadRow{{"--objective=a", "--format=xml", "--", "sh"}, "--format"},
        BadRow{{"--objective=a", "--source=file", "--", "sh"}, "needs --path"},
        BadRow{{"--objective=a", "--source=file", "--path=/etc/x", "--", "sh"},
               "--path=/etc/x must be relative"},
        BadRow{{"--objective=a", "--source=file", "--path=a/../../x", "--", "sh"},
               "--path=a/../../x must not contain"},
        BadRow{{"--objective=a", "--path=x", "--", "sh"}, "--path needs"},
        BadRow{{"--objective=a", "--format=json", "--", "sh"}, "--format needs"},
        BadRow{{"--objective=a", "--source=file", "--path=x", "--format=json", "--filter=(a)(b)",
                "--", "sh"},
               "--filter"}));

// Looks variables up in a map, as getenv would in an environment holding just those.
std::function<const char*(const char*)> Env(std::map<std::string, std::string> variables) {
  return [variables = std::move(variables)](const char* name) -> const char* {
    auto it = variables.find(name);
    return it == variables.end() ? nullptr : it->second.c_str();
  };
}

TEST(ReadEnvironment, ReadsTheTrialAndWhereToServe) {
  auto env = ReadEnvironment(Env({{"BUDGETSWEEP_SWEEP", "s"},
                                  {"BUDGETSWEEP_TRIAL", "t"},
                                  {"BUDGETSWEEP_METRICS_HOST", "0.0.0.0"},
                                  {"BUDGETSWEEP_METRICS_PORT", "0"},
                                  {"BUDGETSWEEP_UNTIL", "9"}}),
                             Source::kStdout);
  ASSERT_TRUE(env.value) << env.error;
  EXPECT_EQ(env.value->sweep, "s");
  EXPECT_EQ(env.value->trial, "t");
  EXPECT_EQ(env.value->metrics_host, "0.0.0.0");
  EXPECT_EQ(env.value->metrics_port, 0);
  EXPECT_EQ(env.value->until, 9);
}

TEST(ReadEnvironment, ServesNothingAndHasNoLimitByDefault) {
  auto env = ReadEnvironment(Env({{"BUDGETSWEEP_METRICS_PORT", ""}}), Source::kStdout);
  ASSERT_TRUE(env.value) << env.error;
  EXPECT_EQ(env.value->metrics_host, "127.0.0.1");
  EXPECT_FALSE(env.value->metrics_port);
  EXPECT_FALSE(env.value->until);
}

class ReadEnvironmentBad
    : public ::testing::TestWithParam<std::pair<std::map<std::string, std::string>, Source>> {};

TEST_P(ReadEnvironmentBad, FailsWithAnErrorNamingTheVariable) {
  auto env = ReadEnvironment(Env(GetParam().first), GetParam().second);
  EXPECT_FALSE(env.value);
  EXPECT_THAT(env.error, HasSubstr(GetParam().first.empty() ? "BUDGETSWEEP_TRIAL_DIR"
                                                            : GetParam().first.begin()->first));
}

INSTANTIATE_TEST_SUITE_P(
    Rows, ReadEnvironmentBad,
    ::testing::Values(
        std::pair{std::map<std::string, std::string>{}, Source::kFile},
        std::pair{std::map<std::string, std::string>{{"BUDGETSWEEP_METRICS_HOST", "localhost"}},
                  Source::kStdout},
        std::pair{std::map<std::string, std::string>{{"BUDGETSWEEP_METRICS_PORT", "65536"}},
                  Source::kStdout},
        std::pair{std::map<std::string, std::string>{{"BUDGETSWEEP_UNTIL", "x"}},
                  Source::kStdout}));

}  // namespace
}  // namespace bsw::collect
