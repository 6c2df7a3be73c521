#pragma once
// A network interface's link as the kernel states it in sysfs, /sys/class/net/IFACE/: carrier,
// speed, duplex, MTU and the driver bound to its device (docs/design.md, "Kernel facts"). One
// source and one parser for both readers: preflight cats the files over SSH before anything is
// uploaded (src/experiment/experiment.cpp), np-probe reads them where it runs
// (src/probe/host_facts.cpp), and parse_link_state turns either's text into a LinkState.
#include <optional>
#include <string>
#include <string_view>

namespace np {

inline constexpr std::string_view kSysClassNet = "/sys/class/net/";

// The files under kSysClassNet + IFACE + "/" that hold the link facts.
namespace sysfs_link {
inline constexpr std::string_view kCarrier = "carrier";
inline constexpr std::string_view kSpeed = "speed";
inline constexpr std::string_view kDuplex = "duplex";
inline constexpr std::string_view kMtu = "mtu";
inline constexpr std::string_view kDriver = "device/driver";  // a symlink to the driver's dir
}  // namespace sysfs_link

// The files' text as read, each as the kernel prints it ("1\n", "-1\n", "full\n"); empty when
// it cannot be read: sysfs refuses carrier, speed and duplex of an iface that is down (EINVAL),
// and a virtual iface (veth, bridge) has no device, so no device/driver link.
struct SysfsLinkText {
    std::string carrier;      // 1 or 0
    std::string speed;        // Mbit/s; -1 when the driver does not know (SPEED_UNKNOWN)
    std::string duplex;       // full, half or unknown
    std::string mtu;          // bytes
    std::string driver_link;  // the link's target: ../../../bus/pci/drivers/e1000e
};

struct LinkState {
    bool carrier = false;
    std::optional<int> speed_mbps;   // absent when unknown: -1, 0, unreadable or not a number
    std::string duplex = "unknown";  // full | half | unknown
    std::optional<int> mtu_bytes;    // absent when unreadable or not a number
    std::string driver;              // empty when unknown: no device (veth, bridge) or not a name
};

// Never throws: what is unreadable or not what the kernel prints is unknown.
LinkState parse_link_state(const SysfsLinkText& text);

}  // namespace np
