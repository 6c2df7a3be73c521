#include "analysis/readers/command.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "analysis/readers/text.hpp"

namespace np {
namespace {

// Words that run the rest of the line as a command, and how many words of their own they take.
bool unwrap(std::vector<std::string>& w) {
    if (w.empty()) return false;
    const std::string& first = w.front();
    const auto drop = [&](size_t n) {
        w.erase(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(std::min(n, w.size())));
        return true;
    };
    const auto drop_options = [&](size_t from, std::initializer_list<std::string_view> with_arg) {
        size_t i = from;
        while (i < w.size() && w[i].size() > 1 && w[i][0] == '-') {
            if (w[i] == "--") return drop(i + 1);
            bool takes = false;
            for (auto o : with_arg) takes = takes || w[i] == o;
            i += takes ? 2 : 1;
        }
        return drop(i);
    };
    if (first.find('=') != std::string::npos && first.front() != '-' && first.front() != '=')
        return drop(1);  // VAR=value
    if (first == "sudo") return drop_options(1, {"-u", "-g", "-C", "-h", "-p", "-U", "-r", "-t"});
    if (first == "time" || first == "nohup" || first == "exec" || first == "command")
        return drop_options(1, {});
    if (first == "env") return drop_options(1, {"-u", "-C", "-S"});
    if (first == "stdbuf") return drop_options(1, {});
    if (first == "nice") return drop_options(1, {"-n"});
    if (first == "ionice") return drop_options(1, {"-c", "-n", "-p"});
    if (first == "taskset") {
        drop_options(1, {});
        return drop(1);  // the CPU list
    }
    if (first == "numactl") return drop_options(1, {});
    if (first == "timeout") {
        drop_options(1, {"-s", "-k", "--signal", "--kill-after"});
        return drop(1);  // the duration
    }
    if (first == "ip" && w.size() > 3 && w[1] == "netns" && w[2] == "exec") return drop(4);
    if (first == "systemd-run")  // the tutorial supervises its server with it
        return drop_options(1, {"-u", "--unit", "-p", "--property", "-E", "--setenv", "--uid",
                                "--gid", "--slice", "--description", "-M", "--machine"});
    if (first == "nsenter") return drop_options(1, {"-t", "-n", "-m", "-p", "-u", "-i", "-U"});
    if (first == "ssh") {
        drop_options(1, {"-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L",
                         "-l", "-m", "-O", "-o", "-p", "-Q", "-R", "-S", "-W", "-w"});
        if (w.empty()) return false;
        drop(1);  // the host
        // The remote command is the rest, joined and split again: ssh h "iperf3 -c x".
        std::string rest;
        for (const auto& word : w) rest += (rest.empty() ? "" : " ") + word;
        w = shell_words(rest);
        return true;
    }
    return false;
}

std::optional<Tool> tool_named(std::string_view word) {
    // "/usr/bin/iperf3", "C:\iperf\iperf3.exe", "PING.EXE" (Windows' names ignore case).
    const size_t slash = word.find_last_of("/\\");
    if (slash != std::string_view::npos) word.remove_prefix(slash + 1);
    const std::string name = text::lower(word);
    word = name;
    if (word.ends_with(".exe")) word.remove_suffix(4);
    if (word == "iperf3") return Tool::iperf3;
    if (word == "iperf" || word == "iperf2") return Tool::iperf2;
    if (word == "ping" || word == "ping4" || word == "ping6") return Tool::ping;
    return std::nullopt;
}

std::optional<double> plain_number(std::string_view s) {
    double v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v) || v < 0)
        return std::nullopt;
    return v;
}

std::optional<int> small_int(std::string_view s, int lo, int hi) {
    int v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || v < lo || v > hi) return std::nullopt;
    return v;
}

