#include "operator/adapters/prometheus/http_fetch.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string_view>
#include <system_error>
#include <utility>

#include "operator/adapters/prometheus/text_format.h"

namespace bsw::prom {
namespace {

struct Url {
  std::string host;  // without the brackets of an IPv6 address
  std::string port;
  std::string path;
  std::string host_header;
};

StatusOr<Url> ParseUrl(const std::string& url) {
  constexpr std::string_view kScheme = "http://";
  if (!url.starts_with(kScheme)) {
    return InvalidArgumentError("metrics URL '" + url + "' is not http://host:port/path");
  }
  std::string_view rest = std::string_view(url).substr(kScheme.size());
  size_t path_start = rest.find('/');
  std::string_view authority = rest.substr(0, path_start);
  Url parsed;
  parsed.host_header = std::string(authority);
  parsed.path =
      path_start == std::string_view::npos ? "/metrics" : std::string(rest.substr(path_start));
  size_t port_colon = authority.rfind(':');
  if (port_colon != std::string_view::npos &&
      authority.find(']', port_colon) == std::string_view::npos) {
    parsed.port = std::string(authority.substr(port_colon + 1));
    authority = authority.substr(0, port_colon);
  } else {
    parsed.port = "80";
  }
  if (authority.starts_with('[') && authority.ends_with(']')) {
    authority = authority.substr(1, authority.size() - 2);
  }
  parsed.host = std::string(authority);
  if (parsed.host.empty() || parsed.port.empty()) {
    return InvalidArgumentError("metrics URL '" + url + "' has no host or port");
  }
  return parsed;
}

std::string Errno(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// A connected socket whose every wait is bounded by the timeout.
class Connection {
 public:
  Connection(int fd, int timeout_ms) : fd_(fd), timeout_ms_(timeout_ms) {}
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection() { close(fd_); }

  static StatusOr<std::unique_ptr<Connection>> Open(const Url& url, int timeout_ms) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* found = nullptr;
    if (int rc = getaddrinfo(url.host.c_str(), url.port.c_str(), &hints, &found); rc != 0) {
      return UnavailableError("resolving " + url.host + ": " + gai_strerror(rc));
    }
    std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> addresses(found, freeaddrinfo);
    std::string error = "no address";
    for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
      int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) {
        error = Errno("socket");
        continue;
      }
      auto connection = std::make_unique<Connection>(fd, timeout_ms);
      if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) return connection;
      if (errno != EINPROGRESS) {
        error = Errno("connect");
        continue;
      }
      if (Status ready = connection->Wait(POLLOUT, "connecting"); !ready.ok()) {
        error = ready.message();
        continue;
      }
      int so_error = 0;
      socklen_t len = sizeof(so_error);
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &len);
      if (so_error == 0) return connection;
      error = std::string("connect: ") + std::strerror(so_error);
    }
    return UnavailableError(error);
  }

  Status SendAll(std::string_view data) {
    while (!data.empty()) {
      if (Status ready = Wait(POLLOUT, "sending the request"); !ready.ok()) return ready;
      ssize_t n = send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n < 0 && errno != EAGAIN && errno != EINTR) return UnavailableError(Errno("send"));
      if (n > 0) data.remove_prefix(static_cast<size_t>(n));
    }
    return OkStatus();
  }

  // Up to `size` bytes into `buffer`: how many, 0 at the end of the connection.
  StatusOr<size_t> Receive(char* buffer, size_t size) {
    while (true) {
      if (Status ready = Wait(POLLIN, "reading the response"); !ready.ok()) return ready;
      ssize_t n = recv(fd_, buffer, size, 0);
      if (n >= 0) return static_cast<size_t>(n);
      if (errno != EAGAIN && errno != EINTR) return UnavailableError(Errno("recv"));
    }
  }

 private:
  Status Wait(short events, const char* what) {
    pollfd p{.fd = fd_, .events = events, .revents = 0};
    int rc;
    do {
      rc = poll(&p, 1, timeout_ms_);
    } while (rc < 0 && errno == EINTR);
    if (rc < 0) return UnavailableError(Errno("poll"));
    if (rc == 0) {
      return UnavailableError(std::string("no progress ") + what + " within " +
                              std::to_string(timeout_ms_) + " ms");
    }
    return OkStatus();
  }

  int fd_;
  int timeout_ms_;
};

