// The check of a sweep's creator (creator_rights.h) with a fake AccessReviewer: what is read from
// the annotations, which rights are asked about, and the messages. On the real API server with
// the chart's MutatingAdmissionPolicy: tests/cluster/creator_rights_test.sh.
#include "operator/controller/kube/creator_rights.h"

#include <gtest/gtest.h>

#include <set>

namespace bsw {
namespace {

using Json = nlohmann::json;

// Grants the rights in `granted` ("user verb resource[/sub] name"); records every question.
class FakeReviewer : public AccessReviewer {
 public:
  StatusOr<TokenReviewResult> ReviewToken(const std::string&) override {
    return InternalError("not used");
  }
  StatusOr<AccessDecision> Review(const UserInfo& user, const AccessCheck& check) override {
    asked.push_back({user, check});
    if (fail) return UnavailableError("the API server is away");
    std::string what = check.resource + (check.subresource.empty() ? "" : "/" + check.subresource);
    AccessDecision decision;
    for (const std::string& subject : [&] {
           std::vector<std::string> s = {user.username};
           for (const std::string& g : user.groups) s.push_back("group:" + g);
           return s;
         }()) {
      if (granted.count(subject + " " + check.verb + " " + what + " " + check.name) > 0 ||
          granted.count(subject + " " + check.verb + " " + what) > 0) {
        decision.allowed = true;
      }
    }
    return decision;
  }
  std::set<std::string> granted;
  std::vector<std::pair<UserInfo, AccessCheck>> asked;
  bool fail = false;
};

Json Sweep(const Json& annotations) {
  return Json{{"metadata", {{"name", "s"}, {"namespace", "ml"}, {"annotations", annotations}}}};
}

Json Template(const std::string& account) {
  Json spec = {{"containers", Json::array({{{"name", "trainer"}}})}};
  if (!account.empty()) spec["serviceAccountName"] = account;
  return Json{{"spec", spec}};
}

TEST(SplitGroups, UndoesTheEscapingOfThePolicy) {
  EXPECT_EQ(*SplitGroups(""), std::vector<std::string>{});
  EXPECT_EQ(*SplitGroups("a,b"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(*SplitGroups(R"(ml\,team\\x,system:authenticated)"),
            (std::vector<std::string>{R"(ml,team\x)", "system:authenticated"}));
  EXPECT_EQ(*SplitGroups("a,,b"), (std::vector<std::string>{"a", "", "b"}));
  StatusOr<std::vector<std::string>> dangling = SplitGroups("a\\");
  ASSERT_FALSE(dangling.ok());
  EXPECT_EQ(dangling.status().message(),
            "budgetsweep.dev/creator-groups: a backslash ends the value");
}

TEST(RecordedCreator, ReadsTheThreeAnnotations) {
  StatusOr<UserInfo> user = RecordedCreator(Sweep({{"budgetsweep.dev/creator", "alice"},
                                                   {"budgetsweep.dev/creator-uid", "u-1"},
                                                   {"budgetsweep.dev/creator-groups", "a,b"}}));
  ASSERT_TRUE(user.ok()) << user.status().message();
  EXPECT_EQ(user->username, "alice");
  EXPECT_EQ(user->uid, "u-1");
  EXPECT_EQ(user->groups, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(RecordedCreator(Sweep(Json::object())).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(RecordedCreator(Json{{"metadata", {{"name", "s"}}}}).status().code(),
            StatusCode::kNotFound);
}

TEST(RightsNeeded, PodsAlwaysAndTheTokenOfANamedServiceAccount) {
  std::vector<AccessCheck> plain = RightsNeeded("ml", Template(""));
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_EQ(plain[0].Describe(), "create pods in namespace ml");
  EXPECT_EQ(RightsNeeded("ml", Template("default")).size(), 1u) << "default is not checked";
  std::vector<AccessCheck> named = RightsNeeded("ml", Template("trainer"));
  ASSERT_EQ(named.size(), 2u);
  EXPECT_EQ(named[1].Describe(), "create serviceaccounts/token trainer in namespace ml");
  // The deprecated field counts too.
  Json old = Template("");
  old["spec"]["serviceAccount"] = "legacy";
  ASSERT_EQ(RightsNeeded("ml", old).size(), 2u);
  EXPECT_EQ(RightsNeeded("ml", old)[1].name, "legacy");
}

TEST(CheckCreatorRights, AllowedWhenEveryRightIsGranted) {
  FakeReviewer reviewer;
  reviewer.granted = {"alice create pods", "alice create serviceaccounts/token trainer"};
  StatusOr<CreatorVerdict> verdict = CheckCreatorRights(
      reviewer, Sweep({{"budgetsweep.dev/creator", "alice"}}), "ml", Template("trainer"));
  ASSERT_TRUE(verdict.ok());
  EXPECT_TRUE(verdict->allowed);
  EXPECT_EQ(verdict->reason, "CreatorAuthorized");
  ASSERT_EQ(reviewer.asked.size(), 2u);
  EXPECT_EQ(reviewer.asked[0].second.ns, "ml");
}

TEST(CheckCreatorRights, NamesEachMissingRight) {
  FakeReviewer reviewer;
  StatusOr<CreatorVerdict> verdict = CheckCreatorRights(
      reviewer, Sweep({{"budgetsweep.dev/creator", "bob"}}), "ml", Template("trainer"));
  ASSERT_TRUE(verdict.ok());
  EXPECT_FALSE(verdict->allowed);
  EXPECT_EQ(verdict->reason, "CreatorForbidden");
  EXPECT_EQ(verdict->message,
            "the sweep's creator \"bob\" may not create pods in namespace ml, nor create "
            "serviceaccounts/token trainer in namespace ml: the operator creates no trial pod "
            "for it (SubjectAccessReview)");
}

TEST(CheckCreatorRights, AsksWithTheRecordedGroups) {
  FakeReviewer reviewer;
  reviewer.granted = {"group:ml,team create pods"};
  StatusOr<CreatorVerdict> verdict = CheckCreatorRights(
      reviewer,
      Sweep({{"budgetsweep.dev/creator", "carol"},
             {"budgetsweep.dev/creator-groups", R"(ml\,team,system:authenticated)"}}),
      "ml", Template(""));
  ASSERT_TRUE(verdict.ok());
  EXPECT_TRUE(verdict->allowed) << verdict->message;
  EXPECT_EQ(reviewer.asked[0].first.groups,
            (std::vector<std::string>{"ml,team", "system:authenticated"}));
}

TEST(CheckCreatorRights, NoRecordedCreatorIsRefusedWithoutAReview) {
  FakeReviewer reviewer;
  reviewer.granted = {"alice create pods"};
  StatusOr<CreatorVerdict> verdict =
      CheckCreatorRights(reviewer, Sweep(Json::object()), "ml", Template(""));
  ASSERT_TRUE(verdict.ok());
  EXPECT_FALSE(verdict->allowed);
  EXPECT_EQ(verdict->reason, "CreatorUnknown");
  EXPECT_EQ(verdict->message.rfind("no creator recorded (annotation budgetsweep.dev/creator)", 0),
            0u)
      << verdict->message;
  EXPECT_TRUE(reviewer.asked.empty());
}

TEST(CheckCreatorRights, AFailedReviewIsAnErrorToRetry) {
  FakeReviewer reviewer;
  reviewer.fail = true;
  StatusOr<CreatorVerdict> verdict = CheckCreatorRights(
      reviewer, Sweep({{"budgetsweep.dev/creator", "alice"}}), "ml", Template(""));
  ASSERT_FALSE(verdict.ok());
  EXPECT_EQ(verdict.status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace bsw
