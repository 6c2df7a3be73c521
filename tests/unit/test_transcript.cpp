// Terminal transcripts: tests/fixtures/transcripts/ were recorded for real by
// scripts/gen-transcripts.sh (prompts, iperf2, iperf3 and ping on two namespaces); the
// handwritten/ pages are the seed tutorial's step 3 and the 2019 optical page.
#include <gtest/gtest.h>

#include "analysis/readers/inputs.hpp"
#include "analysis/readers/transcript.hpp"
#include "common/errors.hpp"
#include "tests/unit/fixture.hpp"

namespace np {
namespace {

using testing::fixture;
using testing::Repeated;

Measurements read_transcript(const std::string& relative, size_t chunk = 0) {
    const std::string text = fixture(relative);
    StringSource in(text, chunk);
    return parse_measurements(in, relative);
}

struct Row {
    std::string label, command, source;
};
std::vector<Row> transcript_rows(const Measurements& m) {
    std::vector<Row> out;
    for (const auto& t : m.throughput) out.push_back({t.label, t.command, t.source});
    for (const auto& p : m.pings) out.push_back({p.label, p.command, p.source});
    return out;
}

TEST(Transcript, ARealSessionGivesOneRowPerRunWithTheCommandThatProducedIt) {
    const auto m = read_transcript("transcripts/client.txt");
    const std::vector<std::vector<std::string>> expected{
        {"iperf3 TCP", "iperf3 -c 198.18.20.1 -t 10", "12"},
        {"iperf3 UDP", "iperf3 -c 198.18.20.1 -u -b 1G -t 10", "32"},
        {"iperf3 TCP -P 2", "iperf3 -c 198.18.20.1 -t 5 -P 2 -J", "52"},
        {"iperf3 TCP -R", "iperf3 -c 198.18.20.1 -t 5 -R", "392"},
        {"iperf3 UDP", "iperf3 -c 198.18.20.1 -u -b 50M -l 1000 -t 5", "408"},
        {"iperf2 TCP", "iperf -c 198.18.20.1 -t 10", "423"},
        {"iperf2 UDP", "iperf -c 198.18.20.1 -u -b 90M -t 10", "431"},
        {"iperf2 UDP", "iperf -c 198.18.20.1 -u -b 200M -l 1200 -t 5", "444"},
        {"ping 198.18.20.1", "ping -c 5 -I npx-tr-vb 198.18.20.1", "1"},
    };
    const auto got = transcript_rows(m);
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].label, expected[i][0]) << i;
        EXPECT_EQ(got[i].command, expected[i][1]) << i;
        EXPECT_EQ(got[i].source, "transcripts/client.txt:" + expected[i][2]) << i;
    }
    EXPECT_TRUE(m.notes.empty());
}

TEST(Transcript, TheCommandGivesWhatIperf3sTextOutputDoesNotSay) {
    const auto m = read_transcript("transcripts/client.txt");
    const auto& udp = m.throughput.at(1);
    EXPECT_EQ(udp.offered_bps, 1e9) << "-b 1G: the text output has no target bitrate";
    EXPECT_EQ(udp.offered_from, "the command's -b 1G");
    EXPECT_EQ(udp.datagrams_sent, 82401);
    EXPECT_EQ(udp.datagrams_total, 82400);
    EXPECT_DOUBLE_EQ(*udp.received_bps, 95.4e6);
    const auto& small = m.throughput.at(4);
    EXPECT_EQ(small.payload_bytes, 1000) << "-l 1000";
    EXPECT_EQ(small.offered_bps, 50e6);
}

