// Every provider the project ships (providers/*.provider) is in the build: a fresh machine must
// not silently drop one (scripts/setup.sh installs what each needs, e.g. libxnnpack-dev and
// libpthreadpool-dev for xnnpack; configuring without them already fails). This catches a build
// made with -DFUSOR_WITH_XNNPACK=OFF or a provider whose kernels are not linked.
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/session/partition.h"

namespace fusor {
namespace {

TEST(ShippedProviders, EveryShippedProviderIsBuilt) {
  int seen = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(FUSOR_SOURCE_DIR) + "/providers")) {
    if (e.path().extension() != ".provider") continue;
    ++seen;
    const std::string name = e.path().stem().string();
    EXPECT_EQ(provider_unavailable_reason(name), "")
        << "provider '" << name << "' is shipped but not built (scripts/setup.sh installs what it needs)";
  }
  EXPECT_GE(seen, 2);  // cpu and xnnpack at least
}

}  // namespace
}  // namespace fusor
