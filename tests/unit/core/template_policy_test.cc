#include "operator/core/template_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "operator/core/api.h"
#include "tests/unit/core/sweep_fixture.h"

namespace bsw {
namespace {

using nlohmann::json;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

constexpr char kPath[] = "spec.trial.template";

// A template with one trainer container, with `pod` merged into its PodSpec.
json TemplateWith(const json& pod) {
  json tmpl = {{"spec", {{"containers", {{{"name", "trainer"}, {"image", "trainer:dev"}}}}}}};
  tmpl["spec"].update(pod);
  return tmpl;
}

struct Row {
  const char* situation;
  json pod;                         // merged into the template's PodSpec
  std::vector<std::string> fields;  // the refused fields, without kPath
};

class TemplatePolicyTable : public ::testing::TestWithParam<Row> {};

TEST_P(TemplatePolicyTable, RefusesExactlyTheFieldsThatReachTheNode) {
  const Row& row = GetParam();
  std::vector<std::string> errors;
  CheckTemplatePolicy(TemplateWith(row.pod), kPath, &errors);
  std::vector<std::string> fields;
  for (const std::string& e : errors) {
    EXPECT_THAT(e, HasSubstr(": not allowed: ")) << row.situation;
    fields.push_back(e.substr(0, e.find(": not allowed: ")));
  }
  std::vector<std::string> want;
  for (const std::string& f : row.fields) want.push_back(std::string(kPath) + ".spec." + f);
  EXPECT_THAT(fields, ElementsAreArray(want)) << row.situation;
}

json Container(const json& security_context) {
  return {{"name", "c"}, {"image", "i"}, {"securityContext", security_context}};
}

INSTANTIATE_TEST_SUITE_P(
    Rows, TemplatePolicyTable,
    ::testing::Values(
        Row{"a plain template", json::object(), {}},
        Row{"the restricted settings BuildPod adds",
            {{"securityContext", {{"runAsNonRoot", true}, {"runAsUser", 65532}}},
             {"containers",
              {Container({{"allowPrivilegeEscalation", false},
                          {"capabilities", {{"drop", {"ALL"}}}}})}}},
            {}},
        Row{"volumes that stay in the pod",
            {{"volumes",
              {{{"name", "data"}, {"persistentVolumeClaim", {{"claimName", "data"}}}},
               {{"name", "scratch"}, {"emptyDir", json::object()}}}}},
            {}},
        Row{"a hostPath volume",
            {{"volumes",
              {{{"name", "scratch"}, {"emptyDir", json::object()}},
               {{"name", "logs"}, {"hostPath", {{"path", "/var/log"}}}}}}},
            {"volumes[1].hostPath"}},
        Row{"host namespaces",
            {{"hostNetwork", true}, {"hostPID", true}, {"hostIPC", true}},
            {"hostNetwork", "hostPID", "hostIPC"}},
        Row{"host namespaces explicitly off", {{"hostNetwork", false}, {"hostPID", false}}, {}},
        Row{"a privileged init container and trainer",
            {{"initContainers", {Container({{"privileged", true}})}},
             {"containers", {Container({{"privileged", true}})}}},
            {"initContainers[0].securityContext.privileged",
             "containers[0].securityContext.privileged"}},
        Row{"privileged explicitly off",
            {{"containers", {Container({{"privileged", false}})}}},
            {}},
        Row{"a privileged second container",
            {{"containers", {Container(json::object()), Container({{"privileged", true}})}}},
            {"containers[1].securityContext.privileged"}},
        Row{"capabilities beyond baseline",
            {{"containers",
              {Container({{"capabilities",
                           {{"add", {"NET_BIND_SERVICE", "SYS_ADMIN", "CHOWN", "NET_ADMIN"}}}}})}}},
            {"containers[0].securityContext.capabilities.add[1]",
             "containers[0].securityContext.capabilities.add[3]"}},
        Row{"an ephemeral container",
            {{"ephemeralContainers", {Container({{"privileged", true}})}}},
            {"ephemeralContainers[0].securityContext.privileged"}},
        Row{"fields of the wrong type are left to other checks",
            {{"hostNetwork", "true"}, {"volumes", "none"}, {"containers", {"not-an-object"}}},
            {}}));

TEST(TemplatePolicy, ExplainsWhyAndWhatToUseInstead) {
  std::vector<std::string> errors;
  CheckTemplatePolicy(TemplateWith({{"volumes", {{{"name", "x"}, {"hostPath", {{"path", "/"}}}}}}}),
                      kPath, &errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0],
            "spec.trial.template.spec.volumes[0].hostPath: not allowed: it mounts a directory of "
            "the node; use a persistentVolumeClaim, emptyDir or another volume type");
}

TEST(TemplatePolicy, ParseSweepRefusesAnEscapingTemplateNamingEveryField) {
  json j = testing::ValidSweepJson();
  json& pod = j["spec"]["trial"]["template"]["spec"];
  pod["hostPID"] = true;
  pod["containers"][0]["securityContext"] = {{"privileged", true}};
  StatusOr<SweepSpec> spec = ParseSweep(j);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(spec.status().message(),
              HasSubstr("spec.trial.template.spec.hostPID: not allowed: the pod would share the "
                        "node's process namespace"));
  EXPECT_THAT(spec.status().message(),
              HasSubstr("spec.trial.template.spec.containers[0].securityContext.privileged: not "
                        "allowed"));
}

}  // namespace
}  // namespace bsw
