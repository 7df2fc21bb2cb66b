#ifndef BSW_ADAPTERS_LOCAL_LOOPBACK_PORT_H_
#define BSW_ADAPTERS_LOCAL_LOOPBACK_PORT_H_

#include "operator/core/status.h"

namespace bsw::local {

// Returns a TCP port on 127.0.0.1 that was free a moment ago: the kernel's choice for a bind to
// port 0, released again. Another process may take it before the caller's process binds it.
[[nodiscard]] StatusOr<int> PickFreeLoopbackPort();

}  // namespace bsw::local

#endif  // BSW_ADAPTERS_LOCAL_LOOPBACK_PORT_H_
