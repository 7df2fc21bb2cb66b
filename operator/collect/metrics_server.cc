#include "operator/collect/metrics_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace bsw::collect {
namespace {

// A request head is small; a longer one is refused (431) rather than buffered.
constexpr size_t kMaxRequestHeadBytes = 8 * 1024;
// Connections served at once; more wait in the listen queue.
constexpr size_t kMaxConnections = 16;
// A connection that has not been answered and sent by then is closed.
constexpr auto kConnectionTimeout = std::chrono::seconds(5);

std::string Response(const char* status, const std::string& body) {
  return std::string("HTTP/1.1 ") + status +
         "\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

// The head's request line split at spaces: method, target, version; fewer when malformed.
std::vector<std::string> RequestLine(const std::string& head) {
  std::string line = head.substr(0, head.find_first_of("\r\n"));
  std::vector<std::string> parts;
  for (size_t begin = 0; begin < line.size();) {
    size_t end = std::min(line.find(' ', begin), line.size());
    parts.push_back(line.substr(begin, end - begin));
    begin = end + 1;
  }
  return parts;
}

// Where the request head ends (its blank line), or npos before it has.
size_t HeadEnd(const std::string& request) {
  return std::min(request.find("\r\n\r\n"), request.find("\n\n"));
}

}  // namespace

struct MetricsServer::Connection {
  int fd = -1;
  Clock::time_point deadline;
  std::string request;
  std::string response;  // empty until answered
  size_t sent = 0;
};

std::unique_ptr<MetricsServer> MetricsServer::Listen(const std::string& host, uint16_t port,
                                                     std::string* error) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  if (inet_pton(AF_INET, host.c_str(), &address.sin_addr) != 1) {
    *error = "BUDGETSWEEP_METRICS_HOST=" + host + " is not an IPv4 address";
    return nullptr;
  }
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int on = 1;
  socklen_t length = sizeof(address);
  if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) != 0 ||
      bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      listen(fd, SOMAXCONN) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    *error = "cannot serve metrics on " + host + ":" + std::to_string(port) + ": " +
             std::strerror(errno);
    if (fd >= 0) close(fd);
    return nullptr;
  }
  return std::unique_ptr<MetricsServer>(new MetricsServer(fd, ntohs(address.sin_port)));
}

MetricsServer::MetricsServer(int listener, uint16_t port) : listener_(listener), port_(port) {}

MetricsServer::~MetricsServer() {
  for (const auto& connection : connections_) close(connection->fd);
  close(listener_);
}

void MetricsServer::Publish(std::string text) {
  if (text == text_) return;
  text_ = std::move(text);
  ++version_;
}

std::optional<MetricsServer::Clock::time_point> MetricsServer::ScrapeOfLatest() const {
  if (scraped_version_ != version_) return std::nullopt;
  return scrape_began_;
}

void MetricsServer::AppendPollFds(std::vector<pollfd>* fds) const {
  if (connections_.size() < kMaxConnections) fds->push_back({listener_, POLLIN, 0});
  for (const auto& connection : connections_) {
    short events = connection->response.empty() ? POLLIN : POLLOUT;
    fds->push_back({connection->fd, events, 0});
  }
}

void MetricsServer::Handle(std::span<const pollfd> polled, Clock::time_point now) {
  for (const pollfd& entry : polled) {
    if (entry.fd == listener_) {
      if (entry.revents & POLLIN) Accept(now);
      continue;
    }
    auto it = std::find_if(connections_.begin(), connections_.end(),
                           [&entry](const auto& c) { return c->fd == entry.fd; });
    if (it != connections_.end() && !Serve(**it, entry.revents, now)) {
      close((*it)->fd);
      connections_.erase(it);
    }
  }
}

void MetricsServer::Accept(Clock::time_point now) {
  while (connections_.size() < kMaxConnections) {
    int fd = accept4(listener_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    auto connection = std::make_unique<Connection>();
    connection->fd = fd;
    connection->deadline = now + kConnectionTimeout;
    connections_.push_back(std::move(connection));
  }
}

bool MetricsServer::Serve(Connection& connection, short revents, Clock::time_point now) {
  if (now >= connection.deadline) return false;
  if (connection.response.empty()) {
    if (revents & (POLLIN | POLLHUP | POLLERR)) return Receive(connection, now);
    return true;
  }
  if (!(revents & (POLLOUT | POLLHUP | POLLERR))) return true;
  ssize_t sent = send(connection.fd, connection.response.data() + connection.sent,
                      connection.response.size() - connection.sent, MSG_NOSIGNAL);
  if (sent < 0) return errno == EAGAIN || errno == EINTR;
  connection.sent += static_cast<size_t>(sent);
  return connection.sent < connection.response.size();
}

bool MetricsServer::Receive(Connection& connection, Clock::time_point now) {
  char buffer[4096];
  ssize_t received = recv(connection.fd, buffer, sizeof(buffer), 0);
  if (received < 0) return errno == EAGAIN || errno == EINTR;
  if (received == 0) return false;
  connection.request.append(buffer, static_cast<size_t>(received));
  if (HeadEnd(connection.request) <= kMaxRequestHeadBytes) {
    Answer(connection, now);
  } else if (connection.request.size() > kMaxRequestHeadBytes) {
    connection.response = Response("431 Request Header Fields Too Large", "");
  }
  return true;
}

void MetricsServer::Answer(Connection& connection, Clock::time_point now) {
  std::vector<std::string> line = RequestLine(connection.request);
  if (line.size() != 3 || !line[2].starts_with("HTTP/1.")) {
    connection.response = Response("400 Bad Request", "");
  } else if (line[0] != "GET") {
    connection.response = Response("405 Method Not Allowed", "");
  } else if (line[1].substr(0, line[1].find('?')) != "/metrics") {
    connection.response = Response("404 Not Found", "");
  } else {
    connection.response = Response("200 OK", text_);
    if (scraped_version_ != version_) scrape_began_ = now;
    scraped_version_ = version_;
  }
}

}  // namespace bsw::collect
