#include "operator/adapters/prometheus/scrape_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <prometheus/exposer.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "operator/adapters/prometheus/bounded_body.h"
#include "tests/unit/adapters/gzip.h"

namespace bsw::prom {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

std::vector<Sample> Parse(const std::string& text) {
  StatusOr<std::vector<Sample>> samples = ParseTextFormat(text);
  EXPECT_TRUE(samples.ok()) << samples.status().message();
  return samples.ok() ? *samples : std::vector<Sample>{};
}

TEST(TrialMetricsFromSamples, MapsEveryTrainerSeries) {
  StatusOr<TrialMetrics> metrics = TrialMetricsFromSamples(
      Parse("budgetsweep_trainer_objective{sweep=\"s\",trial=\"t\",metric=\"acc\",resource=\"1\"} "
            "0.5\n"
            "budgetsweep_trainer_objective{sweep=\"s\",trial=\"t\",metric=\"acc\",resource=\"3\"} "
            "NaN\n"
            "budgetsweep_trainer_objective{sweep=\"s\",trial=\"t\",metric=\"loss\",resource=\"3\"} "
            "9\n"
            "budgetsweep_trainer_resource_completed{trial=\"t\"} 3\n"
            "budgetsweep_trainer_loss 0.7\n"
            "budgetsweep_trainer_samples_per_second 1200\n"
            "budgetsweep_trainer_data_wait_ratio 0.1\n"
            "budgetsweep_trainer_accelerator_utilization_ratio 0.9\n"
            "budgetsweep_trainer_probe_measured_steps 30\n"
            "unrelated_metric 5\n"),
      "s", "t", "acc");
  ASSERT_TRUE(metrics.ok()) << metrics.status().message();
  ASSERT_EQ(metrics->objective_by_resource.size(), 2u);
  EXPECT_EQ(metrics->objective_by_resource.at(1), 0.5);
  EXPECT_TRUE(std::isnan(metrics->objective_by_resource.at(3)));
  EXPECT_EQ(metrics->resource_completed, 3);
  EXPECT_EQ(metrics->loss, 0.7);
  EXPECT_EQ(metrics->samples_per_second, 1200);
  EXPECT_EQ(metrics->data_wait_ratio, 0.1);
  EXPECT_EQ(metrics->accelerator_utilization_ratio, 0.9);
  EXPECT_EQ(metrics->probe_measured_steps, 30);
}

TEST(TrialMetricsFromSamples, AbsentSeriesStayUnknown) {
  StatusOr<TrialMetrics> metrics =
      TrialMetricsFromSamples(Parse("budgetsweep_trainer_diverged 0\n"), "s", "t", "acc");
  ASSERT_TRUE(metrics.ok());
  EXPECT_TRUE(metrics->objective_by_resource.empty());
  EXPECT_FALSE(metrics->resource_completed.has_value());
  EXPECT_FALSE(metrics->loss.has_value());
  EXPECT_FALSE(metrics->probe_measured_steps.has_value());
}

TEST(TrialMetricsFromSamples, IgnoresSeriesOfAnotherTrialOrSweep) {
  StatusOr<TrialMetrics> metrics = TrialMetricsFromSamples(
      Parse("budgetsweep_trainer_loss{sweep=\"s\",trial=\"other\"} 1\n"
            "budgetsweep_trainer_resource_completed{sweep=\"other\",trial=\"t\"} 2\n"),
      "s", "t", "acc");
  ASSERT_TRUE(metrics.ok());
  EXPECT_FALSE(metrics->loss.has_value());
  EXPECT_FALSE(metrics->resource_completed.has_value());
}

TEST(TrialMetricsFromSamples, RejectsObjectiveWithoutNumericResource) {
  StatusOr<TrialMetrics> metrics = TrialMetricsFromSamples(
      Parse("budgetsweep_trainer_objective{metric=\"acc\",resource=\"last\"} 1\n"), "s", "t",
      "acc");
  ASSERT_FALSE(metrics.ok());
  EXPECT_EQ(metrics.status().code(), StatusCode::kInvalidArgument);
}

// Issue 40: resource="NaN" became every trial's rung-1 value.
TEST(TrialMetricsFromSamples, RejectsANonFiniteResource) {
  for (const std::string resource : {"NaN", "nan", "Inf", "+Inf", "-Inf", "inf", "1e400"}) {
    StatusOr<TrialMetrics> metrics = TrialMetricsFromSamples(
        Parse("budgetsweep_trainer_objective{metric=\"acc\",resource=\"1\"} 0.5\n"
              "budgetsweep_trainer_objective{metric=\"acc\",resource=\"" +
              resource + "\"} 0.9\n"),
        "s", "t", "acc");
    ASSERT_FALSE(metrics.ok()) << resource;
    EXPECT_EQ(metrics.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(metrics.status().message(),
                HasSubstr("resource=\"" + resource + "\", not a finite number"));
  }
}

class ScrapeMetricSourceTest : public ::testing::Test {
 protected:
  // One exposer per process, never destroyed: civetweb takes about 2 s to shut down.
  static void SetUpTestSuite() {
    if (exposer_ != nullptr) return;
    exposer_ = new ::prometheus::Exposer("127.0.0.1:0");
    port_ = exposer_->GetListeningPorts().at(0);
  }

  void SetUp() override {
    registry_ = std::make_shared<::prometheus::Registry>();
    exposer_->RegisterCollectable(registry_);
  }

  void TearDown() override { exposer_->RemoveCollectable(registry_); }

  static SegmentStatus Segment(const std::string& path = "/metrics") {
    SegmentStatus segment;
    segment.trial = "t7";
    segment.metrics_url = "http://127.0.0.1:" + std::to_string(port_) + path;
    return segment;
  }

  static inline ::prometheus::Exposer* exposer_ = nullptr;
  static inline int port_ = 0;
  std::shared_ptr<::prometheus::Registry> registry_;
};

TEST_F(ScrapeMetricSourceTest, ReadsObjectiveAndProgressFromRealExposer) {
  auto& objective = ::prometheus::BuildGauge()
                        .Name("budgetsweep_trainer_objective")
                        .Help("Objective at each evaluated resource.")
                        .Register(*registry_);
  ::prometheus::Labels labels{{"sweep", "s"}, {"trial", "t7"}, {"metric", "validation_accuracy"}};
  labels["resource"] = "1";
  objective.Add(labels).Set(0.42);
  labels["resource"] = "3";
  objective.Add(labels).Set(std::numeric_limits<double>::quiet_NaN());
  ::prometheus::BuildGauge()
      .Name("budgetsweep_trainer_resource_completed")
      .Register(*registry_)
      .Add({{"sweep", "s"}, {"trial", "t7"}})
      .Set(3);

  ScrapeMetricSource source;
  StatusOr<TrialMetrics> metrics = source.Read("s", Segment(), "validation_accuracy");
  ASSERT_TRUE(metrics.ok()) << metrics.status().message();
  EXPECT_THAT(metrics->objective_by_resource,
              ElementsAre(Pair(1.0, 0.42), Pair(3.0, testing::IsNan())));
  EXPECT_EQ(metrics->resource_completed, 3);
}

TEST_F(ScrapeMetricSourceTest, MissingPathIsUnavailable) {
  ScrapeMetricSource source;
  StatusOr<TrialMetrics> metrics = source.Read("s", Segment("/nothing-here"), "acc");
  ASSERT_FALSE(metrics.ok());
  EXPECT_EQ(metrics.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(metrics.status().message(), HasSubstr("HTTP 404"));
}

// Trial t's segment serving its metrics on 127.0.0.1:`port`.
SegmentStatus SegmentAt(int port) {
  SegmentStatus segment;
  segment.trial = "t";
  segment.metrics_url = "http://127.0.0.1:" + std::to_string(port) + "/metrics";
  return segment;
}

// A trainer's metrics endpoint served by cpp-httplib on 127.0.0.1 (port 0).
class LoopbackTrainer {
 public:
  LoopbackTrainer() {
    port_ = server_.bind_to_any_port("127.0.0.1");
    serving_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::yield();
  }
  ~LoopbackTrainer() {
    server_.stop();
    serving_.join();
  }

  // Serves `body` at /metrics, gzip-compressed by the server, as the client accepts gzip.
  void Serve(std::string body) {
    server_.Get("/metrics",
                [body = std::move(body)](const httplib::Request&, httplib::Response& response) {
                  response.set_content(body, "text/plain");
                });
  }
  // Serves `body` at /metrics as it is, encoded as `content_encoding` says (under a content type
  // that the server does not compress again).
  void ServeEncoded(std::string body, std::string content_encoding) {
    server_.Get("/metrics", [body = std::move(body), content_encoding](
                                const httplib::Request&, httplib::Response& response) {
      response.set_header("Content-Encoding", content_encoding);
      response.set_content(body, "application/octet-stream");
    });
  }
  // Serves at /metrics a plain body of `size` bytes, `piece` over and over, written as it is read.
  void Stream(size_t size, std::string piece) {
    server_.Get("/metrics", [size, piece = std::move(piece)](const httplib::Request&,
                                                             httplib::Response& response) {
      response.set_content_provider(
          size, "text/plain", [size, &piece](size_t offset, size_t, httplib::DataSink& sink) {
            const size_t from = offset % piece.size();
            return sink.write(piece.data() + from, std::min(piece.size() - from, size - offset));
          });
    });
  }

  // Serves `pieces` at /metrics, one chunk each (Transfer-Encoding: chunked).
  void StreamChunked(std::vector<std::string> pieces) {
    server_.Get("/metrics",
                [pieces = std::move(pieces)](const httplib::Request&, httplib::Response& response) {
                  response.set_chunked_content_provider(
                      "application/octet-stream",
                      [&pieces, next = size_t{0}](size_t, httplib::DataSink& sink) mutable {
                        if (next == pieces.size()) {
                          sink.done();
                        } else {
                          sink.write(pieces[next].data(), pieces[next].size());
                          ++next;
                        }
                        return true;
                      });
                });
  }

  SegmentStatus Segment() const { return SegmentAt(port_); }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread serving_;
};

// An endpoint on 127.0.0.1 (port 0) that answers its first connection with `head`, then `flood`
// over and over, `flood_bytes` of it or until the client hangs up, and closes.
class FloodingEndpoint {
 public:
  FloodingEndpoint(std::string head, char flood, size_t flood_bytes = size_t{256} << 20) {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    EXPECT_EQ(bind(listener_, reinterpret_cast<sockaddr*>(&addr), len), 0);
    EXPECT_EQ(listen(listener_, 1), 0);
    EXPECT_EQ(getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    port_ = ntohs(addr.sin_port);
    serving_ = std::thread([this, head = std::move(head), flood, flood_bytes] {
      int fd = accept(listener_, nullptr, nullptr);
      if (fd < 0) return;
      char request[4096];
      (void)!recv(fd, request, sizeof(request), 0);
      const std::string block(1 << 20, flood);
      bool open = send(fd, head.data(), head.size(), MSG_NOSIGNAL) > 0;
      for (size_t sent = 0; open && sent < flood_bytes; sent += block.size()) {
        open = send(fd, block.data(), std::min(block.size(), flood_bytes - sent), MSG_NOSIGNAL) > 0;
      }
      close(fd);
    });
  }
  ~FloodingEndpoint() {
    shutdown(listener_, SHUT_RDWR);
    serving_.join();
    close(listener_);
  }

  SegmentStatus Segment() const { return SegmentAt(port_); }

 private:
  int listener_ = -1;
  int port_ = 0;
  std::thread serving_;
};

// A gzip bomb: one gzip member of 64 MiB of zeros, compressed about a thousandfold.
std::string GzipBomb() {
  static const std::string bomb = [] {
    z_stream stream{};
    EXPECT_EQ(deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 9, Z_RLE),
              Z_OK);
    const std::string zeros(size_t{1} << 20, '\0');
    std::string out;
    char buffer[16 << 10];
    for (int mib = 0; mib < 64; ++mib) {
      stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(zeros.data()));
      stream.avail_in = static_cast<uInt>(zeros.size());
      const int flush = mib == 63 ? Z_FINISH : Z_NO_FLUSH;
      do {
        stream.next_out = reinterpret_cast<Bytef*>(buffer);
        stream.avail_out = sizeof(buffer);
        deflate(&stream, flush);
        out.append(buffer, sizeof(buffer) - stream.avail_out);
      } while (stream.avail_out == 0);
    }
    deflateEnd(&stream);
    return out;
  }();
  return bomb;
}

constexpr char kObjectiveLine[] =
    "budgetsweep_trainer_objective{sweep=\"s\",trial=\"t\",metric=\"acc\",resource=\"1\"} 0.5\n";

// Reads the metrics of trial t of sweep s from `endpoint`, a LoopbackTrainer or FloodingEndpoint.
template <typename Endpoint>
StatusOr<TrialMetrics> ReadFrom(const Endpoint& endpoint) {
  return ScrapeMetricSource().Read("s", endpoint.Segment(), "acc");
}

void ExpectRefused(const StatusOr<TrialMetrics>& metrics, StatusCode code,
                   const std::string& message) {
  ASSERT_FALSE(metrics.ok());
  EXPECT_EQ(metrics.status().code(), code);
  EXPECT_THAT(metrics.status().message(), HasSubstr(message));
}

void ExpectOverCap(const StatusOr<TrialMetrics>& metrics, const std::string& cap) {
  ExpectRefused(metrics, StatusCode::kResourceExhausted, cap);
}

TEST(ScrapeMetricSource, ReadsAGzipBodyOfOneOrMoreMembers) {
  LoopbackTrainer trainer;
  trainer.ServeEncoded(Gzip(kObjectiveLine) + Gzip("budgetsweep_trainer_resource_completed 2\n"),
                       "gzip");
  StatusOr<TrialMetrics> metrics = ReadFrom(trainer);
  ASSERT_TRUE(metrics.ok()) << metrics.status().message();
  EXPECT_THAT(metrics->objective_by_resource, ElementsAre(Pair(1.0, 0.5)));
  EXPECT_EQ(metrics->resource_completed, 2);
}

TEST(ScrapeMetricSource, AGzipBombFailsAtTheDecompressedCap) {
  ASSERT_LT(GzipBomb().size(), kMaxBodyBytes);
  LoopbackTrainer trainer;
  trainer.ServeEncoded(GzipBomb(), "gzip");
  ExpectOverCap(ReadFrom(trainer), "decompresses to over the cap of 16 MiB");
}

TEST(ScrapeMetricSource, ABodyOverFourMiBFailsAtTheCap) {
  LoopbackTrainer trainer;
  trainer.Stream(kMaxBodyBytes + 1, kObjectiveLine);
  ExpectOverCap(ReadFrom(trainer), "is over the cap of 4 MiB before decompression");
}

TEST(ScrapeMetricSource, AFloodOfLabelSetsFailsNamingTheCap) {
  std::string flood;
  for (int i = 0; i <= 1000; ++i) flood += "x{i=\"" + std::to_string(i) + "\"} 1\n";
  LoopbackTrainer trainer;
  trainer.ServeEncoded(Gzip(flood), "gzip");
  ExpectOverCap(ReadFrom(trainer), "more than the cap of 1000 label sets of metric 'x'");
}

TEST(ScrapeMetricSource, ALineOverSixtyFourKiBFailsNamingTheCap) {
  LoopbackTrainer trainer;
  trainer.Serve("# " + std::string(kMaxLineBytes, 'x') + "\n" + kObjectiveLine);
  ExpectOverCap(ReadFrom(trainer), "longer than the cap of 65536 bytes on one line");
}

TEST(ScrapeMetricSource, TooManySamplesFailNamingTheCap) {
  std::string samples;
  for (size_t i = 0; i <= kMaxSamples; ++i) samples += "m" + std::to_string(i) + " 1\n";
  LoopbackTrainer trainer;
  trainer.Serve(samples);
  ExpectOverCap(ReadFrom(trainer), "more than the cap of 10000 samples");
}

TEST(ScrapeMetricSource, ANonFiniteResourceIsRefused) {
  LoopbackTrainer trainer;
  trainer.Serve(std::string(kObjectiveLine) +
                "budgetsweep_trainer_objective{metric=\"acc\",resource=\"NaN\"} 0.9\n");
  ExpectRefused(ReadFrom(trainer), StatusCode::kInvalidArgument,
                "resource=\"NaN\", not a finite number");
}

TEST(ScrapeMetricSource, ATruncatedGzipBodyIsInvalid) {
  std::string gzip = Gzip(kObjectiveLine);
  gzip.resize(gzip.size() - 4);
  LoopbackTrainer trainer;
  trainer.ServeEncoded(gzip, "gzip");
  ExpectRefused(ReadFrom(trainer), StatusCode::kInvalidArgument,
                "ends part-way through its gzip data");
}

TEST(ScrapeMetricSource, AnEncodingOtherThanGzipIsRefused) {
  LoopbackTrainer trainer;
  trainer.ServeEncoded(kObjectiveLine, "br");
  ExpectRefused(ReadFrom(trainer), StatusCode::kInvalidArgument,
                "Content-Encoding 'br'; only gzip");
}

TEST(ScrapeMetricSource, ReadsAChunkedBody) {
  LoopbackTrainer trainer;
  trainer.StreamChunked({kObjectiveLine, "budgetsweep_trainer_resource_completed 2\n"});
  StatusOr<TrialMetrics> metrics = ReadFrom(trainer);
  ASSERT_TRUE(metrics.ok()) << metrics.status().message();
  EXPECT_THAT(metrics->objective_by_resource, ElementsAre(Pair(1.0, 0.5)));
  EXPECT_EQ(metrics->resource_completed, 2);
}

TEST(ScrapeMetricSource, AnEndlessHeaderFailsAtItsCap) {
  FloodingEndpoint endpoint("HTTP/1.1 200 OK\r\nX-Flood: ", 'a');
  ExpectOverCap(ReadFrom(endpoint), "status line and headers are over the cap of 65536 bytes");
}

TEST(ScrapeMetricSource, AnEndlessChunkSizeLineFailsAtItsCap) {
  FloodingEndpoint endpoint("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", '0');
  ExpectOverCap(ReadFrom(endpoint),
                "chunk-size line of the response is over the cap of 65536 bytes");
}

TEST(ScrapeMetricSource, AnEndlessBodyWithoutLengthFailsAtTheCap) {
  FloodingEndpoint endpoint("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n", '#');
  ExpectOverCap(ReadFrom(endpoint), "is over the cap of 4 MiB before decompression");
}

TEST(ScrapeMetricSource, ABodyCutShortIsUnavailable) {
  FloodingEndpoint endpoint("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", '\n', 10);
  ExpectRefused(ReadFrom(endpoint), StatusCode::kUnavailable, "the connection closed");
}

TEST(ScrapeMetricSource, AMalformedOrRefusedHeadSaysWhatIsWrong) {
  struct Row {
    std::string head;
    StatusCode code;
    std::string says;
  };
  const Row rows[] = {
      {"HTTP/1.1 404 Not Found\r\n\r\n", StatusCode::kUnavailable, "HTTP 404"},
      {"HTTP/2 200 OK\r\n\r\n", StatusCode::kInvalidArgument, "malformed status line"},
      {"HTTP/1.1 2x0 OK\r\n\r\n", StatusCode::kInvalidArgument, "malformed status line"},
      {"HTTP/1.1 200 OK\r\nno colon\r\n\r\n", StatusCode::kInvalidArgument,
       "malformed header 'no colon'"},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", StatusCode::kInvalidArgument,
       "unsupported Transfer-Encoding 'gzip'"},
      {"HTTP/1.1 200 OK\r\ncontent-length: 1e3\r\n\r\n", StatusCode::kInvalidArgument,
       "malformed Content-Length '1e3'"},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.head);
    FloodingEndpoint endpoint(row.head, '#', 0);
    ExpectRefused(ReadFrom(endpoint), row.code, row.says);
  }
}

