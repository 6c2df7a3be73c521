#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/readers/json_scan.hpp"
#include "analysis/readers/source.hpp"

namespace np {
namespace {

// Records the token stream as text, to compare with what the JSON says.
struct Recorder {
    std::vector<std::string> events;
    void start_object() { events.push_back("{"); }
    void end_object() { events.push_back("}"); }
    void start_array() { events.push_back("["); }
    void end_array() { events.push_back("]"); }
    void key(std::string_view k) { events.push_back("k:" + std::string(k)); }
    void string(std::string_view s) { events.push_back("s:" + std::string(s)); }
    void number(std::string_view text) { events.push_back("n:" + std::string(text)); }
    void boolean(bool b) { events.push_back(b ? "true" : "false"); }
    void null() { events.push_back("null"); }
};

// Scans exactly one value with only whitespace around it, handed over in `chunk`-byte pieces.
std::vector<std::string> scan(const std::string& text, size_t chunk = 0) {
    Recorder r;
    StringSource in(text, chunk);
    json_scan::Scanner<Recorder> s(in, r);
    if (!s.value()) throw json_scan::JsonSyntaxError(0, 1, "no value");
    if (s.more()) throw json_scan::JsonSyntaxError(s.offset(), s.line(), "content after the value");
    return r.events;
}

json_scan::JsonSyntaxError error_of(const std::string& text, size_t chunk = 0) {
    try {
        scan(text, chunk);
    } catch (const json_scan::JsonSyntaxError& e) {
        return e;
    }
    ADD_FAILURE() << "accepted: " << text;
    return {0, 0, ""};
}

TEST(JsonScan, EmitsTokensInDocumentOrderWithNumbersAsTheirText) {
    EXPECT_EQ(scan(" {\"a\":\t[1, -2.5e3, true, false, null], \"b\": {}, \"c\": []}\n"),
              (std::vector<std::string>{"{", "k:a", "[", "n:1", "n:-2.5e3", "true", "false", "null",
                                        "]", "k:b", "{", "}", "k:c", "[", "]", "}"}));
}

TEST(JsonScan, EveryChunkBoundaryGivesTheSameTokens) {
    // A file is read in pieces: a key, string, escape, number or literal may be cut anywhere.
    const std::string doc =
        "{\"key\": \"va\\u00e9lue\\n\", \"n\": -12.5e-3, \"list\": [true, false, null, "
        "\"\\ud83d\\ude00\"], \"deep\": {\"x\": [[0]]}}";
    const auto whole = scan(doc);
    for (size_t chunk = 1; chunk <= doc.size(); ++chunk)
        EXPECT_EQ(scan(doc, chunk), whole) << chunk;
}

TEST(JsonScan, SeveralValuesOneAfterAnotherAreReadOneByOne) {
    // --json-stream: one object per line.
    Recorder r;
    StringSource in("{\"a\":1}\n{\"b\":2}\n\n", 3);
    json_scan::Scanner<Recorder> s(in, r);
    int values = 0;
    while (s.value()) ++values;
    EXPECT_EQ(values, 2);
    EXPECT_EQ(r.events.size(), 8u);
}

TEST(JsonScan, ErrorsNameTheLine) {
    const auto e = error_of("{\n  \"a\": 1,\n  \"b\": tru\n}");
    EXPECT_EQ(e.line, 3);
    EXPECT_EQ(error_of("{\n\n\n\"a\": [1 2]}", 2).line, 4) << "counted across chunks";
}

TEST(JsonScan, StringsLongerThanTheCapReachTheHandlerCut) {
    const std::string big(json_scan::kMaxStringBytes * 3, 'x');
    const auto events = scan("[\"" + big + "\"]", 4096);
    ASSERT_EQ(events.size(), 3u);
    EXPECT_EQ(events[1].size(), 2 + json_scan::kMaxStringBytes);
}

TEST(JsonScan, ANumberLongerThanAnyToolWritesIsRefused) {
    EXPECT_THROW(scan("[" + std::string(json_scan::kMaxNumberChars + 1, '1') + "]", 100),
                 json_scan::JsonSyntaxError);
}

TEST(JsonScan, DecodesEscapesAndSurrogatePairs) {
    EXPECT_EQ(scan(R"(["a\"b\\c\/\n\u00e9\ud83d\ude00"])"),
              (std::vector<std::string>{"[", "s:a\"b\\c/\n\xc3\xa9\xf0\x9f\x98\x80", "]"}));
}

TEST(JsonScan, ScalarDocumentsAreValues) {
    EXPECT_EQ(scan("42"), (std::vector<std::string>{"n:42"}));
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
    EXPECT_EQ(error_of("[1, 2 3]").offset, 6);
    EXPECT_EQ(error_of("{\"a\": tru").offset, 9) << "truncated: at the end";
    EXPECT_EQ(error_of("{\"a\": [1, 2").offset, 11) << "truncated: at the end";
}

TEST(JsonScan, DeepNestingUsesNoRecursion) {
    const std::string deep = std::string(200000, '[') + std::string(200000, ']');
    EXPECT_EQ(scan(deep).size(), 400000u);
}

TEST(JsonScan, NumbersOutOfDoublesRangeAreLeftToTheHandlerToRefuse) {
    // The scanner checks the grammar only; iperf3.cpp refuses 1e400 naming its field.
    EXPECT_EQ(scan("[1e999]")[1], "n:1e999");
}

TEST(JsonScan, ANulByteIsBinaryDataNotJson) {
    EXPECT_NE(std::string(error_of(std::string("[1,\0]", 5)).what()).find("binary"),
              std::string::npos);
}

}  // namespace
}  // namespace np
