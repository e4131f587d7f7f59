// The library's SessionOptions (include/fusor/options.h) as the engine's PrepareOptions.
#pragma once
#include "engine/session/prepare.h"
#include "fusor/options.h"

namespace fusor {

// Throws Exception(InvalidArgument) for bad options (unknown provider, negative threads, ...).
PrepareOptions prepare_options(const SessionOptions& options);

}  // namespace fusor
