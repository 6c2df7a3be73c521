#include "src/remote/command_shell.hpp"

#include <fmt/format.h>

#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <random>
#include <regex>

#include "common/errors.hpp"
#include "common/shell_quote.hpp"
#include "src/remote/shell.hpp"

namespace np::remote {
namespace {

using Clock = std::chrono::steady_clock;

std::string random_token() {
    std::random_device rd;
    return fmt::format("__np_end_{:08x}{:08x}__", rd(), rd());
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
    if (!functions_.empty()) shell_->write_line(functions_);
}

void CommandShell::define(std::string functions) {
    if (running_) throw std::logic_error("CommandShell: a command is still running");
    functions_ = std::move(functions);
    if (shell_) shell_->write_line(functions_);
}

void CommandShell::abort() {
    shell_.reset();  // EOF, then TERM/KILL to the shell's process group
    running_ = false;
    held_empty_ = false;
    ready_.clear();
}

void CommandShell::begin(const std::string& command, size_t max_out) {
    start_command(command, false, max_out);
}

void CommandShell::too_large(const std::string& what) {
    const std::string command = log_.empty() ? std::string() : log_.back().command;
    abort();
    throw OutputTooLarge(session_.name(), command, what);
}

void CommandShell::start_command(const std::string& command, bool stdin_from_channel,
                                 size_t max_out) {
    if (running_) throw std::logic_error("CommandShell: a command is still running");
    ensure_started();
    // The earlier commands' stderr is theirs: forgotten, so the shell's buffer stays small.
    shell_->discard_err(err_seen_);
    err_seen_ = 0;
    out_bytes_ = 0;
    max_out_ = max_out;
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
        fmt::format("( {}\n){}; printf '\\n%s %s\\n' {} \"$?\"; printf '\\n%s\\n' {} >&2", command,
                    stdin_from_channel ? "" : " </dev/null", token_, token_));
}

std::optional<std::string> CommandShell::read_line(Millis timeout) {
    const auto deadline = Clock::now() + timeout;
    while (ready_.empty() && running_) {
        const auto left = std::chrono::duration_cast<Millis>(deadline - Clock::now());
        std::optional<std::string> line;
        try {
            line = shell_->read_line(left.count() > 0 ? left : Millis(0));
        } catch (const OutputTooLarge& e) {
            too_large(e.exceeded());  // named by the command in the shell, not the shell
        }
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
        out_bytes_ += line->size() + 1;
        if (out_bytes_ > max_out_)
            too_large(fmt::format("printed more than {} MiB on stdout", max_out_ >> 20));
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
        try {  // pumps both streams; stdout is idle between commands
            shell_->read_line(Millis(20));
        } catch (const OutputTooLarge& e) {
            too_large(e.exceeded());
        }
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

std::string CommandShell::make_private_dir() {
    const std::string path =
        trimmed(check("mktemp -d \"${TMPDIR:-/tmp}/np-explain.XXXXXXXXXX\"").out);
    // The reply becomes an argument of rm -rf at teardown: only exactly what mktemp makes.
    if (!is_private_dir_reply(path)) {
        throw EnvironmentError(
            EnvironmentError::Kind::remote,
            fmt::format("{}: mktemp -d printed '{}', not a directory it makes "
                        "(is the node's TMPDIR an absolute path of plain names?)",
                        session_.name(), path));
    }
    return path;
}

namespace {

// The file to upload, opened: InputError when `name` is no file name or the file is no
// readable regular file. Its size is the st_size of `st`.
std::ifstream open_upload(const std::string& local_path, const std::string& name, struct stat& st) {
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
        throw InputError("upload", fmt::format("'{}' is not a file name", name));
    }
    std::ifstream in(local_path, std::ios::binary);
    if (!in || stat(local_path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
        throw InputError(local_path, fmt::format("cannot read it as a file: {}",
                                                 errno ? std::strerror(errno) : "not a file"));
    }
    return in;
}

// The node's side of an upload. The data follows on the shell's stdin once the command prints
// `ready`: `head -c` takes exactly its size (never a byte of the next command), and whatever
// happens to the copy, the second cat drains the rest, so no data is ever read as a command.
std::string upload_command(const std::string& ready, int64_t size, const std::string& path,
                           int mode) {
    return fmt::format(
        "command -v head >/dev/null && umask 077 && printf '%s\\n' {ready} && "
        "head -c {size} | {{ cat > {part}; s=$?; cat >/dev/null; exit $s; }} && "
        "chmod {mode:o} {part} && mv -f {part} {path} && sha256sum {path}",
        fmt::arg("ready", ready), fmt::arg("size", size),
        fmt::arg("part", shell_quote(path + ".part")), fmt::arg("mode", mode & 07777),
        fmt::arg("path", shell_quote(path)));
}

}  // namespace

std::string CommandShell::upload(const std::string& local_path, const std::string& dir,
                                 const std::string& name, int mode) {
    struct stat st {};
    std::ifstream in = open_upload(local_path, name, st);
    const std::string ours = sha256_file_hex(local_path);
    const std::string path = dir + "/" + name;
    const std::string part = path + ".part";
    const std::string ready = "__np_upload_ready_" + token_;
    const auto fail = [&](const std::string& why) {
        return EnvironmentError(
            EnvironmentError::Kind::remote,
            fmt::format("{}: uploading {} to {}: {}", session_.name(), local_path, path, why));
    };
    start_command(upload_command(ready, st.st_size, path, mode), true);
    const auto deadline = Clock::now() + Millis(30000);
    bool reading = false;
    std::string out;
    while (!reading && running_) {
        const auto left = std::chrono::duration_cast<Millis>(deadline - Clock::now());
        if (left.count() <= 0) {
            abort();
            throw fail("the node did not start reading the file");
        }
        if (auto line = read_line(left)) {
            if (*line == ready) {
                reading = true;
            } else {
                out += *line + "\n";
            }
        }
    }
    if (!reading) throw fail(fmt::format("cannot copy there: {}", trimmed(err_)));
    std::vector<char> buf(65536);
    while (in) {
        in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
        shell_->write(std::string_view(buf.data(), static_cast<size_t>(in.gcount())));
    }
    while (running_ || !ready_.empty()) {
        const auto left = std::chrono::duration_cast<Millis>(deadline - Clock::now());
        if (left.count() <= 0) {
            abort();
            throw fail("the copy did not finish within 30 s");
        }
        if (auto line = read_line(left)) out += *line + "\n";
    }
    if (status_ != 0) {
        run(shell_join({"rm", "-f", "--", part}));
        throw fail(fmt::format("exit status {}: {}", status_, trimmed(err_)));
    }
    const std::string theirs = out.substr(0, out.find(' '));
    if (theirs != ours) {
        run(shell_join({"rm", "-f", "--", path}));
        throw fail(fmt::format("it arrived damaged: sha256 {} on the node, {} here; removed it",
                               theirs, ours));
    }
    return path;
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
