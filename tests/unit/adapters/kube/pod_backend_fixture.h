#ifndef BSW_TESTS_UNIT_ADAPTERS_KUBE_POD_BACKEND_FIXTURE_H_
#define BSW_TESTS_UNIT_ADAPTERS_KUBE_POD_BACKEND_FIXTURE_H_

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <utility>

#include "operator/adapters/kube/client.h"
#include "operator/adapters/kube/pod_backend.h"
#include "tests/unit/adapters/kube/fake_apiserver.h"

namespace bsw::kube::testing {

// A PodBackend on a FakeApiServer, for sweep "sw" (uid "uid-1") in namespace "ns" with a template
// of one container ("trainer", image "trainer:dev"). A test changes the options with `adjust`
// before SetUp makes the backend.
class PodBackendFixture : public ::testing::Test {
 protected:
  explicit PodBackendFixture(std::function<void(PodBackendOptions&)> adjust = {})
      : adjust_(std::move(adjust)) {}

  void SetUp() override {
    StatusOr<std::unique_ptr<Client>> made = Client::Create(server_.Config(), {});
    ASSERT_TRUE(made.ok()) << made.status().message();
    client_ = std::move(*made);
    PodBackendOptions options;
    options.client = client_.get();
    options.ns = "ns";
    options.owner.name = "sw";
    options.owner.uid = "uid-1";
    options.trial_template =
        Json{{"spec", {{"containers", {{{"name", "trainer"}, {"image", "trainer:dev"}}}}}}};
    if (adjust_) adjust_(options);
    StatusOr<std::unique_ptr<PodBackend>> backend = PodBackend::Create(std::move(options));
    ASSERT_TRUE(backend.ok()) << backend.status().message();
    backend_ = std::move(*backend);
  }

  FakeApiServer server_;
  std::unique_ptr<Client> client_;
  std::unique_ptr<PodBackend> backend_;

 private:
  std::function<void(PodBackendOptions&)> adjust_;
};

}  // namespace bsw::kube::testing

#endif  // BSW_TESTS_UNIT_ADAPTERS_KUBE_POD_BACKEND_FIXTURE_H_
