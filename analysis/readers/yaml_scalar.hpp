#pragma once
// What the YAML readers (params, the fan-out's pairs) share: a node's line for messages, and a
// value that must be a single scalar, with an InputError naming the field otherwise.
#include <yaml-cpp/yaml.h>

#include <string>

#include "common/errors.hpp"

namespace np {

inline int yaml_line(const YAML::Node& node) {
    return node.Mark().line + 1;
}

inline std::string yaml_scalar(const std::string& field, const YAML::Node& value) {
    if (!value.IsScalar()) {
        throw InputError(field, value.IsNull() ? "has no value" : "must be a single value",
                         yaml_line(value));
    }
    return value.Scalar();
}

}  // namespace np
