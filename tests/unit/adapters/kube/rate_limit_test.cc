#include "operator/adapters/kube/rate_limit.h"

#include <gtest/gtest.h>

namespace bsw::kube {
namespace {

TEST(TokenBucket, AllowsTheBurstAtOnceThenSpacesCallsAtTheRate) {
  TokenBucket bucket(/*qps=*/10, /*burst=*/100);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(bucket.Reserve(1000.0), 0.0) << i;
  EXPECT_NEAR(bucket.Reserve(1000.0), 0.1, 1e-9);
  EXPECT_NEAR(bucket.Reserve(1000.0), 0.2, 1e-9);
  // A second later ten tokens came back, two of which were already promised.
  EXPECT_NEAR(bucket.Reserve(1001.0), 0.0, 1e-9);
}

TEST(TokenBucket, RefillsUpToTheBurstOnly) {
  TokenBucket bucket(/*qps=*/10, /*burst=*/3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(bucket.Reserve(0.0), 0.0);
  // An hour idle refills three tokens, not 36,000.
  for (int i = 0; i < 3; ++i) EXPECT_EQ(bucket.Reserve(3600.0), 0.0);
  EXPECT_NEAR(bucket.Reserve(3600.0), 0.1, 1e-9);
}

TEST(ItemBackoff, DoublesFromFiveMillisecondsToAThousandSecondsPerKey) {
  ItemBackoff backoff(0.005, 1000);
  EXPECT_DOUBLE_EQ(backoff.Next("a"), 0.005);
  EXPECT_DOUBLE_EQ(backoff.Next("a"), 0.010);
  EXPECT_DOUBLE_EQ(backoff.Next("a"), 0.020);
  EXPECT_DOUBLE_EQ(backoff.Next("b"), 0.005);  // keys back off independently
  EXPECT_EQ(backoff.NumRequeues("a"), 3);
  for (int i = 0; i < 40; ++i) EXPECT_LE(backoff.Next("a"), 1000.0);
  EXPECT_DOUBLE_EQ(backoff.Next("a"), 1000.0);
  backoff.Forget("a");
  EXPECT_EQ(backoff.NumRequeues("a"), 0);
  EXPECT_DOUBLE_EQ(backoff.Next("a"), 0.005);
}

}  // namespace
}  // namespace bsw::kube