// The response as it arrives, through a small buffer.
class ResponseReader {
 public:
  explicit ResponseReader(Connection& connection) : connection_(connection) {}

  // The next line without its CR LF, charged to `budget` (bytes left for such lines);
  // ResourceExhausted, naming `cap`, once the line passes the budget.
  StatusOr<std::string> Line(size_t& budget, const std::string& cap) {
    std::string line;
    while (true) {
      if (Status filled = Fill(); !filled.ok()) return filled;
      if (rest_.empty()) return UnavailableError("the connection closed part-way through a line");
      size_t newline = rest_.find('\n');
      size_t take = newline == std::string_view::npos ? rest_.size() : newline + 1;
      if (take > budget) return Status(StatusCode::kResourceExhausted, cap);
      budget -= take;
      line.append(rest_.substr(0, take));
      rest_.remove_prefix(take);
      if (newline != std::string_view::npos) break;
    }
    line.pop_back();
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return line;
  }

  // Up to `max` bytes of what has arrived, waiting for more when none is buffered; empty at the
  // end of the connection.
  StatusOr<std::string_view> Some(size_t max) {
    if (Status filled = Fill(); !filled.ok()) return filled;
    std::string_view some = rest_.substr(0, max);
    rest_.remove_prefix(some.size());
    return some;
  }

 private:
  Status Fill() {
    if (!rest_.empty()) return OkStatus();
    StatusOr<size_t> n = connection_.Receive(buffer_, sizeof(buffer_));
    if (!n.ok()) return n.status();
    rest_ = std::string_view(buffer_, *n);
    return OkStatus();
  }

  Connection& connection_;
  char buffer_[16 << 10];
  std::string_view rest_;
};

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](unsigned char x, unsigned char y) {
    return std::tolower(x) == std::tolower(y);
  });
}

std::string_view Trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

template <typename T>
std::optional<T> ParseNumber(std::string_view text, int base = 10) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

struct Head {
  std::string content_encoding;
  std::optional<size_t> content_length;
  bool chunked = false;
};

const std::string kHeadCap = "the response's status line and headers are over the cap of " +
                             std::to_string(kMaxLineBytes) + " bytes";

// OK for "HTTP/1.x 200 ..."; Unavailable for another status, InvalidArgument for a line that is
// not a status line.
Status CheckStatusLine(std::string_view status) {
  if (!status.starts_with("HTTP/1.") || status.size() < 12 || status[8] != ' ') {
    return InvalidArgumentError("malformed status line '" + Excerpt(status) + "'");
  }
  std::optional<int> code = ParseNumber<int>(status.substr(9, 3));
  if (!code) return InvalidArgumentError("malformed status line '" + Excerpt(status) + "'");
  if (*code != 200) return UnavailableError("HTTP " + std::to_string(*code));
  return OkStatus();
}

// Records in `head` what a header line says of the body: its Content-Encoding, a chunked
// Transfer-Encoding (the only one supported) or its Content-Length; other headers are ignored.
Status AddHeader(std::string_view header, Head& head) {
  size_t colon = header.find(':');
  if (colon == std::string_view::npos) {
    return InvalidArgumentError("malformed header '" + Excerpt(header) + "'");
  }
  std::string_view name = header.substr(0, colon);
  std::string_view value = Trimmed(header.substr(colon + 1));
  if (EqualsIgnoringCase(name, "Content-Encoding")) {
    head.content_encoding = std::string(value);
  } else if (EqualsIgnoringCase(name, "Transfer-Encoding")) {
    head.chunked = EqualsIgnoringCase(value, "chunked");
    if (!head.chunked) {
      return InvalidArgumentError("unsupported Transfer-Encoding '" + Excerpt(value) + "'");
    }
  } else if (EqualsIgnoringCase(name, "Content-Length")) {
    head.content_length = ParseNumber<size_t>(value);
    if (!head.content_length) {
      return InvalidArgumentError("malformed Content-Length '" + Excerpt(value) + "'");
    }
  }
  return OkStatus();
}

