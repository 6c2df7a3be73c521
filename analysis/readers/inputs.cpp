#include "analysis/readers/inputs.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "analysis/readers/iperf3.hpp"
#include "analysis/readers/transcript.hpp"
#include "common/errors.hpp"

namespace np {

const char* to_string(InputFormat f) {
    switch (f) {
        case InputFormat::auto_detect:
            return "auto";
        case InputFormat::iperf3:
            return "iperf3";
        case InputFormat::iperf2:
            return "iperf2";
        case InputFormat::ping:
            return "ping";
    }
    return "auto";
}

Measurements parse_measurements(ByteSource& source, const std::string& name, InputFormat format) {
    PeekableSource in(source);
    // The encoding, from the first bytes: UTF-8's byte-order mark (Windows editors write one)
    // is dropped; UTF-16 or UTF-32 (what Windows PowerShell's > writes) is named with its fix,
    // not taken for an unknown tool's output.
    const std::string_view bom = in.peek(4);
    const auto starts = [&](std::string_view b) { return bom.substr(0, b.size()) == b; };
    const auto wide = [&](const char* which) {
        return InputError("format",
                          fmt::format("is {} text (Windows PowerShell's > writes it): convert it "
                                      "to UTF-8 first, e.g. iconv -f {} -t UTF-8 FILE > "
                                      "FILE.txt, or Out-File -Encoding utf8 in PowerShell",
                                      which, which),
                          1);
    };
    using namespace std::string_view_literals;
    if (starts("\xEF\xBB\xBF"sv)) {
        in.skip(3);
    } else if (starts("\xFF\xFE\x00\x00"sv) || starts("\x00\x00\xFE\xFF"sv)) {
        throw wide("UTF-32");
    } else if (starts("\xFF\xFE"sv) || starts("\xFE\xFF"sv) ||
               (bom.size() == 4 && bom[0] != 0 && bom[1] == 0 && bom[2] != 0 && bom[3] == 0) ||
               (bom.size() == 4 && bom[0] == 0 && bom[1] != 0 && bom[2] == 0 && bom[3] != 0)) {
        throw wide("UTF-16");
    }
    // Only the first non-blank byte decides: JSON is an object, a text never starts with '{'.
    char first = 0;
    for (size_t n = 256;; n *= 2) {
        const std::string_view head = in.peek(n);
        const size_t at = head.find_first_not_of(" \t\r\n");
        if (at != std::string_view::npos) {
            first = head[at];
            break;
        }
        if (head.size() < n || n >= (size_t{1} << 20)) break;
    }
    const bool json = first == '{' && format != InputFormat::iperf2 && format != InputFormat::ping;
    if (json) return measurements_from(parse_iperf3(in), name);
    ToolFilter tools;
    if (format != InputFormat::auto_detect) {
        tools.iperf3 = format == InputFormat::iperf3;
        tools.iperf2 = format == InputFormat::iperf2;
        tools.ping = format == InputFormat::ping;
    }
    return read_text(in, name, tools);
}

Measurements parse_measurements(std::string_view text, const std::string& source,
                                InputFormat format) {
    StringSource in(text);
    return parse_measurements(in, source, format);
}

namespace {

int default_port(Tool t) {
    return t == Tool::iperf3 ? 5201 : 5001;
}

bool matches(const ServerBanner& b, const ThroughputTest& t) {
    if (t.from_server || b.tool != t.tool) return false;
    if (b.transport && *b.transport != t.transport) return false;
    return b.port.value_or(default_port(b.tool)) == t.port.value_or(default_port(t.tool));
}

// "server.txt:4" and "server.txt" are one file.
std::string_view file_of(std::string_view source) {
    const size_t colon = source.rfind(':');
    if (colon == std::string_view::npos) return source;
    const std::string_view after = source.substr(colon + 1);
    if (after.empty() || after.find_first_not_of("0123456789") != std::string_view::npos)
        return source;
    return source.substr(0, colon);
}

}  // namespace

void use_server_banners(Measurements& m) {
    if (m.throughput.empty() && m.pings.empty() && m.failures.empty() && !m.servers.empty()) {
        const ServerBanner& b = m.servers.front();
        throw InputError(b.source,
                         fmt::format("only a server's banner ({} server on port {}): no test "
                                     "reached it; give the client's output with it",
                                     to_string(b.tool), b.port.value_or(default_port(b.tool))));
    }
    for (const ServerBanner& b : m.servers) {
        const ServerBanner* unused = &b;
        for (auto& t : m.throughput) {
            if (!matches(b, t)) continue;
            unused = nullptr;
            // The same source's banner wins over another file's.
            const bool same_file = file_of(t.source) == file_of(b.source);
            if (t.socket_buffer_side == "server" && !same_file) continue;
            if (!t.reverse && b.buffer_bytes) {
                t.socket_buffer_bytes = b.buffer_bytes;
                t.socket_buffer_text = b.buffer_text;
                t.socket_buffer_side = "server";
            }
            if (!t.payload_bytes && b.datagram_bytes) t.payload_bytes = b.datagram_bytes;
        }
        // A server log with tests of its own is explained by them; only a bare banner is missed.
        const bool own_tests =
            std::any_of(m.throughput.begin(), m.throughput.end(), [&](const ThroughputTest& t) {
                return t.from_server && file_of(t.source) == file_of(b.source);
            });
        if (unused && !own_tests && (b.buffer_bytes || b.datagram_bytes))
            m.notes.push_back(
                fmt::format("{}: the {} server's banner (port {}) matches no client "
                            "run given with it: not used",
                            b.source, to_string(b.tool), b.port.value_or(default_port(b.tool))));
    }
}

}  // namespace np
