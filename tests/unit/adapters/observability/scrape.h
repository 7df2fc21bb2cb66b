#ifndef BSW_TESTS_UNIT_ADAPTERS_OBSERVABILITY_SCRAPE_H_
#define BSW_TESTS_UNIT_ADAPTERS_OBSERVABILITY_SCRAPE_H_

#include <gtest/gtest.h>
#include <httplib.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "operator/adapters/prometheus/text_format.h"

namespace bsw::observability::testing {

// GET http://127.0.0.1:<port><path>; the status is -1 when no response came.
struct Reply {
  int status = -1;
  std::string body;
  std::string content_type;
};
inline Reply Get(int port, const std::string& path) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(5);
  client.set_read_timeout(5);
  httplib::Result result = client.Get(path.c_str());
  if (!result) return {};
  return {result->status, result->body, result->get_header_value("Content-Type")};
}

// The samples of /metrics, parsed by the same text-format parser the operator scrapes with.
inline std::vector<prom::Sample> Scrape(int port) {
  Reply reply = Get(port, "/metrics");
  EXPECT_EQ(reply.status, 200);
  StatusOr<std::vector<prom::Sample>> samples = prom::ParseTextFormat(reply.body);
  EXPECT_TRUE(samples.ok()) << samples.status().message() << "\n" << reply.body;
  return samples.ok() ? *samples : std::vector<prom::Sample>{};
}

// The value of the sample with exactly this name and these labels.
inline std::optional<double> Value(const std::vector<prom::Sample>& samples,
                                   const std::string& name,
                                   const std::map<std::string, std::string>& labels) {
  for (const prom::Sample& s : samples) {
    if (s.name == name && s.labels == labels) return s.value;
  }
  return std::nullopt;
}

// How many samples carry this label value (e.g. every series of one sweep).
inline int CountWithLabel(const std::vector<prom::Sample>& samples, const std::string& label,
                          const std::string& value) {
  int n = 0;
  for (const prom::Sample& s : samples) {
    auto it = s.labels.find(label);
    if (it != s.labels.end() && it->second == value) ++n;
  }
  return n;
}

}  // namespace bsw::observability::testing

#endif  // BSW_TESTS_UNIT_ADAPTERS_OBSERVABILITY_SCRAPE_H_
