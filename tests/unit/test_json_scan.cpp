#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/json_scan.hpp"

namespace np {
namespace {

// Records the token stream as text, to compare with what the JSON says.
struct Recorder {
    std::vector<std::string> events;
    void start_object() { events.push_back("{"); }
    void end_object() { events.push_back("}"); }
    void start_array() { events.push_back("["); }
    void end_array() { events.push_back("]"); }
    void key(std::string& k) { events.push_back("k:" + k); }
    void string(std::string& s) { events.push_back("s:" + s); }
    void number(double v) { events.push_back("n:" + std::to_string(v)); }
    void boolean(bool b) { events.push_back(b ? "true" : "false"); }
    void null() { events.push_back("null"); }
};

std::vector<std::string> scan(const std::string& text) {
    Recorder r;
    json_scan::scan(text, r);
    return r.events;
}

size_t error_offset(const std::string& text) {
    try {
        scan(text);
    } catch (const json_scan::JsonSyntaxError& e) {
        return e.offset;
    }
    ADD_FAILURE() << "accepted: " << text;
    return 0;
}

TEST(JsonScan, EmitsTokensInDocumentOrder) {
    EXPECT_EQ(
        scan(" {\"a\":\t[1, -2.5e3, true, false, null], \"b\": {}, \"c\": []}\n"),
        (std::vector<std::string>{"{", "k:a", "[", "n:1.000000", "n:-2500.000000", "true", "false",
                                  "null", "]", "k:b", "{", "}", "k:c", "[", "]", "}"}));
}

TEST(JsonScan, DecodesEscapesAndSurrogatePairs) {
    EXPECT_EQ(scan(R"(["a\"b\\c\/\n\u00e9\ud83d\ude00"])"),
              (std::vector<std::string>{"[", "s:a\"b\\c/\n\xc3\xa9\xf0\x9f\x98\x80", "]"}));
}

TEST(JsonScan, ScalarDocumentsAreValues) {
    EXPECT_EQ(scan("42"), (std::vector<std::string>{"n:42.000000"}));
    EXPECT_EQ(scan("\"x\""), (std::vector<std::string>{"s:x"}));
}

TEST(JsonScan, RejectsWhatRfc8259Rejects) {
    for (const char* bad :
         {"",      "{",     "[1,]", "{\"a\" 1}", "{\"a\":1,}", "01",      "1.",          "-",
          "1e",    "tru",   "nul",  "\"abc",     "\"a\x01\"",  "\"\\x\"", "\"\\ud800\"", "{} {}",
          "[1 2]", "{1:2}", "NaN",  "+1"}) {
        EXPECT_THROW(scan(bad), json_scan::JsonSyntaxError) << bad;
    }
}

TEST(JsonScan, ErrorOffsetPointsAtTheFault) {
    EXPECT_EQ(error_offset("[1, 2 3]"), 6u);
    EXPECT_EQ(error_offset("{\"a\": tru"), 6u);
    EXPECT_EQ(error_offset("{\"a\": [1, 2"), 11u) << "truncated: at the end";
}

TEST(JsonScan, DeepNestingUsesNoRecursion) {
    const std::string deep = std::string(200000, '[') + std::string(200000, ']');
    EXPECT_EQ(scan(deep).size(), 400000u);
}

TEST(JsonScan, HugeNumbersAreInfiniteNotUndefined) {
    EXPECT_EQ(scan("[1e999]")[1], "n:inf");
}

}  // namespace
}  // namespace np
