#include <gtest/gtest.h>

#include "analysis/readers/inputs.hpp"
#include "common/byte_source.hpp"
#include "common/errors.hpp"
#include "tests/unit/fixture.hpp"

namespace np {
namespace {

using testing::fixture;

Measurements read_as(const std::string& relative, InputFormat f = InputFormat::auto_detect) {
    return parse_measurements(fixture(relative), relative, f);
}

TEST(Inputs, EachToolIsRecognisedWithoutBeingNamed) {
    EXPECT_EQ(read_as("iperf3/tcp-100m.json").throughput.at(0).tool, Tool::iperf3);
    EXPECT_EQ(read_as("handwritten/iperf3-3.17-json-stream-tcp.ndjson").throughput.at(0).tool,
              Tool::iperf3);
    EXPECT_EQ(read_as("iperf2/udp-100m-b90M.server.txt").throughput.at(0).tool, Tool::iperf2);
    EXPECT_EQ(read_as("handwritten/iperf2-2.0-tcp-10g-9.42.client.txt").throughput.at(0).tool,
              Tool::iperf2);
    EXPECT_EQ(read_as("ping/iputils-ok.txt").pings.size(), 1u);
    EXPECT_EQ(read_as("ping/busybox-ok.txt").pings.size(), 1u);
}

TEST(Inputs, Iperf3TextOutputIsExplainedWithWhatItHolds) {
    // A lone iperf3 text output holds its summary lines: sent, received, retransmits.
    const std::string text =
        "Connecting to host 198.18.20.1, port 5201\n"
        "[  5] local 198.18.20.2 port 55522 connected to 198.18.20.1 port 5201\n"
        "[ ID] Interval           Transfer     Bitrate         Retr\n"
        "[  5]   0.00-10.00  sec   113 MBytes  94.9 Mbits/sec    3             sender\n"
        "[  5]   0.00-10.00  sec   112 MBytes  94.2 Mbits/sec                  receiver\n";
    const auto t = parse_measurements(text, "t.txt").throughput.at(0);
    EXPECT_EQ(t.label, "iperf3 TCP");
    EXPECT_DOUBLE_EQ(*t.sent_bps, 94.9e6);
    EXPECT_DOUBLE_EQ(*t.received_bps, 94.2e6);
    EXPECT_DOUBLE_EQ(t.rate_resolution_bps, 0.05e6);
    EXPECT_EQ(t.retransmits, 3);
    EXPECT_EQ(t.server_host, "198.18.20.1");
    EXPECT_EQ(t.port, 5201);
}

TEST(Inputs, Iperf3TextWithoutItsSummaryIsRefusedWithTheReason) {
    const std::string text =
        "Connecting to host 198.18.10.2, port 5201\n"
        "[  5] local 198.18.10.1 port 40000 connected to 198.18.10.2 port 5201\n"
        "[  5]   0.00-1.00   sec  11.8 MBytes  98.8 Mbits/sec    0   48.1 KBytes\n";
    try {
        parse_measurements(text, "t.txt");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), "iperf3");
        EXPECT_EQ(e.line(), 3);
        EXPECT_NE(std::string(e.what()).find("no summary"), std::string::npos) << e.what();
    }
}

TEST(Inputs, NamingTheToolRestrictsTheText) {
    EXPECT_TRUE(read_as("ping/iputils-ok.txt", InputFormat::ping).throughput.empty());
    EXPECT_THROW(read_as("ping/iputils-ok.txt", InputFormat::iperf2), InputError);
    EXPECT_THROW(read_as("iperf2/tcp-100m.client.txt", InputFormat::ping), InputError);
    EXPECT_THROW(read_as("iperf3/tcp-100m.json", InputFormat::iperf2), InputError);
}

TEST(Inputs, UnknownEmptyAndBinaryAreInputErrors) {
    for (const auto& [text, says] : std::vector<std::pair<std::string, std::string>>{
             {"hello world\n", "not iperf3 JSON, iperf2 text or ping output"},
             {"", "empty input"},
             {" \n\n\t\n", "empty input"},
             {std::string("\x7f"
                          "ELF\0\0",
                          6),
              "binary"}}) {
        try {
            parse_measurements(text, "x");
            ADD_FAILURE() << "accepted: " << text;
        } catch (const InputError& e) {
            EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
        }
    }
}

