// Issue 12, the input half: documents read whole are bounded (depth, values, bytes, numbers out
// of range) and say which file and field; names that become paths are validated where they
// enter; text from files is made safe for a terminal; files are written atomically and never
// through what was planted at the destination.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "analysis/explanation/contract.hpp"
#include "analysis/readers/names.hpp"
#include "common/errors.hpp"
#include "common/json_document.hpp"
#include "common/output_file.hpp"
#include "common/probe_protocol.hpp"
#include "common/trace.hpp"
#include "src/remote/shell.hpp"
#include "tests/unit/fixture.hpp"

namespace np {
namespace {

namespace fs = std::filesystem;

using testing::error_of;

TEST(JsonDocument, ANestingOf100000IsRefusedAtTheLimitWithoutReadingOn) {
    // 100,000 levels, produced a chunk at a time: refused after the first 64.
    testing::Repeated deep("{\"mode\": \"x\", \"a\": ", "[", 100000, "]");
    const std::string e = error_of([&] { parse_json_document(deep, "c.json"); });
    EXPECT_NE(e.find("c.json: a: nested deeper than 64 levels"), std::string::npos) << e;
    EXPECT_LE(deep.chunks, 2);  // the head and the first 64 KiB of the 100 KB of brackets
}

TEST(JsonDocument, TwoHundredMegabytesOfNestedArraysCostNothingBeforeTheRefusal) {
    testing::Repeated arrays("[", "[", (int64_t{200} << 20) - 1, "");
    const std::string e = error_of([&] { parse_json_document(arrays, "t.json"); });
    EXPECT_NE(e.find("nested deeper than 64 levels"), std::string::npos) << e;
    EXPECT_LE(arrays.chunks, 2);  // the head and the first 64 KiB: the rest is never read
}

TEST(JsonDocument, TooManyValuesAreRefused) {
    testing::Repeated many("[", "{},", 20'000'000, "{}]");
    JsonLimits limits;
    limits.max_bytes = int64_t{1} << 40;
    const std::string e = error_of([&] { parse_json_document(many, "t.json", limits); });
    EXPECT_NE(e.find("more than 4000000 values"), std::string::npos) << e;
}

TEST(JsonDocument, ALongerDocumentThanItsLimitIsRefused) {
    JsonLimits limits;
    limits.max_bytes = 1 << 20;
    testing::Repeated long_string("[\"", "x", 2 << 20, "\"]");
    const std::string e = error_of([&] { parse_json_document(long_string, "t.json", limits); });
    EXPECT_NE(e.find("t.json: is longer than 1 MiB"), std::string::npos) << e;
}

TEST(JsonDocument, ANumberBeyondADoubleNamesTheFileAndField) {
    const std::string e = error_of(
        [] { parse_contract(R"({"mode": "m", "tcp_mbps": 1e400})", "np_contract_m.json"); });
    EXPECT_EQ(e, "np_contract_m.json: tcp_mbps: a number out of range (larger than a double)");
}

TEST(JsonDocument, SyntaxErrorsCarryNoRawInputAndNoLibraryPrefix) {
    const std::string e = error_of([] { parse_json_document("{\"a\": \x1b[2J}", "x.json"); });
    EXPECT_EQ(e.find("json.exception"), std::string::npos) << e;
    EXPECT_EQ(e.find('\x1b'), std::string::npos) << e;
    EXPECT_NE(e.find("x.json: a: is not valid JSON"), std::string::npos) << e;
}

TEST(JsonDocument, ReadsTheFixturesAsBefore) {
    const std::string text = testing::fixture("run-100m/np-explain_trace_node1-1.json");
    EXPECT_EQ(parse_json_document(text, "t"), nlohmann::json::parse(text));
    testing::Repeated chunked(text, " ", 1, "");  // a chunk boundary after the document
    EXPECT_EQ(parse_json_document(chunked, "t"), nlohmann::json::parse(text));
}

TEST(ProbeMessage, ADeepOrOutOfRangeReplyIsDiscardedNotPrinted) {
    EXPECT_FALSE(probe_protocol::parse_message(std::string(100000, '[')));
    EXPECT_FALSE(probe_protocol::parse_message(R"({"type":"trace","x":1e400})"));
    EXPECT_FALSE(probe_protocol::parse_message(R"(["ready"])"));
    EXPECT_TRUE(probe_protocol::parse_message(R"({"type":"ready"})"));
}

TEST(ProbeMessage, FieldsOfAnotherTypeAreNoTypeAndNoNumberNotAnException) {
    // Found by the fuzz target probe_message: `{"type":71}` threw nlohmann's type_error out of
    // value("type", "") in the console's reading of a node's reply.
    using probe_protocol::message_type, probe_protocol::number_field, probe_protocol::parse_message;
    EXPECT_EQ(message_type(parse_message(R"({"type":71})")), "");
    EXPECT_EQ(message_type(parse_message(R"({"type":["ready"]})")), "");
    EXPECT_EQ(message_type(parse_message(R"(["ready"])")), "");
    EXPECT_EQ(message_type(parse_message(R"({"type":"ready"})")), "ready");
    const auto s =
        parse_message(R"({"interval_ms":"100","tx_wire_bytes":{},"rx_wire_bytes":12.5})");
    EXPECT_EQ(number_field(*s, "interval_ms"), 0);
    EXPECT_EQ(number_field(*s, "tx_wire_bytes"), 0);
    EXPECT_EQ(number_field(*s, "missing"), 0);
    EXPECT_EQ(number_field(*s, "rx_wire_bytes"), 12.5);
}

TEST(Contract, AModeThatIsNotAPlainNameIsRefusedWhereItEnters) {
    for (const char* mode : {"../../outside/secret", "/etc/passwd", "a/b", "..", ".hidden", "-x",
                             "", "a\x1b]0;t\x07"}) {
        const std::string text = nlohmann::json{{"mode", mode}}.dump();
        const std::string e = error_of([&] { parse_contract(text, "c.json"); });
        EXPECT_NE(e.find("c.json: mode"), std::string::npos) << mode << " -> " << e;
        EXPECT_EQ(e.find('\x1b'), std::string::npos) << e;
    }
    EXPECT_EQ(parse_contract(R"({"mode": "np-explain_2.1"})", "c.json").mode, "np-explain_2.1");
}

TEST(Contract, TracesOutsideTheRunDirAreRefused) {
    for (const char* ref : {"/etc/shadow", "../x.json", "a/../../x.json", "", "./x.json"}) {
        const Contract c = parse_contract(nlohmann::json{{"mode", "m"}, {"traces", {ref}}}.dump(),
                                          "np_contract_m.json");
        const std::string e = error_of([&] { contract_trace_files(c); });
        EXPECT_NE(e.find("np_contract_m.json: traces"), std::string::npos) << ref << " -> " << e;
    }
    const Contract bad = parse_contract(R"({"mode": "m", "traces": [3]})", "c.json");
    EXPECT_THROW(contract_trace_files(bad), InputError);
    const Contract ok =
        parse_contract(R"({"mode": "m", "traces": ["m_trace_a.json", "sub/t.json"]})", "c.json");
    EXPECT_EQ(contract_trace_files(ok).size(), 2u);
}

TEST(Names, NodeNamesAreHostNamesAddressesOrAliases) {
    for (const char* ok :
         {"node1-1", "node1-1.sb1.cosmos-lab.org", "198.19.0.1", "fd00::1", "my_alias"})
        EXPECT_TRUE(is_node_name(ok)) << ok;
    for (const char* bad : {"", "-oProxyCommand=x", ".x", "a b", "a;rm -rf /", "a/b", "$(id)",
                            "a`id`", "user@host", "a\nb", "../x"})
        EXPECT_FALSE(is_node_name(bad)) << bad;
    EXPECT_FALSE(is_node_name(std::string(254, 'a')));
    EXPECT_THROW(check_node_name("a;b", "NODE_A"), InputError);
}

TEST(TerminalSafe, ControlCharactersAreShownNotActedOn) {
    EXPECT_EQ(terminal_safe("boom \x1b]0;pwned\x07\x1b[2J"), "boom \\x1b]0;pwned\\x07\\x1b[2J");
    EXPECT_EQ(terminal_safe("a\tb\nc\r"), "a\\x09b\\x0ac\\x0d");
    EXPECT_EQ(terminal_safe("a\tb\nc\r", true), "a\tb\nc\\x0d");
    // UTF-8 text is kept; C1 controls (U+009B is a CSI) and broken sequences are not.
    EXPECT_EQ(terminal_safe("94 % … µs"), "94 % … µs");
    EXPECT_EQ(terminal_safe("\xc2\x9b"
                            "2J"),
              "\\xc2\\x9b2J");
    EXPECT_EQ(terminal_safe("\xff\xe2\x80"), "\\xff\\xe2\\x80");
    EXPECT_EQ(terminal_safe("\x7f"), "\\x7f");
}

TEST(PrivateDirReply, OnlyExactlyWhatMktempMakesCanReachRmRf) {
    EXPECT_TRUE(remote::is_private_dir_reply("/tmp/np-explain.aB3dE5gH7j"));
    // Under the node's TMPDIR (mktemp's own default): a plain absolute path.
    EXPECT_TRUE(remote::is_private_dir_reply("/tmp/np-testbed-row3/node3-1/np-explain.aB3dE5gH7j"));
    EXPECT_TRUE(remote::is_private_dir_reply("/var/tmp/user@x_1+y/np-explain.aB3dE5gH7j"));
    for (const char* bad : {"/tmp/np-explain.aB3dE5gH7",
                            "/tmp/np-explain.aB3dE5gH7jk",
                            "/tmp/np-explain.../../../",
                            "/tmp/np-explain.aB3dE5gH/j",
                            "/tmp/np-explain.aB3dE5gH7j\n/",
                            "/",
                            "",
                            "/tmp",
                            "/tmp/np-explain.aB3 E5gH7j",
                            "/tmp/np-explainXaB3dE5gH7j",
                            "/tmp/np-explain.*",
                            "tmp/np-explain.aB3dE5gH7j",
                            "np-explain.aB3dE5gH7j",
                            "/tmp/../np-explain.aB3dE5gH7j",
                            "/tmp/./np-explain.aB3dE5gH7j",
                            "/tmp//np-explain.aB3dE5gH7j",
                            "/a b/np-explain.aB3dE5gH7j",
                            "/tmp\n/np-explain.aB3dE5gH7j",
                            "/$HOME/np-explain.aB3dE5gH7j",
                            "/tmp/*/np-explain.aB3dE5gH7j"})
        EXPECT_FALSE(remote::is_private_dir_reply(bad)) << bad;
    EXPECT_FALSE(remote::is_private_dir_reply(std::string_view("/tmp/np-explain.aB3dE5gH7\0", 26)));
}

class OutputFile : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/np-output-test-XXXXXX";
        dir_ = mkdtemp(tmpl);
    }
    void TearDown() override { fs::remove_all(dir_); }
    static std::string read(const fs::path& p) {
        std::ifstream in(p);
        return std::string(std::istreambuf_iterator<char>(in), {});
    }
    fs::path dir_;
};

