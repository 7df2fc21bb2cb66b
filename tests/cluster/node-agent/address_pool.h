#ifndef BSW_TESTS_CLUSTER_NODE_AGENT_ADDRESS_POOL_H_
#define BSW_TESTS_CLUSTER_NODE_AGENT_ADDRESS_POOL_H_

#include <cstdint>
#include <set>
#include <string>

#include "operator/core/status.h"

namespace bsw::node_agent {

// Hands out IPv4 loopback addresses (all of 127.0.0.0/8 is loopback on Linux) from a base
// upwards: always the lowest free one, so freed addresses are reused. Not thread-safe.
class AddressPool {
 public:
  // InvalidArgument unless `base` is a dotted-quad address in 127.0.0.0/8.
  [[nodiscard]] static StatusOr<AddressPool> Create(const std::string& base);

  // The lowest free address; ResourceExhausted when 127.255.255.254 is taken.
  [[nodiscard]] StatusOr<std::string> Allocate();
  // Marks `address` as taken (an address recorded before a restart). False when it was taken or
  // is not an address of this pool.
  bool Reserve(const std::string& address);
  void Release(const std::string& address);
  size_t in_use() const { return taken_.size(); }

 private:
  explicit AddressPool(uint32_t base) : base_(base) {}
  uint32_t base_;
  std::set<uint32_t> taken_;
};

// "a.b.c.d" as a host-order integer; InvalidArgument for anything else.
[[nodiscard]] StatusOr<uint32_t> ParseIpv4(const std::string& text);
std::string FormatIpv4(uint32_t address);

}  // namespace bsw::node_agent

#endif  // BSW_TESTS_CLUSTER_NODE_AGENT_ADDRESS_POOL_H_
