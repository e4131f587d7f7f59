#include "engine/session/api_error.h"

namespace fusor {

void throw_api(ErrorCode code, const std::string& message) { throw Exception(code, message); }

ErrorCode api_error_code(const Error& e) {
  switch (e.kind()) {
    case ErrorKind::Usage: return ErrorCode::InvalidArgument;
    case ErrorKind::BadInput: return ErrorCode::InvalidGraph;
    case ErrorKind::Internal: return ErrorCode::Fail;
    case ErrorKind::Cancelled: return ErrorCode::Cancelled;
  }
  return ErrorCode::Fail;
}

}  // namespace fusor
