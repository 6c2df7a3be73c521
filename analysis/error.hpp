#pragma once
// The one error type for bad input anywhere in analysis/: it names what was wrong (an option,
// a params key, a JSON field) and, for text inputs, the line. Callers map it to exit status 2.
#include <cstdint>
#include <stdexcept>
#include <string>

namespace np {

class InputError : public std::runtime_error {
  public:
    InputError(std::string field, const std::string& message, int64_t line = 0)
        : std::runtime_error(message), field_(std::move(field)), line_(line) {}

    const std::string& field() const { return field_; }
    int64_t line() const { return line_; }  // 1-based; 0 when the input has no lines

  private:
    std::string field_;
    int64_t line_;
};

}  // namespace np
