#include <gtest/gtest.h>

#include "analysis/readers/rate.hpp"
#include "common/errors.hpp"

namespace np {
namespace {

TEST(Rate, AcceptsSuffixesCaseInsensitively) {
    EXPECT_DOUBLE_EQ(parse_link_rate_bps("10G", "--link"), 10e9);
    EXPECT_DOUBLE_EQ(parse_link_rate_bps("10g", "--link"), 10e9);
    EXPECT_DOUBLE_EQ(parse_link_rate_bps("100M", "--link"), 100e6);
    EXPECT_DOUBLE_EQ(parse_link_rate_bps("2.5G", "--link"), 2.5e9);
    EXPECT_DOUBLE_EQ(parse_link_rate_bps("400G", "--link"), 400e9);
    EXPECT_DOUBLE_EQ(parse_link_rate_bps("10M", "--link"), 10e6);
    EXPECT_DOUBLE_EQ(parse_link_rate_bps("1000000000", "--link"), 1e9);
}

TEST(Rate, AcceptsIperfStyleUnits) {
    EXPECT_DOUBLE_EQ(parse_rate_bps("9gbps", "-b"), 9e9);
    EXPECT_DOUBLE_EQ(parse_rate_bps("1Gbit/s", "-b"), 1e9);
    EXPECT_DOUBLE_EQ(parse_rate_bps("500k", "-b"), 500e3);
}

TEST(Rate, RejectsGarbageNamingTheField) {
    for (const char* bad : {"10X", "", "G", "-1G", "0", "abc", "1e3G", "10 G", "nan", "inf"}) {
        try {
            parse_link_rate_bps(bad, "--link");
            ADD_FAILURE() << "accepted '" << bad << "'";
        } catch (const InputError& e) {
            EXPECT_EQ(e.field(), "--link") << bad;
        }
    }
}

TEST(Rate, LinkRateMustBeBetween10MAnd400G) {
    EXPECT_THROW(parse_link_rate_bps("9M", "--link"), InputError);
    EXPECT_THROW(parse_link_rate_bps("401G", "--link"), InputError);
    EXPECT_THROW(parse_link_rate_bps("1T", "--link"), InputError);
}

}  // namespace
}  // namespace np
