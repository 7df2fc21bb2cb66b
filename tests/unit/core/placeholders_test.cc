#include "operator/core/placeholders.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace bsw {
namespace {

using ::testing::ElementsAre;

const std::vector<std::pair<std::string, std::string>> kParams = {{"lr", "0.003"},
                                                                  {"batch-size", "64"}};

TEST(PlaceParams, ReplacesEachPlaceholderOfAKnownParameterByItsValue) {
  EXPECT_EQ(PlaceParams("--learning-rate=${trialParameters.lr}", kParams), "--learning-rate=0.003");
  EXPECT_EQ(PlaceParams("${trialParameters.lr}/${trialParameters.batch-size}/${trialParameters.lr}",
                        kParams),
            "0.003/64/0.003");
  EXPECT_EQ(PlaceParams("no placeholder", kParams), "no placeholder");
}

TEST(PlaceParams, LeavesWhatItDoesNotKnowAsItIs) {
  EXPECT_EQ(PlaceParams("${trialParameters.momentum} ${trialParameters.lr}", kParams),
            "${trialParameters.momentum} 0.003");
  EXPECT_EQ(PlaceParams("$(LR) ${LR} ${trialParameters.lr", kParams),
            "$(LR) ${LR} ${trialParameters.lr");
}

TEST(PlaceholderNames, ListsTheNamesInOrderAndFlagsMalformedOnes) {
  bool malformed = false;
  EXPECT_THAT(PlaceholderNames("a ${trialParameters.lr} b ${trialParameters.wd}", &malformed),
              ElementsAre("lr", "wd"));
  EXPECT_FALSE(malformed);
  EXPECT_THAT(PlaceholderNames("${trialParameters.}", &malformed), ElementsAre());
  EXPECT_TRUE(malformed);
  malformed = false;
  EXPECT_THAT(PlaceholderNames("${trialParameters.lr", &malformed), ElementsAre());
  EXPECT_TRUE(malformed);
}

TEST(PlacedNames, GathersTheNamesOfEveryText) {
  EXPECT_THAT(PlacedNames({"--lr=${trialParameters.lr}", "x",
                           "${trialParameters.lr}${trialParameters.wd}"}),
              ElementsAre("lr", "wd"));
}

}  // namespace
}  // namespace bsw
