// The library API's error boundary: internal fusor::Error (core/util/error.h) and other
// exceptions become the public fusor::Exception (include/fusor/error.h).
//   Usage -> InvalidArgument, BadInput -> InvalidGraph (NoSuchFile when the model file is
//   missing: checked before loading), Cancelled -> Cancelled, std::bad_alloc -> InvalidGraph (a
//   model too big for the machine is bad input), Internal and anything else -> Fail.
#pragma once
#include <string>
#include <utility>

#include "core/util/error.h"
#include "fusor/error.h"

namespace fusor {

[[noreturn]] void throw_api(ErrorCode code, const std::string& message);
ErrorCode api_error_code(const Error& e);

// Runs f(), translating what it throws. fusor::Exception passes through unchanged.
template <typename F>
decltype(auto) api_call(F&& f) {
  try {
    return std::forward<F>(f)();
  } catch (const Exception&) {
    throw;
  } catch (const Error& e) {
    // The text carries the diagnostics (FILE:LINE:COL, message, caret line): a host has no stderr.
    throw Exception(api_error_code(e), e.full_text());
  } catch (const std::bad_alloc&) {
    throw Exception(ErrorCode::InvalidGraph, "out of memory: the model or its inputs need more than this process can get");
  } catch (const std::exception& e) {
    throw Exception(ErrorCode::Fail, e.what());
  }
}

}  // namespace fusor
