#ifndef BSW_OPERATOR_COLLECT_METRICS_SERVER_H_
#define BSW_OPERATOR_COLLECT_METRICS_SERVER_H_

// A minimal HTTP/1.1 server of one text at GET /metrics, driven by its owner's poll loop: the
// owner adds the server's descriptors to its poll set and hands back what poll reported.

#include <poll.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace bsw::collect {

class MetricsServer {
 public:
  using Clock = std::chrono::steady_clock;

  // Listens on host:port: host an IPv4 literal, port 0 any free port. Nothing, with *error, when
  // the host is not an IPv4 literal or the port cannot be bound.
  [[nodiscard]] static std::unique_ptr<MetricsServer> Listen(const std::string& host, uint16_t port,
                                                             std::string* error);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  [[nodiscard]] uint16_t port() const { return port_; }

  // Serves `text` from now on; a text other than the last counts as a change.
  void Publish(std::string text);

  // When the first scrape after the last change began, once one has.
  [[nodiscard]] std::optional<Clock::time_point> ScrapeOfLatest() const;

  // Appends the descriptors to poll; the owner passes the same entries, polled, to Handle.
  void AppendPollFds(std::vector<pollfd>* fds) const;
  void Handle(std::span<const pollfd> polled, Clock::time_point now);

 private:
  struct Connection;

  MetricsServer(int listener, uint16_t port);
  void Accept(Clock::time_point now);
  // False when the connection is done and is to be closed.
  bool Serve(Connection& connection, short revents, Clock::time_point now);
  bool Receive(Connection& connection, Clock::time_point now);
  void Answer(Connection& connection, Clock::time_point now);

  int listener_;
  uint16_t port_;
  std::vector<std::unique_ptr<Connection>> connections_;
  std::string text_;
  uint64_t version_ = 1;
  uint64_t scraped_version_ = 0;
  Clock::time_point scrape_began_;
};

}  // namespace bsw::collect

#endif  // BSW_OPERATOR_COLLECT_METRICS_SERVER_H_
