// The text helpers the readers share (analysis/readers/text.hpp): here the words and KEY=value
// lines a node's shell prints for `run`'s checks.
#include <gtest/gtest.h>

#include "analysis/readers/text.hpp"

namespace np::text {
namespace {

TEST(Text, WordsSplitAtBlanks) {
    EXPECT_EQ(words("  enp0s25 enp3s0\tctl0  "),
              (std::vector<std::string>{"enp0s25", "enp3s0", "ctl0"}));
    EXPECT_TRUE(words("   ").empty());
    EXPECT_TRUE(words("").empty());
}

TEST(Text, KeyValuesSplitAtTheFirstEqualsSign) {
    const auto kv = key_values("marker=1\nnoise\nifaces=enp0s25 enp3s0 \nneigh=a=b\nmarker=0");
    EXPECT_EQ(kv.at("marker"), "0");  // a later line wins
    EXPECT_EQ(kv.at("ifaces"), "enp0s25 enp3s0 ");
    EXPECT_EQ(kv.at("neigh"), "a=b");
    EXPECT_EQ(kv.size(), 3u);
    EXPECT_EQ(key_values("speed=\n").at("speed"), "");
    EXPECT_TRUE(key_values("").empty());
}

}  // namespace
}  // namespace np::text
