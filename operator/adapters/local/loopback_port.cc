#include "operator/adapters/local/loopback_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace bsw::local {

StatusOr<int> PickFreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return InternalError(std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
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

}  // namespace bsw::local