TEST_F(OutputFile, ReplacesAtomicallyAndKeepsPermissions) {
    const fs::path f = dir_ / "np_contract_m.json";
    write_file_atomically(f, "one");
    EXPECT_EQ(read(f), "one");
    EXPECT_EQ(fs::status(f).permissions() & fs::perms::all, fs::perms(0600));
    fs::permissions(f, fs::perms(0640));
    write_file_atomically(f, "two");
    EXPECT_EQ(read(f), "two");
    EXPECT_EQ(fs::status(f).permissions() & fs::perms::all, fs::perms(0640));
    write_file_atomically(dir_ / "report.html", "x", 0644);
    EXPECT_EQ(fs::status(dir_ / "report.html").permissions() & fs::perms::all, fs::perms(0644));
    // Nothing but the files themselves is left in the directory.
    EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 2);
}

TEST_F(OutputFile, NeverWritesThroughAPlantedLinkNorReplacesADeviceOrFifo) {
    const fs::path victim = dir_ / "victim";
    std::ofstream(victim) << "precious";
    fs::create_symlink(victim, dir_ / "link.json");
    EXPECT_THROW(write_file_atomically(dir_ / "link.json", "evil"), InputError);
    EXPECT_EQ(read(victim), "precious");
    EXPECT_TRUE(fs::is_symlink(dir_ / "link.json"));

    ASSERT_EQ(mkfifo((dir_ / "fifo").c_str(), 0600), 0);
    const std::string e = error_of([&] { write_file_atomically(dir_ / "fifo", "x"); });
    EXPECT_NE(e.find("exists and is a FIFO"), std::string::npos) << e;
    EXPECT_TRUE(fs::is_fifo(dir_ / "fifo"));
    EXPECT_THROW(write_file_atomically(dir_, "x"), InputError);
}

