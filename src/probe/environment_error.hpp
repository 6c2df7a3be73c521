#pragma once
// What the probe cannot fix: privileges, a kernel without BTF or a hook, a missing
// interface. Callers print the message and exit 3 (DESIGN.md, exit status).
#include <stdexcept>

namespace np::probe {

class EnvironmentError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

}  // namespace np::probe
