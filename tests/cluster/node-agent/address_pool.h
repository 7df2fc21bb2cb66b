#ifndef BSW_TESTS_CLUSTER_NODE_AGENT_ADDRESS_POOL_H_
#define BSW_TESTS_CLUSTER_NODE_AGENT_ADDRESS_POOL_H_

#include <cstdint>
#include <set>
#include <string>

#include "operator/core/status.h"

namespace bsw::node_agent {

// Hands out IPv4 loopback addresses (all of 127.0.0.0/8 is loopback on Linux) from a base
// upwards: the next free one after the last handed out, wrapping to the base at the top of
// 127.0.0.0/8, as host-local IPAM does. A freed address is not reused at once: on the one loopback
// interface, the connections of the pod that had it linger in TIME_WAIT and can keep a new pod from
// binding its port (on a node, they go with the old pod's network namespace). Not thread-safe.
class AddressPool {
 public:
  // InvalidArgument unless `base` is a dotted-quad address in 127.0.0.0/8.
  [[nodiscard]] static StatusOr<AddressPool> Create(const std::string& base);

  // The next free address; ResourceExhausted when every address from the base up is taken.
  [[nodiscard]] StatusOr<std::string> Allocate();
  // Marks `address` as taken (an address recorded before a restart); the next allocation comes
  // after it. False when it was taken or is not an address of this pool.
  bool Reserve(const std::string& address);
  void Release(const std::string& address);
  size_t in_use() const { return taken_.size(); }

 private:
  explicit AddressPool(uint32_t base) : base_(base), next_(base) {}
  uint32_t base_;
  uint32_t next_;  // where the search for a free address starts
  std::set<uint32_t> taken_;
};

// "a.b.c.d" as a host-order integer; InvalidArgument for anything else.
[[nodiscard]] StatusOr<uint32_t> ParseIpv4(const std::string& text);
std::string FormatIpv4(uint32_t address);

}  // namespace bsw::node_agent

#endif  // BSW_TESTS_CLUSTER_NODE_AGENT_ADDRESS_POOL_H_
