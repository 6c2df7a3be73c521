#include <gtest/gtest.h>

#include "analysis/explanation/format.hpp"

namespace np {
namespace {

TEST(Format, RatesInMbitBelow10GAndGbitAbove) {
    EXPECT_EQ(format_rate(941.48e6), "941.48 Mbit/s");
    EXPECT_EQ(format_rate(9414.8e6), "9414.80 Mbit/s");
    EXPECT_EQ(format_rate(25e9), "25.000 Gbit/s");
}

TEST(Format, LinkRatesAsPeopleNameThem) {
    EXPECT_EQ(format_link_rate(10e9), "10 Gbit/s");
    EXPECT_EQ(format_link_rate(2.5e9), "2.5 Gbit/s");
    EXPECT_EQ(format_link_rate(100e6), "100 Mbit/s");
}

TEST(Format, PercentAndCounts) {
    EXPECT_EQ(format_pct(0.99204), "99.20 %");
    EXPECT_EQ(format_count(7134255), "7,134,255");
    EXPECT_EQ(format_count(999), "999");
    EXPECT_EQ(format_count(1000), "1,000");
}

TEST(Format, TableAlignsColumns) {
    Table t({"mode", "tcp_mbps"});
    t.add_row({"ansible", "934.0"});
    t.add_row({"manual", "1000.0"});
    EXPECT_EQ(t.render(),
              "mode     tcp_mbps\n"
              "-----------------\n"
              "ansible     934.0\n"
              "manual     1000.0\n");
}

TEST(Format, TableInMarkdownEscapesPipesAndLineBreaks) {
    Table t({"test", "verdict"});
    t.add_row({"iperf3 TCP", "line-rate bound"});
    t.add_row({"a|b", "two\nlines"});
    EXPECT_EQ(t.render_markdown(),
              "| test | verdict |\n"
              "| :-- | --: |\n"
              "| iperf3 TCP | line-rate bound |\n"
              "| a\\|b | two lines |\n");
}

}  // namespace
}  // namespace np
