// The simulated GPU's architecture for a test's scope.
#pragma once

#include <cstdlib>
#include <string>

namespace bertc::sim::test {

/// Sets BERTC_SIM_ARCH (the simulated GPU) for the scope, then restores it.
class ScopedArch {
public:
  explicit ScopedArch(const char *arch) {
    if (const char *previous = std::getenv("BERTC_SIM_ARCH"))
      saved = previous, hadValue = true;
    setenv("BERTC_SIM_ARCH", arch, 1);
  }
  ~ScopedArch() {
    if (hadValue)
      setenv("BERTC_SIM_ARCH", saved.c_str(), 1);
    else
      unsetenv("BERTC_SIM_ARCH");
  }

private:
  std::string saved;
  bool hadValue = false;
};

} // namespace bertc::sim::test