// One option of iperf/iperf3: its canonical short name and whether it takes a value.
struct Option {
    std::string_view long_name;
    char short_name;
    bool takes_value;
};
constexpr Option kIperfOptions[] = {
    {"client", 'c', true},
    {"server", 's', false},
    {"udp", 'u', false},
    {"bandwidth", 'b', true},
    {"bitrate", 'b', true},
    {"parallel", 'P', true},
    {"window", 'w', true},
    {"len", 'l', true},
    {"length", 'l', true},
    {"port", 'p', true},
    {"reverse", 'R', false},
    {"time", 't', true},
    {"json", 'J', false},
    {"interval", 'i', true},
    {"format", 'f', true},
    {"bind", 'B', true},
    {"dualtest", 'd', false},
    {"tradeoff", 'r', false},
    {"num", 'n', true},
    {"bytes", 'n', true},
    {"blockcount", 'k', true},
    {"omit", 'O', true},
    {"title", 'T', true},
    {"tos", 'S', true},
    {"set-mss", 'M', true},
    {"mss", 'M', true},
    {"affinity", 'A', true},
    {"file", 'F', true},
    {"logfile", '\0', true},
    {"connect-timeout", '\0', true},
    {"cport", '\0', true},
    {"bidir", '\0', false},
    {"json-stream", '\0', false},
    {"full-duplex", '\0', false},
    {"enhanced", 'e', false},
    {"verbose", 'V', false},
    {"zerocopy", 'Z', false},
    {"no-delay", 'N', false},
    {"ipv6", '6', false},
    {"ipv4", '4', false},
    {"daemon", 'D', false},
    {"one-off", '1', false},
    {"fq-rate", '\0', true},
    {"congestion", 'C', true},
    {"linux-congestion", 'C', true},
    {"get-server-output", '\0', false},
    {"udp-counters-64bit", '\0', false},
    {"forceflush", '\0', false},
    {"timestamps", '\0', false},
    {"rcv-timeout", '\0', true},
    {"dscp", '\0', true},
    {"pidfile", 'I', true},
    {"trip-times", '\0', false},
    {"histograms", '\0', false},
    {"sum-only", '\0', false},
};

// One word of an iperf command line read as an option: which one it names ("--port=5201",
// "--port", "-p5201", "-p"), and the value the word itself carries.
struct OptionWord {
    const Option* opt = nullptr;
    std::string value;
    bool has_value = false;
};

OptionWord option_word(std::string_view a) {
    OptionWord o;
    if (a.starts_with("--")) {
        std::string_view name = a.substr(2);
        if (const size_t eq = name.find('='); eq != std::string_view::npos) {
            o.value = std::string(name.substr(eq + 1));
            o.has_value = true;
            name = name.substr(0, eq);
        }
        for (const auto& opt : kIperfOptions)
            if (opt.long_name == name) o.opt = &opt;
    } else {
        for (const auto& opt : kIperfOptions)
            if (opt.short_name == a[1]) o.opt = &opt;
        if (o.opt && o.opt->takes_value && a.size() > 2) {
            o.value = std::string(a.substr(2));  // -P4, -b1G
            o.has_value = true;
        }
    }
    return o;
}

// What one option of the run says, set on the command: a table by the option's long name.
// `client` is whether the run gave -c.
void apply_iperf_option(ToolCommand& c, bool& client, std::string_view name,
                        const std::string& value, Tool tool) {
    if (name == "client") {
        client = true;
        c.host = value;
    } else if (name == "server") {
        c.server = true;
    } else if (name == "udp") {
        c.udp = true;
    } else if (name == "bandwidth" || name == "bitrate") {
        // iperf3 -b RATE[/BURST]; iperf2 -b RATE[,STDEV] or RATEpps.
        std::string_view rate = value;
        rate = rate.substr(0, rate.find_first_of("/,"));
        c.bandwidth_text = value;
        c.bandwidth_bps = iperf_quantity(rate, tool, true);
    } else if (name == "parallel") {
        c.parallel = small_int(value, 1, 1 << 20);
    } else if (name == "window") {
        c.window_text = value;
        if (auto v = iperf_quantity(value, tool, false); v && *v <= 9e15)
            c.window_bytes = static_cast<int64_t>(*v);
    } else if (name == "len" || name == "length") {
        if (auto v = iperf_quantity(value, tool, false); v && *v >= 1 && *v <= 65535)
            c.length_bytes = static_cast<int>(*v);
    } else if (name == "port") {
        c.port = small_int(value, 1, 65535);
    } else if (name == "reverse") {
        c.reverse = true;
    } else if (name == "time") {
        c.time_s = plain_number(value);
    } else if (name == "omit") {
        c.omit_s = small_int(value, 1, 86400);
    } else if (name == "udp-counters-64bit") {
        c.udp_counters_64bit = true;
    } else if (name == "json") {
        c.json = true;
    } else if (name == "json-stream") {
        c.json = c.json_stream = true;
    } else if (name == "bidir" || name == "dualtest" || name == "full-duplex") {
        c.bidir = true;
    }
}

std::optional<ToolCommand> parse_iperf(std::vector<std::string> w, Tool tool,
                                       std::string_view text) {
    ToolCommand c;
    c.text = std::string(text);
    c.tool = tool;
    bool client = false;
    for (size_t i = 1; i < w.size(); ++i) {
        std::string_view a = w[i];
        if (a.size() < 2 || a[0] != '-') continue;  // a stray word: iperf ignores it too
        OptionWord o = option_word(a);
        if (!o.opt) continue;
        if (o.opt->takes_value && !o.has_value) {
            if (i + 1 >= w.size()) break;
            o.value = w[++i];
        }
        apply_iperf_option(c, client, o.opt->long_name, o.value, tool);
    }
    if (client == c.server) return std::nullopt;  // neither -c nor -s (or both): not a run
    if (client && c.host.empty()) return std::nullopt;
    return c;
}