TEST(Transcript, AWindowsCmdSessionGivesEachRunItsCommand) {
    const auto m = read_transcript("handwritten/windows-cmd-session.txt");
    ASSERT_EQ(m.throughput.size(), 1u);
    ASSERT_EQ(m.pings.size(), 2u);
    const auto& tcp = m.throughput[0];
    EXPECT_EQ(tcp.command, "C:\\iperf3\\iperf3.exe -c 198.18.10.2 -t 5")
        << "cmd.exe's prompt has no blank after '>'; its '\\' is no escape";
    EXPECT_EQ(tcp.server_host, "198.18.10.2");
    EXPECT_DOUBLE_EQ(tcp.duration_s, 5.0);
    EXPECT_FALSE(tcp.retransmits.has_value()) << "a Windows sender has no Retr column";
    EXPECT_DOUBLE_EQ(*tcp.received_bps, 611e6);
    EXPECT_EQ(m.pings[0].command, "ping 198.18.10.2");
    EXPECT_EQ(m.pings[0].flavour, "Windows");
    EXPECT_EQ(m.pings[1].command, "ping -6 2001:2::1");
    EXPECT_EQ(m.pings[1].transmitted, 4);
    EXPECT_EQ(m.pings[1].received, 3);
}

TEST(Transcript, WindowsPromptsAndEveryPingsName) {
    const auto cmd = prompt_command("C:\\Users\\lab>ping -n 4 198.18.10.2");
    ASSERT_TRUE(cmd.has_value());
    EXPECT_EQ(cmd->text, "ping -n 4 198.18.10.2");
    EXPECT_TRUE(cmd->windows);
    const auto ps = prompt_command("PS C:\\Users\\lab> C:\\tools\\iperf3.exe -c h");
    ASSERT_TRUE(ps.has_value());
    EXPECT_TRUE(ps->windows);
    const auto tool = parse_tool_command(ps->text, ps->windows);
    ASSERT_TRUE(tool.has_value());
    EXPECT_EQ(tool->tool, Tool::iperf3);
    EXPECT_EQ(tool->host, "h");
    for (const char* line : {"ping6 -c 3 2001:2::1", "PING.EXE 198.18.10.2", "/sbin/ping6 h"}) {
        const auto c = parse_tool_command(line);
        ASSERT_TRUE(c.has_value()) << line;
        EXPECT_EQ(c->tool, Tool::ping) << line;
    }
    EXPECT_FALSE(prompt_command("C: drive is full>").has_value()) << "no backslash: no prompt";
}

// iperf2 prints its version only for `iperf -v`: the runs after it in a session are named by it,
// and "win32 threads" is a Windows build.
TEST(Transcript, IperfDashVNamesTheIperf2RunsAfterIt) {
    const std::string text =
        "C:\\tools>iperf -v\n"
        "iperf version 2.0.13 (21 Jan 2019) win32 threads\n"
        "C:\\tools>iperf -c 198.18.10.2\n" +
        fixture("handwritten/iperf2-2.0.5-tcp-socket-id.client.txt");
    const auto m = parse_measurements(text, "s.txt");
    ASSERT_EQ(m.throughput.size(), 1u);
    EXPECT_EQ(m.throughput[0].tool_version, "iperf 2.0.13");
    EXPECT_EQ(m.throughput[0].platform, "Windows");
    const auto before =
        parse_measurements(fixture("handwritten/iperf2-2.0.5-tcp-socket-id.client.txt"), "c.txt");
    EXPECT_TRUE(before.throughput.at(0).tool_version.empty()) << "no -v: no version";
    // Another command after it (another host's, maybe) is not named by it.
    const auto later =
        parse_measurements(text + "user@linux:~$ iperf -c 198.18.10.2\n" +
                               fixture("handwritten/iperf2-2.0.5-tcp-socket-id.client.txt"),
                           "s.txt");
    ASSERT_EQ(later.throughput.size(), 2u);
    EXPECT_EQ(later.throughput[0].platform, "Windows");
    EXPECT_TRUE(later.throughput[1].platform.empty());
}

TEST(Transcript, JsonInsideASessionIsReadLikeAFile) {
    const Measurements m = read_transcript("transcripts/client.txt");
    const auto& t = m.throughput.at(2);
    EXPECT_EQ(t.tool_version, "iperf 3.12");
    EXPECT_EQ(t.streams, 2);
    EXPECT_EQ(t.interval_bps.size(), 5u);
    EXPECT_EQ(t.mss_bytes, 1448);
}