// The process's peak resident set, in KiB.
long PeakRssKiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

// How much a read from `trainer` raises the process's peak resident set, in KiB, after it checked
// that the read failed at `cap`. The figure holds only in a process of its own (ctest runs each
// test so), where nothing before the read raised the peak further.
long PeakRssGrowthKiB(const LoopbackTrainer& trainer, const std::string& cap) {
  const long before = PeakRssKiB();
  ExpectOverCap(ReadFrom(trainer), cap);
  return PeakRssKiB() - before;
}

// AddressSanitizer keeps freed memory in quarantine, where it still counts, so a sanitizer
// build's reads grow the peak by a few MiB more than the pieces they hold at once.
#ifdef __SANITIZE_ADDRESS__
constexpr long kQuarantineKiB = 8 << 10;
#else
constexpr long kQuarantineKiB = 0;
#endif

// Issue 40: a 2.2 MB gzip body took the runner to 1.09 GB RSS. A read holds at most one line of
// the body; the rest of the growth is the loopback server's copy of the body it sends. Each test
// prints its figure (ctest -R RaisesThePeakRss -V).
TEST(ScrapeMetricSource, AGzipBombRaisesThePeakRssByLittleMoreThanTheServersCopy) {
  std::string bomb;  // the bomb's member 35 times: 2.2 MB, 2.3 GB decompressed
  for (int i = 0; i < 35; ++i) bomb += GzipBomb();
  LoopbackTrainer trainer;
  trainer.ServeEncoded(bomb, "gzip");
  const long growth_kib = PeakRssGrowthKiB(trainer, "16 MiB");
  std::cout << "a gzip body of " << bomb.size() << " bytes raised the peak RSS by " << growth_kib
            << " KiB\n";
  EXPECT_LT(growth_kib, (4 << 10) + kQuarantineKiB);
}

