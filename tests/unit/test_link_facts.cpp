#include "common/link_facts.hpp"

#include <gtest/gtest.h>

namespace np {
namespace {

// The files as the kernel prints them, each with its newline (what np-probe reads), or as
// preflight's `echo "$f=$(cat …)"` hands them over, without it.
SysfsLinkText text(std::string carrier, std::string speed, std::string duplex, std::string mtu,
                   std::string driver_link) {
    return {std::move(carrier), std::move(speed), std::move(duplex), std::move(mtu),
            std::move(driver_link)};
}

TEST(LinkFacts, APhysicalNic) {
    const LinkState l = parse_link_state(
        text("1\n", "1000\n", "full\n", "1500\n", "../../../../bus/pci/drivers/e1000e"));
    EXPECT_TRUE(l.carrier);
    EXPECT_EQ(l.speed_mbps, 1000);
    EXPECT_EQ(l.duplex, "full");
    EXPECT_EQ(l.mtu_bytes, 1500);
    EXPECT_EQ(l.driver, "e1000e");
}

TEST(LinkFacts, AVethHasASpeedButNoDevice) {
    const LinkState l = parse_link_state(text("1", "10000", "full", "9000", ""));
    EXPECT_EQ(l.speed_mbps, 10000);
    EXPECT_EQ(l.mtu_bytes, 9000);
    EXPECT_EQ(l.driver, "");
}

TEST(LinkFacts, AVirtioNicThatDoesNotKnowItsSpeed) {
    // What /sys/class/net/eth0 of a KVM guest says: SPEED_UNKNOWN printed as -1.
    const LinkState l = parse_link_state(
        text("1\n", "-1\n", "unknown\n", "1400\n", "../../../../bus/virtio/drivers/virtio_net\n"));
    EXPECT_TRUE(l.carrier);
    EXPECT_EQ(l.speed_mbps, std::nullopt);
    EXPECT_EQ(l.duplex, "unknown");
    EXPECT_EQ(l.mtu_bytes, 1400);
    EXPECT_EQ(l.driver, "virtio_net");
}

TEST(LinkFacts, AnIfaceThatIsDownReadsAsEmpty) {
    // sysfs refuses carrier, speed and duplex of a down iface (EINVAL): nothing was read.
    const LinkState l = parse_link_state(text("", "", "", "1500\n", ""));
    EXPECT_FALSE(l.carrier);
    EXPECT_EQ(l.speed_mbps, std::nullopt);
    EXPECT_EQ(l.duplex, "unknown");
    EXPECT_EQ(l.mtu_bytes, 1500);
    EXPECT_EQ(l.driver, "");
    EXPECT_FALSE(parse_link_state(text("0\n", "", "", "", "")).carrier);
    EXPECT_EQ(parse_link_state({}).mtu_bytes, std::nullopt);
}

TEST(LinkFacts, AnUnknownSpeedIsNeverZeroOrHuge) {
    for (const char* speed : {"-1", "0", "4294967295", "2147483648", "99999999999999999999"})
        EXPECT_EQ(parse_link_state(text("1", speed, "full", "1500", "")).speed_mbps, std::nullopt)
            << speed;
    EXPECT_EQ(parse_link_state(text("1", "2147483647", "", "", "")).speed_mbps, 2147483647);
    EXPECT_EQ(parse_link_state(text("1", " 100 \n", "", "", "")).speed_mbps, 100);
}

TEST(LinkFacts, GarbageIsUnknown) {
    // Text no kernel prints (a node's reply is not trusted): nothing of it is taken.
    const LinkState l = parse_link_state(
        text("yes", "1000Mb/s", "Full\x1b[2J", "15OO", "../drivers/e1000e\x1b]0;owned\x07"));
    EXPECT_FALSE(l.carrier);
    EXPECT_EQ(l.speed_mbps, std::nullopt);
    EXPECT_EQ(l.duplex, "unknown");
    EXPECT_EQ(l.mtu_bytes, std::nullopt);
    EXPECT_EQ(l.driver, "");
    EXPECT_EQ(parse_link_state(text("1 1", "+100", "half duplex", "0x5dc", "..")).speed_mbps,
              std::nullopt);
    EXPECT_EQ(parse_link_state(text("", "", "", "", "../drivers/..")).driver, "");
    EXPECT_EQ(parse_link_state(text("", "", "", "", "/")).driver, "");
    EXPECT_EQ(parse_link_state(text("", "", "", "", std::string(100, 'a'))).driver, "");
    EXPECT_EQ(parse_link_state(text("", "", "half\n", "", "")).duplex, "half");
}

}  // namespace
}  // namespace np
