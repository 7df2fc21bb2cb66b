#include "operator/adapters/local/loopback_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <random>
#include <string>

namespace bsw::local {
namespace {

// The lowest port picked: above the ports services are commonly configured on.
constexpr int kLowestPort = 16384;
constexpr int kRandomAttempts = 64;

// The first port of the kernel's ephemeral range, which outgoing connections take ports from.
int EphemeralLow() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 0;
  int high = 0;
  return in >> low >> high ? low : 32768;
}

// Binds 127.0.0.1:port (0: the kernel chooses) and releases it; returns the port bound.
StatusOr<int> BindAndRelease(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return InternalError(std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  socklen_t len = sizeof(addr);
  int rc = bind(fd, reinterpret_cast<sockaddr*>(&addr), len);
  if (rc == 0) rc = getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  int saved_errno = errno;
  close(fd);
  if (rc != 0) {
    return UnavailableError(std::string("no free port on 127.0.0.1: ") +
                            std::strerror(saved_errno));
  }
  return static_cast<int>(ntohs(addr.sin_port));
}

}  // namespace

StatusOr<int> PickFreeLoopbackPort() {
  int below = EphemeralLow();
  if (below > kLowestPort + kRandomAttempts) {
    thread_local std::mt19937 rng{std::random_device{}()};
    std::uniform_int_distribution<int> pick(kLowestPort, below - 1);
    for (int attempt = 0; attempt < kRandomAttempts; ++attempt) {
      StatusOr<int> port = BindAndRelease(pick(rng));
      if (port.ok()) return port;
    }
  }
  return BindAndRelease(0);
}

}  // namespace bsw::local