TEST(Transcript, Iperf3sTextOutputHoldsReverseAndRetransmits) {
    const auto m = read_transcript("transcripts/client.txt");
    const auto& tcp = m.throughput.at(0);
    EXPECT_EQ(tcp.retransmits, 0);
    EXPECT_DOUBLE_EQ(*tcp.sent_bps, 94.9e6);
    EXPECT_DOUBLE_EQ(*tcp.received_bps, 94.2e6);
    EXPECT_EQ(tcp.interval_bps.size(), 10u);
    EXPECT_TRUE(m.throughput.at(3).reverse);
}

TEST(Transcript, AFragmentOfIperf3TextIsCompletedByItsCommand) {
    // Only the summary lines were pasted: no header row says UDP, no line says -R or -P.
    const auto m = parse_measurements(
        "$ iperf3 -c h -u -b 20M -R -P 2 -t 5\n"
        "[SUM]   0.00-5.00   sec  23.8 MBytes  40.0 Mbits/sec  0.000 ms  0/17265 (0%)  sender\n"
        "[SUM]   0.00-5.00   sec  23.8 MBytes  40.0 Mbits/sec  0.012 ms  0/17265 (0%)  receiver\n",
        "f.txt");
    const auto& t = m.throughput.at(0);
    EXPECT_EQ(t.transport, Transport::udp);
    EXPECT_TRUE(t.reverse);
    EXPECT_EQ(t.streams, 2);
    EXPECT_EQ(t.offered_bps, 40e6) << "-b is per stream";
}

TEST(Transcript, ARunWhoseServerCrashedKeepsWhatTheClientCounted) {
    // The iperf 2.1.8 UDP server segfaulted on the -l 1200 run: no Server Report reached the
    // client, which still counted what it sent.
    const Measurements m = read_transcript("transcripts/client.txt");
    const auto& t = m.throughput.at(7);
    EXPECT_DOUBLE_EQ(*t.sent_bps, 94.9e6);
    EXPECT_EQ(t.datagrams_sent, 49465);
    EXPECT_FALSE(t.received_bps.has_value());
    EXPECT_EQ(t.payload_bytes, 1200);
}

TEST(Transcript, PagesWithFencesGiveTheSameRunsAsTheTerminal) {
    const auto terminal = transcript_rows(read_transcript("transcripts/client.txt"));
    for (const char* page :
         {"transcripts/session.md", "transcripts/session.mediawiki", "transcripts/session.trac"}) {
        const auto got = transcript_rows(read_transcript(page));
        ASSERT_EQ(got.size(), terminal.size()) << page;
        for (size_t i = 0; i < got.size(); ++i) {
            EXPECT_EQ(got[i].label, terminal[i].label) << page << " " << i;
            EXPECT_EQ(got[i].command, terminal[i].command) << page << " " << i;
        }
    }
}

TEST(Transcript, ReadInAnyPiecesItIsTheSameSession) {
    const auto whole = transcript_rows(read_transcript("transcripts/session.md"));
    for (size_t chunk : {1, 3, 64, 4096}) {
        const auto got = transcript_rows(read_transcript("transcripts/session.md", chunk));
        ASSERT_EQ(got.size(), whole.size()) << chunk;
        for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].source, whole[i].source);
    }
}

TEST(Transcript, TheServersBannerBesideTheClientGivesItsBuffer) {
    auto m = read_transcript("transcripts/session.md");
    ASSERT_EQ(m.servers.size(), 1u);
    use_server_banners(m);
    for (const auto& t : m.throughput) {
        if (t.tool != Tool::iperf2 || t.transport != Transport::udp) continue;
        EXPECT_EQ(t.socket_buffer_side, "server") << t.source;
        EXPECT_EQ(t.socket_buffer_text, "208 KByte (default)");
    }
}

TEST(Transcript, AServerLogIsOneTestPerConnectionAndItsLastBannerNone) {
    const auto m = read_transcript("transcripts/server-iperf3.txt");
    ASSERT_EQ(m.throughput.size(), 5u);
    for (const auto& t : m.throughput) {
        EXPECT_TRUE(t.from_server);
        EXPECT_EQ(t.command, "iperf3 -s");
    }
    EXPECT_TRUE(m.throughput[3].reverse) << "test #4 was -R: the server sent";
    EXPECT_EQ(m.throughput[2].streams, 2);
    // -P 2: "- - -" parts its interval blocks too; they are no untagged summaries (3.0's).
    ASSERT_TRUE(m.throughput[2].received_bps.has_value());
    EXPECT_GT(*m.throughput[2].received_bps, 90e6);
    EXPECT_GT(m.throughput[2].interval_bps.size(), 3u);
    EXPECT_TRUE(m.throughput[2].tool_version.empty());
    EXPECT_EQ(m.throughput[1].datagrams_total, 82400);
    EXPECT_TRUE(m.notes.empty()) << "a server waiting for its next client is no failure";
}