std::optional<ToolCommand> parse_ping(const std::vector<std::string>& w, std::string_view text) {
    ToolCommand c;
    c.text = std::string(text);
    c.tool = Tool::ping;
    static constexpr std::string_view with_value = "cIisltwWpQSMmTFe";
    for (size_t i = 1; i < w.size(); ++i) {
        const std::string& a = w[i];
        if (a.size() > 1 && a[0] == '-') {
            const char o = a[1];
            if (with_value.find(o) == std::string_view::npos) continue;
            std::string value = a.size() > 2 ? a.substr(2) : (i + 1 < w.size() ? w[++i] : "");
            if (o == 'c') {
                int64_t n = 0;
                const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
                if (ec == std::errc() && p == value.data() + value.size() && n > 0) c.count = n;
            }
            if (o == 'I') c.interface = value;
            continue;
        }
        c.host = a;  // the destination is the last word that is not an option
    }
    if (c.host.empty()) return std::nullopt;
    return c;
}

}  // namespace

std::vector<std::string> shell_words(std::string_view line) {
    std::vector<std::string> words;
    std::string cur;
    bool in_word = false;
    for (size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (c == ' ' || c == '\t') {
            if (in_word) words.push_back(std::move(cur));
            cur.clear();
            in_word = false;
            continue;
        }
        if (c == '|' || c == ';' || c == '&' || c == '>' || c == '<') break;
        if (c == '#' && !in_word) break;
        if (c == '\\' && i + 1 < line.size()) {
            cur += line[++i];
            in_word = true;
            continue;
        }
        if (c == '\'' || c == '"') {
            const size_t close = line.find(c, i + 1);
            const size_t end = close == std::string_view::npos ? line.size() : close;
            cur.append(line.substr(i + 1, end - i - 1));
            i = end;
            in_word = true;
            continue;
        }
        cur += c;
        in_word = true;
    }
    if (in_word) words.push_back(std::move(cur));
    // "2>&1", "2>file": the digit belongs to the redirection.
    if (!words.empty() && words.back() == "2") {
        const size_t at = line.find("2>");
        if (at != std::string_view::npos) words.pop_back();
    }
    return words;
}

std::optional<double> iperf_quantity(std::string_view text, Tool tool, bool rate) {
    std::string_view s = text::trim(text);
    size_t n = 0;
    while (n < s.size() && ((s[n] >= '0' && s[n] <= '9') || s[n] == '.')) ++n;
    const auto v = plain_number(s.substr(0, n));
    if (!v) return std::nullopt;
    std::string_view suffix = s.substr(n);
    double scale = 1;
    if (!suffix.empty()) {
        const char u = suffix.front();
        const bool upper = u >= 'A' && u <= 'Z';
        const char lower = static_cast<char>(upper ? u - 'A' + 'a' : u);
        const int power = lower == 'k'   ? 1
                          : lower == 'm' ? 2
                          : lower == 'g' ? 3
                          : lower == 't' ? 4
                                         : 0;
        if (power == 0) return std::nullopt;
        bool binary;
        if (tool == Tool::iperf2) {
            binary = upper;
        } else {
            binary = !rate;
        }
        scale = std::pow(binary ? 1024.0 : 1000.0, power);
        suffix.remove_prefix(1);
        // "9gbps", "1Gbit", "100M/s": a unit after the suffix is what people write.
        if (!(suffix.empty() || suffix == "bps" || suffix == "bit" || suffix == "bits" ||
              suffix == "b" || suffix == "B" || suffix == "/s" || suffix == "bit/s"))
            return std::nullopt;
    }
    const double out = *v * scale;
    if (!std::isfinite(out)) return std::nullopt;
    return out;
}

std::optional<ToolCommand> parse_tool_command(std::string_view line, bool windows_shell) {
    const std::string_view text = text::trim(line);
    // cmd.exe and PowerShell take '\' for a path's separator, not an escape.
    std::string split(text);
    if (windows_shell) std::replace(split.begin(), split.end(), '\\', '/');
    std::vector<std::string> w = shell_words(split);
    for (int guard = 0; guard < 16 && unwrap(w); ++guard) {
    }
    if (w.empty()) return std::nullopt;
    const auto tool = tool_named(w.front());
    if (!tool) return std::nullopt;
    if (*tool == Tool::ping) return parse_ping(w, text);
    return parse_iperf(std::move(w), *tool, text);
}

}  // namespace np
