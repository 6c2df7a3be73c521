#include "src/remote/command_shell.hpp"

#include <fmt/format.h>

#include <chrono>
#include <random>

#include "src/common/errors.hpp"

namespace np::remote {
namespace {

using Clock = std::chrono::steady_clock;

std::string random_token() {
    std::random_device rd;
    return fmt::format("__np_end_{:08x}{:08x}__", rd(), rd());
}

std::string trimmed(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
}

}  // namespace

CommandShell::CommandShell(Session& session) : session_(session) {
    ensure_started();
}

CommandShell::~CommandShell() = default;

void CommandShell::ensure_started() {
    if (shell_) return;
    token_ = random_token();
    shell_ = session_.start("exec sh");
    err_seen_ = shell_->err().size();
}

void CommandShell::abort() {
    shell_.reset();  // EOF, then TERM/KILL to the shell's process group
    running_ = false;
    held_empty_ = false;
    ready_.clear();
}

void CommandShell::begin(const std::string& command) {
    if (running_) throw std::logic_error("CommandShell: a command is still running");
    ensure_started();
    running_ = true;
    status_ = -1;
    started_ = Clock::now();
    log_.push_back({command, -1, 0, {}});
    err_.clear();
    held_empty_ = false;
    ready_.clear();
    // The subshell keeps cd/exports of one command from the next; the newline before ')'
    // ends a trailing comment. Both streams get the marker so each command's output is its own.
    shell_->write_line(
        fmt::format("( {}\n) </dev/null; printf '\\n%s %s\\n' {} \"$?\"; printf '\\n%s\\n' {} >&2",
                    command, token_, token_));
}

std::optional<std::string> CommandShell::read_line(Millis timeout) {
    const auto deadline = Clock::now() + timeout;
    while (ready_.empty() && running_) {
        const auto left = std::chrono::duration_cast<Millis>(deadline - Clock::now());
        auto line = shell_->read_line(left.count() > 0 ? left : Millis(0));
        if (!line) {
            if (shell_->eof()) {
                running_ = false;
                shell_.reset();
                throw EnvironmentError(
                    EnvironmentError::Kind::unreachable,
                    fmt::format("{}: the command shell ended unexpectedly", session_.name()));
            }
            return std::nullopt;
        }
        if (line->rfind(token_, 0) == 0) {
            status_ = std::atoi(line->c_str() + token_.size());
            held_empty_ = false;  // the separator printed before the marker
            collect_err(Millis(2000));
            running_ = false;
            log_.back().exit_status = status_;
            log_.back().seconds = std::chrono::duration<double>(Clock::now() - started_).count();
            log_.back().err = err_;
            break;
        }
        // An empty line is held back until we know it is not our separator.
        if (held_empty_) ready_.emplace_back();
        held_empty_ = line->empty();
        if (!held_empty_) ready_.push_back(std::move(*line));
    }
    if (ready_.empty()) return std::nullopt;
    std::string out = std::move(ready_.front());
    ready_.pop_front();
    return out;
}

void CommandShell::collect_err(Millis timeout) {
    const std::string marker = "\n" + token_ + "\n";
    const auto deadline = Clock::now() + timeout;
    for (;;) {
        const std::string& all = shell_->err();
        const size_t at = all.find(marker, err_seen_);
        if (at != std::string::npos) {
            err_ = all.substr(err_seen_, at - err_seen_);
            err_seen_ = at + marker.size();
            return;
        }
        if (Clock::now() >= deadline || shell_->eof()) {
            err_ = all.substr(err_seen_);
            err_seen_ = all.size();
            return;
        }
        shell_->read_line(Millis(20));  // pumps both streams; stdout is idle between commands
    }
}

CommandResult CommandShell::run(const std::string& command, Millis timeout) {
    begin(command);
    CommandResult r;
    const auto deadline = Clock::now() + timeout;
    while (running_ || !ready_.empty()) {
        const auto left = std::chrono::duration_cast<Millis>(deadline - Clock::now());
        if (left.count() <= 0) {
            abort();
            throw EnvironmentError(EnvironmentError::Kind::timeout,
                                   fmt::format("{}: `{}` did not finish within {} ms",
                                               session_.name(), command, timeout.count()));
        }
        if (auto line = read_line(left)) {
            r.out += *line;
            r.out += '\n';
        }
    }
    r.exit_status = status_;
    r.err = err_;
    return r;
}

CommandResult CommandShell::check(const std::string& command, Millis timeout) {
    CommandResult r = run(command, timeout);
    if (r.exit_status != 0) {
        throw EnvironmentError(
            EnvironmentError::Kind::remote,
            fmt::format("{}: `{}` exited with status {}{}", session_.name(), command, r.exit_status,
                        r.err.empty() ? "" : ": " + trimmed(r.err)));
    }
    return r;
}

}  // namespace np::remote
