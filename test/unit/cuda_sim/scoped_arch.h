// Environment variables for a test's scope, such as the simulated GPU's architecture.
#pragma once

#include <cstdlib>
#include <string>

namespace bertc::sim::test {

/// The environment variable `name` is `value` while it lives, then what it was.
class ScopedVariable {
public:
  ScopedVariable(const char *name, const char *value) : name(name) {
    if (const char *previous = std::getenv(name))
      saved = previous, hadValue = true;
    setenv(name, value, 1);
  }
  ~ScopedVariable() {
    if (hadValue)
      setenv(name, saved.c_str(), 1);
    else
      unsetenv(name);
  }
  ScopedVariable(const ScopedVariable &) = delete;
  ScopedVariable &operator=(const ScopedVariable &) = delete;

private:
  const char *name;
  std::string saved;
  bool hadValue = false;
};

/// The simulated GPU is an `arch` ("sm_75") while it lives (BERTC_SIM_ARCH).
struct ScopedArch : ScopedVariable {
  explicit ScopedArch(const char *arch) : ScopedVariable("BERTC_SIM_ARCH", arch) {}
};

} // namespace bertc::sim::test