// Issue 40: a 200 MB plain body took the runner to 364 MB RSS.
TEST(ScrapeMetricSource, A200MiBBodyRaisesThePeakRssByLessThanOneMiB) {
  LoopbackTrainer trainer;
  trainer.Stream(size_t{200} << 20, kObjectiveLine);
  const long growth_kib = PeakRssGrowthKiB(trainer, "4 MiB");
  std::cout << "a plain body of 200 MiB raised the peak RSS by " << growth_kib << " KiB\n";
  EXPECT_LT(growth_kib, (1 << 10) + kQuarantineKiB);
}

int ClosedPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), len), 0);
  EXPECT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  close(fd);
  return ntohs(addr.sin_port);
}

TEST(ScrapeMetricSource, UnreachableEndpointIsUnavailable) {
  SegmentStatus segment;
  segment.trial = "t";
  segment.metrics_url = "http://127.0.0.1:" + std::to_string(ClosedPort()) + "/metrics";
  ScrapeMetricSource source(0.5);
  StatusOr<TrialMetrics> metrics = source.Read("s", segment, "acc");
  ASSERT_FALSE(metrics.ok());
  EXPECT_EQ(metrics.status().code(), StatusCode::kUnavailable);
}

TEST(ScrapeMetricSource, NoEndpointYetIsUnavailable) {
  ScrapeMetricSource source;
  StatusOr<TrialMetrics> metrics = source.Read("s", SegmentStatus{}, "acc");
  ASSERT_FALSE(metrics.ok());
  EXPECT_EQ(metrics.status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace bsw::prom
