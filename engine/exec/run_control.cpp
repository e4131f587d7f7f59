#include "engine/exec/run_control.h"

#include "core/util/error.h"

namespace fusor {

void RunControl::check(const std::string& where) const {
  const char* reason = nullptr;
  if (terminate && terminate->load(std::memory_order_relaxed)) reason = "the terminate flag was set";
  else if (deadline != Clock::time_point::max() && Clock::now() >= deadline) reason = deadline_reason.c_str();
  if (reason) throw Error(ErrorKind::Cancelled, (where.empty() ? std::string() : where + ": ") + "run cancelled: " + reason);
}

}  // namespace fusor
