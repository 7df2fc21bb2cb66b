#ifndef BSW_CORE_READ_ERROR_H_
#define BSW_CORE_READ_ERROR_H_

#include "base/status.h"

namespace bsw {

// Whether a failed metrics read's endpoint answered with what the read refuses (a body over a
// cap, malformed text), as against giving no answer (Unavailable: not listening, gone, too slow).
inline bool AnswerRefused(const Status& status) {
  return !status.ok() && status.code() != StatusCode::kUnavailable;
}

}  // namespace bsw

#endif  // BSW_CORE_READ_ERROR_H_