TEST_F(OutputFile, AWriteThatFailsIsAnEnvironmentErrorAndKeepsTheOldFile) {
    const fs::path f = dir_ / "a.json";
    std::ofstream(f) << "old";
    EXPECT_THROW(write_file_atomically(dir_ / "missing" / "a.json", "x"), EnvironmentError);
    EXPECT_EQ(read(f), "old");
}

TEST_F(OutputFile, TheRunDirIsCreatedPrivateAndAForeignOrOpenOneRefused) {
    const fs::path run = dir_ / "parent" / "network-performance-me";
    prepare_private_dir(run);
    EXPECT_EQ(fs::status(run).permissions() & fs::perms::all, fs::perms(0700));
    prepare_private_dir(run);  // again: it is ours and private

    const fs::path open = dir_ / "open";
    fs::create_directory(open);
    fs::permissions(open, fs::perms(0777));
    std::string e = error_of([&] { prepare_private_dir(open); });
    EXPECT_NE(e.find("is writable by everyone (mode 0777)"), std::string::npos) << e;
    fs::permissions(open, fs::perms(0770));
    e = error_of([&] { prepare_private_dir(open); });
    EXPECT_NE(e.find("is writable by its group"), std::string::npos) << e;

    fs::create_directory_symlink(run, dir_ / "link");
    e = error_of([&] { prepare_private_dir(dir_ / "link"); });
    EXPECT_NE(e.find("is a symbolic link"), std::string::npos) << e;

    // A parent others can write to: fine when sticky (as /tmp is), refused otherwise, naming
    // the parent — another user could rename our directory away and put theirs in its place.
    const fs::path shared = dir_ / "shared";
    fs::create_directory(shared);
    fs::permissions(shared, fs::perms(01777));
    prepare_private_dir(shared / "mine");
    fs::permissions(shared, fs::perms(0777));
    e = error_of([&] { prepare_private_dir(shared / "mine"); });
    EXPECT_NE(e.find(shared.string() + " above it is writable by everyone and not sticky (mode "
                                       "0777)"),
              std::string::npos)
        << e;

    if (geteuid() == 0) {
        const fs::path foreign = dir_ / "foreign";
        fs::create_directory(foreign);
        fs::permissions(foreign, fs::perms(0755));
        ASSERT_EQ(chown(foreign.c_str(), 65534, 65534), 0);
        e = error_of([&] { prepare_private_dir(foreign); });
        EXPECT_NE(e.find("belongs to user id 65534"), std::string::npos) << e;
    }
}

// The run dir swapped for a link to another directory after it was opened (a user who owns
// its parent, mid-run): what the run saves still goes into the directory it opened and checked,
// never through the link.
TEST_F(OutputFile, ARunDirSwappedForALinkAfterItWasOpenedIsNeverWrittenThrough) {
    const fs::path run = dir_ / "run";
    const PrivateDir opened(run);
    opened.write("first.json", "1");
    const fs::path elsewhere = dir_ / "elsewhere";
    fs::create_directory(elsewhere);
    fs::rename(run, dir_ / "moved");
    fs::create_directory_symlink(elsewhere, run);
    const fs::path said = opened.write("second.json", "2");
    EXPECT_EQ(said, run / "second.json");
    EXPECT_EQ(read(dir_ / "moved" / "second.json"), "2");
    EXPECT_TRUE(fs::is_empty(elsewhere));
    opened.remove("first.json");
    EXPECT_FALSE(fs::exists(dir_ / "moved" / "first.json"));
}

}  // namespace
}  // namespace np