TEST(Transcript, TheSeedTutorialsStepThreeGivesItsThreeTests) {
    const auto m = read_transcript("handwritten/seed-tutorial-step3-1g.md");
    ASSERT_EQ(m.throughput.size(), 2u);
    ASSERT_EQ(m.pings.size(), 1u);
    EXPECT_EQ(m.pings[0].command,
              "ssh root@node1-2 \"ping -c 5 -I enp0s25 192.168.200.1\" # latency");
    EXPECT_DOUBLE_EQ(*m.throughput[0].received_bps, 934e6);
    EXPECT_EQ(m.throughput[1].offered_bps, 1e9);
    EXPECT_DOUBLE_EQ(*m.throughput[1].received_bps, 949e6);
}

TEST(Transcript, TheOpticalPageGivesTcpAndUdpAndTheUdpServersBuffer) {
    auto m = read_transcript("handwritten/optical-10g-session.mediawiki");
    ASSERT_EQ(m.throughput.size(), 2u);
    EXPECT_EQ(m.throughput[0].command, "iperf -c 192.168.1.1");
    EXPECT_EQ(m.throughput[1].command, "iperf -c 192.168.1.1 -u -b 9gbps");
    EXPECT_EQ(m.servers.size(), 2u);
    use_server_banners(m);
    const auto& udp = m.throughput[1];
    EXPECT_EQ(udp.socket_buffer_side, "server");
    EXPECT_EQ(udp.socket_buffer_bytes, 208 * 1024);
    EXPECT_EQ(udp.datagrams_lost, 342498);
}

TEST(Transcript, OutputsPastedOneAfterAnotherWithoutPromptsAreSeparateRuns) {
    const std::string text = fixture("iperf2/tcp-100m.client.txt") +
                             fixture("ping/iputils-ok.txt") +
                             fixture("iperf2/udp-100m-b90M.client.txt");
    const auto m = parse_measurements(text, "cat.txt");
    EXPECT_EQ(m.throughput.size(), 2u);
    EXPECT_EQ(m.pings.size(), 1u);
}

// Another command's JSON between the runs — with its prompt, or pasted without one — is not
// taken for iperf3's (it aborted the whole transcript): the runs around it are read.
TEST(Transcript, AnotherCommandsJsonLineIsNotTakenForIperf3s) {
    for (const std::string& between :
         {std::string("root@node1-2:~# ip -j link show lo\n"), std::string("")}) {
        const std::string text =
            "$ ping -c 3 h\n" + fixture("ping/iputils-ok.txt") + between +
            "[{\"ifindex\":1,\"ifname\":\"lo\",\"flags\":[\"LOOPBACK\",\"UP\"]}]\n"
            "{\"ifindex\": 1, \"ifname\": \"lo\"}\n"
            "$ iperf -c h\n" +
            fixture("iperf2/tcp-100m.client.txt");
        SCOPED_TRACE(between);
        const auto m = parse_measurements(text, "s.txt");
        EXPECT_EQ(m.pings.size(), 1u);
        EXPECT_EQ(m.throughput.size(), 1u);
    }
    // iperf3's own JSON still starts a run, pretty-printed or compacted.
    const std::string json = fixture("iperf3/tcp-100m.json");
    EXPECT_EQ(parse_measurements("some text\n" + json, "s.txt").throughput.size(), 1u);
}