// What Windows writes: UTF-8 with a byte-order mark is read (the mark dropped), in every chunking
// a file read can produce; UTF-16 (PowerShell's >) and UTF-32, with or without a mark, are
// named as such with the fix — not "not a tool's output".
TEST(Inputs, TheEncodingIsReadOrNamedWithItsFix) {
    const std::string ping = fixture("ping/iputils-ok.txt");
    const std::string bom = "\xEF\xBB\xBF" + ping;
    for (size_t chunk : {size_t{0}, size_t{1}, size_t{2}, size_t{5}}) {
        StringSource in(bom, chunk);
        EXPECT_EQ(parse_measurements(in, "w.txt").pings.size(), 1u) << chunk;
    }
    const std::string json = fixture("iperf3/tcp-100m.json");
    EXPECT_EQ(parse_measurements("\xEF\xBB\xBF" + json, "w.json").throughput.size(), 1u);
    const auto utf16 = [&](bool le, bool mark) {
        std::string out = mark ? (le ? "\xFF\xFE" : "\xFE\xFF") : "";
        for (char c : ping.substr(0, 200)) {
            if (!le) out += '\0';
            out += c;
            if (le) out += '\0';
        }
        return out;
    };
    for (const auto& [text, which] :
         {std::pair{utf16(true, true), "UTF-16"}, std::pair{utf16(false, true), "UTF-16"},
          std::pair{utf16(true, false), "UTF-16"}, std::pair{utf16(false, false), "UTF-16"},
          std::pair{std::string("\xFF\xFE\0\0p\0\0\0", 8), "UTF-32"}}) {
        try {
            parse_measurements(text, "w.txt");
            ADD_FAILURE() << "accepted";
        } catch (const InputError& e) {
            EXPECT_EQ(e.field(), "format");
            EXPECT_EQ(std::string(e.what()).rfind(std::string("is ") + which + " text", 0), 0u)
                << e.what();
            EXPECT_NE(std::string(e.what()).find("iconv -f " + std::string(which)),
                      std::string::npos)
                << e.what();
        }
    }
}

// The line `yes` prints, as the product's build reads it. Sanitized, each line costs ~0.7 µs:
// the 33 M lines of 64 MiB took 70 s of the suite's sanitized run (22 s alone), so there the
// same bytes come in lines of 128: what is read is bounded by bytes, not lines.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NP_YES_LINE_BYTES 128
#endif
#endif
#ifndef NP_YES_LINE_BYTES
#define NP_YES_LINE_BYTES 2
#endif

TEST(Inputs, TextWithNoToolOutputIsRefusedWithoutReadingItAll) {
    // `yes | np-explain explain -` never ends: the first 64 MiB decide.
    class Yes : public ByteSource {
      public:
        std::string_view next() override {
            ++chunks;
            return block_;
        }
        int64_t chunks = 0;

      private:
        std::string block_ = [] {
            const std::string line = std::string(NP_YES_LINE_BYTES - 1, 'y') + "\n";
            std::string s;
            while (s.size() < 65536) s += line;
            return s;
        }();
    } yes;
    EXPECT_THROW(parse_measurements(yes, "stdin"), InputError);
    EXPECT_LE(yes.chunks, 1100);
}

ServerBanner banner(std::string source, int port, int64_t buffer) {
    ServerBanner b;
    b.source = std::move(source);
    b.tool = Tool::iperf2;
    b.transport = Transport::udp;
    b.port = port;
    b.buffer_bytes = buffer;
    b.buffer_text = std::to_string(buffer / 1024) + " KByte (default)";
    return b;
}

TEST(ServerBanners, TheServersBufferReplacesTheClientsOwnForTheReceiveSide) {
    auto m = read_as("handwritten/iperf2-2.2-udp-10g-b9g.client.txt");
    m.append(read_as("handwritten/iperf2-2.0-udp-server-banner.txt"));
    use_server_banners(m);
    const auto& t = m.throughput.at(0);
    EXPECT_EQ(t.socket_buffer_side, "server");
    EXPECT_EQ(t.socket_buffer_text, "208 KByte (default)");
    EXPECT_TRUE(m.notes.empty());
}

TEST(ServerBanners, ABannerOnAnotherPortIsNotUsedAndSaysSo) {
    auto m = read_as("handwritten/iperf2-2.2-udp-10g-b9g.client.txt");
    m.servers.push_back(banner("other.txt", 5002, 4 << 20));
    use_server_banners(m);
    EXPECT_EQ(m.throughput.at(0).socket_buffer_side, "client");
    ASSERT_EQ(m.notes.size(), 1u);
    EXPECT_NE(m.notes[0].find("matches no client run"), std::string::npos) << m.notes[0];
}

TEST(ServerBanners, TheSameSourcesBannerWinsOverAnotherFiles) {
    auto m = read_as("handwritten/iperf2-2.2-udp-10g-b9g.client.txt");
    m.servers.push_back(banner("handwritten/iperf2-2.2-udp-10g-b9g.client.txt", 5001, 1 << 20));
    m.servers.insert(m.servers.begin(), banner("elsewhere.txt", 5001, 4 << 20));
    use_server_banners(m);
    EXPECT_EQ(m.throughput.at(0).socket_buffer_bytes, 1 << 20);
}

TEST(ServerBanners, ABannerAloneIsNothingToExplain) {
    auto m = read_as("handwritten/iperf2-2.0-udp-server-banner.txt");
    try {
        use_server_banners(m);
        FAIL();
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), "handwritten/iperf2-2.0-udp-server-banner.txt");
        EXPECT_NE(std::string(e.what()).find("give the client's output"), std::string::npos);
    }
}

}  // namespace
}  // namespace np
