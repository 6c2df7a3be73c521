#include "common/json_field.hpp"

#include <limits>
#include <utility>

#include "common/errors.hpp"

namespace np {
namespace {

// What a value is, for "expected …, found …" (never the value itself: it may hold anything).
std::string kind_of(const nlohmann::json& j) {
    if (j.is_number_float()) return "a number with a fraction or an exponent";
    if (j.is_number_unsigned() && j.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
        return "an integer above 2^63 - 1";
    if (j.is_number_integer() && j.get<int64_t>() < 0) return "a negative integer";
    if (j.is_number()) return "a number";
    if (j.is_string()) return "a string";
    if (j.is_boolean()) return "a boolean";
    if (j.is_array()) return "an array";
    if (j.is_object()) return "an object";
    return j.type_name();  // null
}

}  // namespace

JsonField::JsonField(const nlohmann::json& value, std::string path)
    : JsonField(value, std::move(path), ".") {}

JsonField::JsonField(const nlohmann::json& value, std::string path, std::string field_separator)
    : value_(value), path_(std::move(path)), field_separator_(std::move(field_separator)) {}

JsonField JsonField::document(const nlohmann::json& value, const std::string& source) {
    return JsonField(value, source, ": ");
}

JsonField JsonField::at(std::string_view key) const {
    require_object();
    const auto it = value_.find(key);
    if (it == value_.end()) throw InputError(field_path(key), "missing");
    return JsonField(*it, field_path(key));
}

JsonField JsonField::required(std::string_view key) const {
    JsonField f = at(key);
    if (f.is_null()) f.fail("missing");
    return f;
}

std::optional<JsonField> JsonField::find(std::string_view key) const {
    require_object();
    const auto it = value_.find(key);
    if (it == value_.end() || it->is_null()) return std::nullopt;
    return JsonField(*it, field_path(key));
}

JsonField JsonField::at(size_t i) const {
    return JsonField(value_.at(i), path_ + "[" + std::to_string(i) + "]");
}

size_t JsonField::array_size() const {
    if (!value_.is_array()) expected("an array");
    return value_.size();
}

std::vector<std::string> JsonField::keys() const {
    require_object();
    std::vector<std::string> k;
    for (auto it = value_.begin(); it != value_.end(); ++it) k.push_back(it.key());
    return k;
}

uint64_t JsonField::u64() const {
    if (!value_.is_number_unsigned() && !(value_.is_number_integer() && value_.get<int64_t>() >= 0))
        expected("a non-negative integer");
    return value_.get<uint64_t>();
}

int64_t JsonField::i64() const {
    if (!value_.is_number_integer() ||
        (value_.is_number_unsigned() &&
         value_.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())))
        expected("an integer");
    return value_.get<int64_t>();
}

double JsonField::number() const {
    if (!value_.is_number()) expected("a number");
    return value_.get<double>();
}

bool JsonField::boolean() const {
    if (!value_.is_boolean()) expected("true or false");
    return value_.get<bool>();
}

std::string JsonField::str() const {
    if (!value_.is_string()) expected("a string");
    return value_.get<std::string>();
}

std::optional<std::string> JsonField::optional_str(std::string_view key) const {
    if (const auto f = find(key)) return f->str();
    return std::nullopt;
}

std::optional<double> JsonField::optional_number(std::string_view key) const {
    if (const auto f = find(key)) return f->number();
    return std::nullopt;
}

void JsonField::fail(const std::string& what) const {
    throw InputError(path_, what);
}

void JsonField::expected(std::string_view what) const {
    fail("expected " + std::string(what) + ", found " + kind_of(value_));
}

void JsonField::require_object() const {
    if (!value_.is_object()) expected("an object");
}

std::string JsonField::field_path(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + field_separator_ + std::string(key);
}

}  // namespace np
