#include "tests/cluster/node-agent/address_pool.h"

#include <arpa/inet.h>

#include <algorithm>

namespace bsw::node_agent {
namespace {
constexpr uint32_t kEnd = 0x7fffffffu;  // 127.255.255.255, the broadcast address: never handed out
}  // namespace

StatusOr<uint32_t> ParseIpv4(const std::string& text) {
  in_addr parsed{};
  if (inet_pton(AF_INET, text.c_str(), &parsed) != 1) {
    return InvalidArgumentError("not an IPv4 address: \"" + text + "\"");
  }
  return ntohl(parsed.s_addr);
}

std::string FormatIpv4(uint32_t address) {
  in_addr raw{htonl(address)};
  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &raw, text, sizeof(text));
  return text;
}

StatusOr<AddressPool> AddressPool::Create(const std::string& base) {
  StatusOr<uint32_t> parsed = ParseIpv4(base);
  if (!parsed.ok()) return parsed.status();
  if ((*parsed >> 24) != 127 || (*parsed & 0xffffff) == 0 || (*parsed & 0xffffff) == 0xffffff) {
    return InvalidArgumentError("address base " + base +
                                " is not a host address in 127.0.0.0/8 (loopback)");
  }
  return AddressPool(*parsed);
}

StatusOr<std::string> AddressPool::Allocate() {
  uint32_t candidate = next_;
  // Each taken address is passed at most once, and the wrap to the base at most once.
  for (size_t step = 0; step <= taken_.size() + 1; ++step) {
    if (candidate >= kEnd) {
      candidate = base_;
      continue;
    }
    if (!taken_.contains(candidate)) {
      taken_.insert(candidate);
      next_ = candidate + 1;
      return FormatIpv4(candidate);
    }
    ++candidate;
  }
  return Status(StatusCode::kResourceExhausted,
                "no free loopback address above " + FormatIpv4(base_));
}

bool AddressPool::Reserve(const std::string& address) {
  StatusOr<uint32_t> parsed = ParseIpv4(address);
  if (!parsed.ok() || *parsed < base_ || *parsed >= kEnd) return false;
  if (!taken_.insert(*parsed).second) return false;
  next_ = std::max(next_, *parsed + 1);
  return true;
}

void AddressPool::Release(const std::string& address) {
  StatusOr<uint32_t> parsed = ParseIpv4(address);
  if (parsed.ok()) taken_.erase(*parsed);
}

}  // namespace bsw::node_agent
