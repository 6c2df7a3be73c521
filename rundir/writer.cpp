#include "rundir/writer.hpp"

#include <nlohmann/json.hpp>

#include "common/run_dir.hpp"

namespace np {

RunDirWriter::RunDirWriter(std::filesystem::path dir, std::string mode)
    : dir_(std::move(dir)), mode_(std::move(mode)) {}

std::filesystem::path RunDirWriter::save(const std::string& name, const std::string& text) {
    const auto path = dir_.write(name, text);
    if (saved_.insert(name).second) files_.push_back(path);
    return path;
}

void RunDirWriter::remove(const std::string& name) {
    if (!saved_.erase(name)) return;
    dir_.remove(name);
    std::erase(files_, dir_.path() / name);
}

void RunDirWriter::begin(const std::string& phase) {
    current_ = phase;
    save_phases("running");
}

void RunDirWriter::done(const std::string& phase) {
    finished_.push_back(phase);
    current_.clear();
    save_phases("running");
}

void RunDirWriter::save_phases(const std::string& state, const std::string& stopped) {
    nlohmann::json j = {{"schema", "np-run-phases/1"},
                        {"mode", mode_},
                        {"state", state},  // running | stopped | complete
                        {"finished", finished_}};
    if (!current_.empty()) j["current"] = current_;
    if (!stopped.empty()) j["stopped"] = stopped;
    save(run_dir::phases(mode_), j.dump(2) + "\n");
}

}  // namespace np
