#include "operator/adapters/prometheus/bounded_body.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "tests/unit/adapters/gzip.h"

namespace bsw::prom {
namespace {

using ::testing::HasSubstr;

// A body of `content_encoding` whose sink appends each piece to `received`.
BoundedBody BodyInto(std::string& received, std::string_view content_encoding = "") {
  StatusOr<BoundedBody> body =
      BoundedBody::ForEncoding(content_encoding, [&received](std::string_view piece) {
        received.append(piece);
        return OkStatus();
      });
  EXPECT_TRUE(body.ok()) << body.status().message();
  return std::move(*body);
}

Status Append(BoundedBody& body, std::string_view data) {
  return body.Append(data.data(), data.size());
}

TEST(BoundedBody, HandsAGzipBodyOfSeveralMembersToTheSinkDecompressed) {
  std::string received;
  BoundedBody body = BodyInto(received, "gzip");
  const std::string gzip = Gzip("first line\n") + Gzip("second line\n");
  for (char byte : gzip) ASSERT_TRUE(Append(body, std::string_view(&byte, 1)).ok());
  EXPECT_TRUE(std::move(body).Finish().ok());
  EXPECT_EQ(received, "first line\nsecond line\n");
}

TEST(BoundedBody, AGzipBombReachesTheSinkOnlyUpToTheDecompressedCap) {
  std::string received;
  BoundedBody body = BodyInto(received, "gzip");
  Status appended = Append(body, Gzip(std::string(kMaxDecompressedBodyBytes + 1, '\0')));
  EXPECT_EQ(appended.code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(appended.message(), HasSubstr("decompresses to over the cap of 16 MiB"));
  EXPECT_LE(received.size(), kMaxDecompressedBodyBytes);
}

TEST(BoundedBody, AFailedSinkGetsNoMorePiecesButTheBodyIsStillCounted) {
  int pieces = 0;
  StatusOr<BoundedBody> body = BoundedBody::ForEncoding("", [&pieces](std::string_view) {
    ++pieces;
    return InvalidArgumentError("the sink refused");
  });
  ASSERT_TRUE(body.ok());
  const std::string mib(size_t{1} << 20, 'x');
  for (size_t i = 0; i < kMaxBodyBytes / mib.size(); ++i) ASSERT_TRUE(Append(*body, mib).ok());
  EXPECT_EQ(pieces, 1);
  Status over = Append(*body, "x");
  EXPECT_EQ(over.code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(over.message(), HasSubstr("is over the cap of 4 MiB before decompression"));
}

TEST(BoundedBody, FinishGivesTheSinksErrorWhenTheBodyIsWhole) {
  StatusOr<BoundedBody> body = BoundedBody::ForEncoding(
      "gzip", [](std::string_view) { return InvalidArgumentError("the sink refused"); });
  ASSERT_TRUE(body.ok());
  ASSERT_TRUE(Append(*body, Gzip("m 1\n")).ok());
  Status finished = std::move(*body).Finish();
  EXPECT_EQ(finished.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(finished.message(), "the sink refused");
}

TEST(BoundedBody, ATruncatedGzipBodyFailsBeforeTheSinksError) {
  StatusOr<BoundedBody> body = BoundedBody::ForEncoding(
      "gzip", [](std::string_view) { return InvalidArgumentError("the sink refused"); });
  ASSERT_TRUE(body.ok());
  std::string gzip = Gzip("m 1\n");
  gzip.resize(gzip.size() - 4);
  ASSERT_TRUE(Append(*body, gzip).ok());
  EXPECT_THAT(std::move(*body).Finish().message(),
              HasSubstr("ends part-way through its gzip data"));
}

}  // namespace
}  // namespace bsw::prom
