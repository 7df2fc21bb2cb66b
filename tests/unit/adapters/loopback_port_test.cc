// PickFreeLoopbackPort against the machine's own network stack.

#include "operator/adapters/local/loopback_port.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>

namespace bsw::local {
namespace {

int EphemeralLow() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 0;
  int high = 0;
  in >> low >> high;
  return low;
}

// Binds and listens on 127.0.0.1:port; returns the socket, or -1.
int Listen(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(fd, 1) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

TEST(LoopbackPortTest, PicksABindablePortBelowTheEphemeralRange) {
  int below = EphemeralLow();
  ASSERT_GT(below, 16384 + 64) << "this machine's ephemeral range leaves no room below it";
  for (int i = 0; i < 20; ++i) {
    StatusOr<int> port = PickFreeLoopbackPort();
    ASSERT_TRUE(port.ok()) << port.status().message();
    EXPECT_GE(*port, 16384);
    EXPECT_LT(*port, below) << "outgoing connections take ports from the ephemeral range";
    int fd = Listen(*port);
    EXPECT_GE(fd, 0) << "port " << *port << " was picked but cannot be bound";
    if (fd >= 0) close(fd);
  }
}

TEST(LoopbackPortTest, NeverPicksAPortInUse) {
  StatusOr<int> first = PickFreeLoopbackPort();
  ASSERT_TRUE(first.ok());
  int held = Listen(*first);
  ASSERT_GE(held, 0);
  for (int i = 0; i < 200; ++i) {
    StatusOr<int> port = PickFreeLoopbackPort();
    ASSERT_TRUE(port.ok());
    ASSERT_NE(*port, *first);
  }
  close(held);
}

}  // namespace
}  // namespace bsw::local
