#pragma once
// Typed reading of a parsed JSON document in which every error names its field: a JsonField is a
// value with the path that reached it ("phases[1].tx.wire_bytes", "c.json: tcp_mbps",
// "np_contract_manual.json: explain.findings[0].severity"), and what is missing or of another
// type throws InputError(path, "missing" | "expected …, found …"). The one reader of the
// documents np-explain writes and reads back: the result contract, findings, explanation, ledger
// and trace (docs/formats.md). The document comes from parse_json_document
// (common/json_document.hpp); a JsonField refers into it and must not outlive it.
//
// np-probe, linked fully static, compiles this in with common/trace.cpp
// (src/probe/CMakeLists.txt).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace np {

class JsonField {
  public:
    // A value reached by `path`; its fields are named "path.key", or "key" when path is empty.
    JsonField(const nlohmann::json& value, std::string path);
    // The top of the document named `source`: its fields are named "source: key".
    static JsonField document(const nlohmann::json& value, const std::string& source);

    // The field `key` of this object: "missing" when it is absent (a null is there).
    JsonField at(std::string_view key) const;
    // The field `key` of this object, "missing" also when it is null.
    JsonField required(std::string_view key) const;
    // The field `key` of this object, or nothing when it is absent or null.
    std::optional<JsonField> find(std::string_view key) const;
    // Element `i` of this array (i < array_size()).
    JsonField at(size_t i) const;

    bool is_null() const { return value_.is_null(); }
    size_t array_size() const;              // this is an array
    std::vector<std::string> keys() const;  // this is an object
    uint64_t u64() const;
    int64_t i64() const;
    double number() const;
    bool boolean() const;
    std::string str() const;

    // The field `key` as a string or a number, or nothing when it is absent or null.
    std::optional<std::string> optional_str(std::string_view key) const;
    std::optional<double> optional_number(std::string_view key) const;

    const nlohmann::json& value() const { return value_; }
    const std::string& path() const { return path_; }
    // Throws InputError(path(), what).
    [[noreturn]] void fail(const std::string& what) const;
    // Throws InputError(path(), "expected <what>, found <what this is>").
    [[noreturn]] void expected(std::string_view what) const;

  private:
    JsonField(const nlohmann::json& value, std::string path, std::string field_separator);
    void require_object() const;
    std::string field_path(std::string_view key) const;

    const nlohmann::json& value_;
    std::string path_;
    std::string field_separator_;  // between path_ and a field's key: "." or ": "
};

}  // namespace np
