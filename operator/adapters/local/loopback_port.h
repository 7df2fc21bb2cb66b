#ifndef BSW_ADAPTERS_LOCAL_LOOPBACK_PORT_H_
#define BSW_ADAPTERS_LOCAL_LOOPBACK_PORT_H_

#include "base/status.h"

namespace bsw::local {

// Returns a TCP port on 127.0.0.1 that was free a moment ago, picked at random below the kernel's
// ephemeral range: outgoing connections take ports from that range at any moment, so a port
// picked there could be gone before the caller's process binds it. Another listener may still
// take it first. Where the range leaves no room below it, the kernel's choice for port 0.
[[nodiscard]] StatusOr<int> PickFreeLoopbackPort();

}  // namespace bsw::local

#endif  // BSW_ADAPTERS_LOCAL_LOOPBACK_PORT_H_