TEST(Transcript, AnInterruptedRunIsLeftOutWithANoteWhenOthersRemain) {
    const std::string text = "$ iperf -c h -u -b 1G\n" +
                             fixture("iperf2/udp-100m-b90M.client.txt") +
                             "$ iperf -c h\n"
                             "------------------------------------------------------------\n"
                             "Client connecting to h, TCP port 5001\n"
                             "^C\n$ ping -c 3 h\n" +
                             fixture("ping/iputils-ok.txt");
    const auto m = parse_measurements(text, "s.txt");
    EXPECT_EQ(m.throughput.size(), 1u);
    EXPECT_EQ(m.pings.size(), 1u);
    ASSERT_EQ(m.notes.size(), 1u);
    EXPECT_NE(m.notes[0].find("s.txt:14"), std::string::npos) << m.notes[0];
    EXPECT_NE(m.notes[0].find("left out"), std::string::npos) << m.notes[0];
}

TEST(Transcript, Iperf3sErrorInASessionIsAToolFailure) {
    const auto m = parse_measurements(
        "user@h:~$ iperf3 -c 198.18.20.9\niperf3: error - unable to connect to server: "
        "Connection refused\nuser@h:~$ ping -c 1 h\n" +
            fixture("ping/iputils-ok.txt"),
        "s.txt");
    ASSERT_EQ(m.failures.size(), 1u);
    EXPECT_EQ(m.failures[0].message, "unable to connect to server: Connection refused");
    EXPECT_EQ(m.failures[0].source, "s.txt:1");
}

TEST(Transcript, JsonQuotedAsHtmlInAPreBlockIsDecoded) {
    std::string json = fixture("iperf3/tcp-100m.json");
    std::string quoted;
    for (char c : json) quoted += c == '"' ? std::string("&quot;") : std::string(1, c);
    const auto m = parse_measurements("<pre>$ iperf3 -c h -J\n" + quoted + "</pre>\n", "p.html");
    ASSERT_EQ(m.throughput.size(), 1u);
    EXPECT_EQ(m.throughput[0].command, "iperf3 -c h -J");
}

TEST(Transcript, BrokenJsonInASessionNamesItsLineInTheSession) {
    try {
        parse_measurements("$ ls\nout.json\n$ iperf3 -c h -J\n{\n  \"start\": {\n  oops\n",
                           "s.txt");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), "json");
        EXPECT_EQ(e.line(), 6);
    }
}

TEST(Transcript, ARunLongerThanThePreambleLimitIsReadToItsEnd) {
    // Only text with no tool output in its first 64 MiB is refused; a day of -i lines is not.
    Repeated in("$ iperf -c h -i 0.5\nClient connecting to h, TCP port 5001\n",
                "[  1] 0.5000-1.0000 sec  56.1 MBytes   941 Mbits/sec\n", 1'500'000,
                "[  1] 0.0000-86400.0000 sec  9.25 TBytes   941 Mbits/sec\n");
    const auto m = parse_measurements(in, "day.txt");
    ASSERT_EQ(m.throughput.size(), 1u);
    EXPECT_DOUBLE_EQ(*m.throughput[0].sent_bps, 941e6);
    EXPECT_EQ(m.throughput[0].duration_s, 86400);
}

TEST(Transcript, MoreRunsThanAnySessionHoldsAreRefusedNotCollected) {
    // A million interrupted runs would be a million notes.
    Repeated in("", "Client connecting to h, TCP port 5001\n", 1'000'000, "");
    try {
        parse_measurements(in, "many.txt");
        FAIL();
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("more than 10000 runs"), std::string::npos)
            << e.what();
    }
    EXPECT_LT(in.chunks, 20);
}

TEST(Transcript, ARunEndsAtTheNextPromptNotAtTheNextHeader) {
    // Without the prompt lines the two clients would still be two runs; with them each run
    // knows its command.
    const std::string text = "$ iperf -c h\n" + fixture("iperf2/tcp-100m.client.txt") +
                             "$ iperf -c h -P 4\n" + fixture("iperf2/tcp-100m-P4.client.txt");
    const auto m = parse_measurements(text, "s.txt");
    ASSERT_EQ(m.throughput.size(), 2u);
    EXPECT_EQ(m.throughput[1].streams, 4);
    EXPECT_EQ(m.throughput[1].command, "iperf -c h -P 4");
}

}  // namespace
}  // namespace np
