#include <gtest/gtest.h>

#include "analysis/readers/command.hpp"
#include "analysis/readers/transcript.hpp"

namespace np {
namespace {

ToolCommand cmd(const std::string& line) {
    const auto c = parse_tool_command(line);
    EXPECT_TRUE(c.has_value()) << line;
    return c.value_or(ToolCommand{});
}

TEST(Command, TheSeedTutorialsSshWrappedCommandsAreTheToolsOwn) {
    const auto udp = cmd("ssh root@node1-2 \"iperf3 -c 192.168.200.1 -u -b 1G -t 10\" # UDP");
    EXPECT_EQ(udp.tool, Tool::iperf3);
    EXPECT_FALSE(udp.server);
    EXPECT_EQ(udp.host, "192.168.200.1");
    EXPECT_TRUE(udp.udp);
    EXPECT_EQ(udp.bandwidth_bps, 1e9) << "iperf3 reads -b in decimal units";
    EXPECT_EQ(udp.time_s, 10);
    const auto ping = cmd("ssh root@node1-2 \"ping -c 5 -I enp0s25 192.168.200.1\" # latency");
    EXPECT_EQ(ping.tool, Tool::ping);
    EXPECT_EQ(ping.host, "192.168.200.1");
    EXPECT_EQ(ping.count, 5);
    EXPECT_EQ(ping.interface, "enp0s25");
    const auto server =
        cmd("ssh root@node1-1 \"systemd-run --unit=np-iperf3 --collect "
            "/usr/bin/iperf3 -s -p 5201\"");
    EXPECT_TRUE(server.server);
    EXPECT_EQ(server.port, 5201);
}

TEST(Command, Iperf2ReadsUppercaseSuffixesInBinaryAndLowercaseInDecimal) {
    const auto c =
        cmd("sudo ip netns exec npx-tr-b iperf -c 198.18.20.1 -u -b 90M -l 1200 "
            "-P 4 -w 4M -p 5002 -t 5");
    EXPECT_EQ(c.tool, Tool::iperf2);
    EXPECT_EQ(c.bandwidth_bps, 90.0 * (1 << 20));
    EXPECT_EQ(c.bandwidth_text, "90M");
    EXPECT_EQ(c.length_bytes, 1200);
    EXPECT_EQ(c.parallel, 4);
    EXPECT_EQ(c.window_bytes, 4 << 20);
    EXPECT_EQ(c.port, 5002);
    EXPECT_EQ(cmd("iperf -c h -u -b 9gbps").bandwidth_bps, 9e9);
}

TEST(Command, Iperf3ReadsRatesInDecimalAndSizesInBinary) {
    const auto c = cmd("iperf3 -c h -b 90M -w 4M -l 1k --parallel=2");
    EXPECT_EQ(c.bandwidth_bps, 90e6);
    EXPECT_EQ(c.window_bytes, 4 << 20);
    EXPECT_EQ(c.length_bytes, 1024);
    EXPECT_EQ(c.parallel, 2);
    EXPECT_EQ(cmd("iperf3 -c h -b1G -P4").bandwidth_bps, 1e9) << "values attached to the option";
    EXPECT_EQ(cmd("iperf3 -c h --bitrate=500M/100").bandwidth_bps, 500e6) << "a burst after /";
}

TEST(Command, JsonModesAndDirectionsAreRead) {
    EXPECT_TRUE(cmd("iperf3 -c h -J").json);
    EXPECT_TRUE(cmd("iperf3 -c h --json-stream").json_stream);
    EXPECT_TRUE(cmd("iperf3 -c h -R").reverse);
    EXPECT_TRUE(cmd("iperf3 -c h --bidir").bidir);
    EXPECT_TRUE(cmd("iperf3 -s").server);
}

TEST(Command, PipesRedirectionsAndWrappersAreNotTheTool) {
    const auto c = cmd("time stdbuf -oL timeout 30 iperf3 -c h -J | tee out.json");
    EXPECT_EQ(c.host, "h");
    EXPECT_TRUE(c.json);
    EXPECT_EQ(cmd("iperf -c h > log 2>&1").host, "h");
    EXPECT_EQ(cmd("env LC_ALL=C nice -n 5 iperf -c h").host, "h");
    EXPECT_EQ(cmd("/usr/local/bin/iperf3 -c 'h' -t 5").host, "h");
}

TEST(Command, LinesThatRunNoTestAreNoCommand) {
    for (const char* line : {"iperf Done.", "iperf3 --version", "ls -l", "ping", "iperf -h",
                             "iperf3: error - unable to connect to server", "cat out.json", ""})
        EXPECT_FALSE(parse_tool_command(line).has_value()) << line;
}

TEST(Prompt, UserAtHostPromptsMarkACommandWhateverItRuns) {
    const auto p = prompt_command("user@host:~$ iperf -c 192.168.1.1");
    ASSERT_TRUE(p);
    EXPECT_EQ(p->text, "iperf -c 192.168.1.1");
    EXPECT_TRUE(p->strong);
    EXPECT_EQ(prompt_command("root@node1-2:~# iperf3 -s")->text, "iperf3 -s");
    EXPECT_EQ(prompt_command("[user@host tmp]$ cat out.json")->text, "cat out.json");
    EXPECT_EQ(prompt_command("user@host ~ % ping -c 3 h")->text, "ping -c 3 h");
    EXPECT_EQ(prompt_command("PS C:\\Users\\me> iperf3.exe -c h")->text, "iperf3.exe -c h");
    EXPECT_EQ(prompt_command("$ ls")->text, "ls");
    EXPECT_EQ(prompt_command("root@npx-tr-b:~#")->text, "") << "the last prompt, nothing typed";
}

TEST(Prompt, BarePromptsAreWeakAndCountOnlyForATool) {
    const auto hash = prompt_command("# iperf3 -c h");
    ASSERT_TRUE(hash);
    EXPECT_FALSE(hash->strong);
    EXPECT_EQ(hash->text, "iperf3 -c h");
    // A shell comment in a code block reads like a root prompt; it runs no tool.
    const auto comment = prompt_command("# 1. Configure the data interface on both nodes");
    ASSERT_TRUE(comment);
    EXPECT_FALSE(comment->strong);
    EXPECT_FALSE(parse_tool_command(comment->text));
    EXPECT_EQ(prompt_command("MacBook:~ me$ iperf3 -c h")->text, "iperf3 -c h");
}

TEST(Prompt, ToolOutputIsNoPrompt) {
    for (const char* line :
         {"[  5] local 198.18.20.2 port 55522 connected to 198.18.20.1 port 5201",
          "64 bytes from 198.18.20.1: icmp_seq=1 ttl=64 time=0.092 ms",
          "Server listening on 5201 (test #1)",
          "------------------------------------------------------------",
          "[ ID] Interval           Transfer     Bitrate         Retr",
          "[SUM]   0.00-1.00   sec  11.1 MBytes  93.5 Mbits/sec",
          "--- 198.18.20.1 ping statistics ---",
          "rtt min/avg/max/mdev = 0.043/0.054/0.092/0.018 ms",
          "TCP window size: 16.0 KByte (default)", "\"host\": \"198.18.20.1\",", "iperf Done."})
        EXPECT_FALSE(prompt_command(line).has_value()) << line;
}

}  // namespace
}  // namespace np