// Reads the status line and headers; Unavailable for a status other than 200.
StatusOr<Head> ReadHead(ResponseReader& reader) {
  size_t budget = kMaxLineBytes;
  StatusOr<std::string> status_line = reader.Line(budget, kHeadCap);
  if (!status_line.ok()) return status_line.status();
  if (Status status = CheckStatusLine(*status_line); !status.ok()) return status;
  Head head;
  while (true) {
    StatusOr<std::string> line = reader.Line(budget, kHeadCap);
    if (!line.ok()) return line.status();
    if (line->empty()) return head;
    if (Status added = AddHeader(*line, head); !added.ok()) return added;
  }
}

// Passes the next `size` bytes of the body (all that arrive, when `size` is nullopt) to `body`.
Status ReadInto(ResponseReader& reader, std::optional<size_t> size, BoundedBody& body) {
  size_t left = size.value_or(SIZE_MAX);
  while (left > 0) {
    StatusOr<std::string_view> some = reader.Some(left);
    if (!some.ok()) return some.status();
    if (some->empty()) {
      if (!size) return OkStatus();
      return UnavailableError("the connection closed " + std::to_string(left) +
                              " bytes before the end of the body");
    }
    if (Status taken = body.Append(some->data(), some->size()); !taken.ok()) return taken;
    left -= some->size();
  }
  return OkStatus();
}

Status ReadChunked(ResponseReader& reader, BoundedBody& body) {
  const std::string cap = "a chunk-size line of the response is over the cap of " +
                          std::to_string(kMaxLineBytes) + " bytes";
  while (true) {
    size_t budget = kMaxLineBytes;
    StatusOr<std::string> line = reader.Line(budget, cap);
    if (!line.ok()) return line.status();
    std::string_view size_text = Trimmed(std::string_view(*line).substr(0, line->find(';')));
    std::optional<size_t> size = ParseNumber<size_t>(size_text, 16);
    if (!size) return InvalidArgumentError("malformed chunk size '" + Excerpt(*line) + "'");
    if (*size == 0) break;
    if (Status read = ReadInto(reader, *size, body); !read.ok()) return read;
    budget = kMaxLineBytes;
    StatusOr<std::string> end = reader.Line(budget, cap);
    if (!end.ok()) return end.status();
    if (!end->empty()) return InvalidArgumentError("a chunk does not end where its size says");
  }
  size_t budget = kMaxLineBytes;  // trailers, up to the empty line
  while (true) {
    StatusOr<std::string> trailer = reader.Line(budget, kHeadCap);
    if (!trailer.ok()) return trailer.status();
    if (trailer->empty()) return OkStatus();
  }
}

}  // namespace

Status FetchMetricsBody(const std::string& url, double timeout_seconds, BodySink sink) {
  StatusOr<Url> parsed = ParseUrl(url);
  if (!parsed.ok()) return parsed.status();
  const int timeout_ms = static_cast<int>(std::ceil(std::max(timeout_seconds, 0.001) * 1000));
  StatusOr<std::unique_ptr<Connection>> connection = Connection::Open(*parsed, timeout_ms);
  if (!connection.ok()) return connection.status();
  const std::string request = "GET " + parsed->path + " HTTP/1.1\r\nHost: " + parsed->host_header +
                              "\r\nAccept: text/plain;version=0.0.4\r\n"
                              "Accept-Encoding: gzip\r\nConnection: close\r\n\r\n";
  if (Status sent = (*connection)->SendAll(request); !sent.ok()) return sent;
  ResponseReader reader(**connection);
  StatusOr<Head> head = ReadHead(reader);
  if (!head.ok()) return head.status();
  StatusOr<BoundedBody> body = BoundedBody::ForEncoding(head->content_encoding, std::move(sink));
  if (!body.ok()) return body.status();
  Status read =
      head->chunked ? ReadChunked(reader, *body) : ReadInto(reader, head->content_length, *body);
  if (!read.ok()) return read;
  return std::move(*body).Finish();
}

}  // namespace bsw::prom
