// The run dir as one part: what the writer saves, the readers read back (rundir/).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/errors.hpp"
#include "common/run_dir.hpp"
#include "rundir/reader.hpp"
#include "rundir/writer.hpp"

namespace np {
namespace {

namespace fs = std::filesystem;

class RunDir : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/np-run-dir-test-XXXXXX";
        dir_ = mkdtemp(tmpl);
    }
    void TearDown() override { fs::remove_all(dir_); }
    // The fixture's run dir (a real run's files), copied so a test may spoil one.
    void copy_fixture() {
        for (const auto& e : fs::directory_iterator(fs::path(NP_FIXTURES_DIR) / "run-report"))
            if (e.path().filename() != "README.md")
                fs::copy_file(e.path(), dir_ / e.path().filename());
    }
    fs::path dir_;
};

TEST_F(RunDir, ReadsEachModesContractOutputsAndTraces) {
    copy_fixture();
    const RunDirContents c = read_run_dir(dir_);
    ASSERT_EQ(c.modes.size(), 1u);
    const RunDirMode& m = c.modes.front();
    EXPECT_EQ(m.contract.mode, "np-explain");
    EXPECT_EQ(m.contract.link_bps, 100e6);
    ASSERT_TRUE(m.explanation);
    EXPECT_FALSE(m.explanation->verdicts.empty());
    EXPECT_EQ(m.measurements.pings.size(), 1u);
    EXPECT_EQ(m.measurements.throughput.size(), 2u);
    EXPECT_EQ(m.traces.size(), 2u);
    EXPECT_TRUE(c.pairs.empty());
    EXPECT_TRUE(c.left_out.empty());
}

TEST_F(RunDir, AFileThatDoesNotParseIsLeftOutWithANoteButTheContractMustParse) {
    copy_fixture();
    std::ofstream(dir_ / run_dir::trace("np-explain", "node1-2")) << "{\"schema\": 7";
    std::ofstream(dir_ / run_dir::output("np-explain", run_dir::kUdp)) << "not json";
    const RunDirContents c = read_run_dir(dir_);
    ASSERT_EQ(c.modes.size(), 1u);
    EXPECT_EQ(c.modes.front().traces.size(), 1u);
    EXPECT_EQ(c.modes.front().measurements.throughput.size(), 1u);
    ASSERT_EQ(c.left_out.size(), 2u);
    EXPECT_NE(c.left_out[0].find("np-explain_udp.json"), std::string::npos) << c.left_out[0];
    EXPECT_NE(c.left_out[1].find("np-explain_trace_node1-2.json"), std::string::npos)
        << c.left_out[1];

    std::ofstream(dir_ / run_dir::contract("np-explain")) << "{\"mode\": 3}";
    EXPECT_THROW(read_run_dir(dir_), InputError);
}

TEST_F(RunDir, ADirWithoutContractsIsAnInputErrorNamingIt) {
    try {
        read_run_dir(dir_);
        FAIL() << "no error";
    } catch (const InputError& e) {
        EXPECT_EQ(e.field(), dir_.string());
    }
    EXPECT_THROW(read_run_dir(dir_ / "missing"), InputError);
}

TEST_F(RunDir, TheWriterSavesWholeFilesAndSaysWhichPhasesFinished) {
    {
        RunDirWriter w(dir_, "m");
        w.begin("ping");
        w.save(run_dir::output("m", run_dir::kPing), "ping output\n");
        w.done("ping");
        w.begin("tcp");
        w.save_phases("stopped", "node1-2 unreachable");
        EXPECT_EQ(w.files().size(), 2u);
        EXPECT_TRUE(w.saved("m_ping.txt"));
        w.remove("m_ping.txt");
        EXPECT_FALSE(fs::exists(dir_ / "m_ping.txt"));
    }
    std::ifstream in(dir_ / run_dir::phases("m"));
    const auto j = nlohmann::json::parse(in);
    EXPECT_EQ(j.at("schema"), "np-run-phases/1");
    EXPECT_EQ(j.at("state"), "stopped");
    EXPECT_EQ(j.at("finished"), nlohmann::json::array({"ping"}));
    EXPECT_EQ(j.at("current"), "tcp");
    EXPECT_EQ(j.at("stopped"), "node1-2 unreachable");
}

}  // namespace
}  // namespace np
