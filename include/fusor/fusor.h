// fusor's library API for host applications: everything a host app includes.
//   error.h    fusor::Exception and its codes
//   log.h      fusor::set_log_handler: where warnings go (stderr by default)
//   tensor.h   fusor::HostTensor (borrowed, shared or owned buffers), fusor::TensorInfo
//   options.h  fusor::SessionOptions, levels, providers, version()
//   session.h  fusor::Session: load + optimize + plan once, run many times
// Link with find_package(fusor) and target_link_libraries(app PRIVATE fusor::fusor).
#pragma once
#include "fusor/error.h"
#include "fusor/log.h"
#include "fusor/options.h"
#include "fusor/session.h"
#include "fusor/tensor.h"
