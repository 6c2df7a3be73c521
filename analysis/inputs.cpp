#include "analysis/inputs.hpp"

#include "analysis/error.hpp"
#include "analysis/iperf2.hpp"
#include "analysis/iperf3.hpp"
#include "analysis/ping.hpp"
#include "analysis/text.hpp"

namespace np {

const char* to_string(InputFormat f) {
    switch (f) {
        case InputFormat::auto_detect:
            return "auto";
        case InputFormat::iperf3_json:
            return "iperf3 JSON";
        case InputFormat::iperf2_text:
            return "iperf2 text";
        case InputFormat::ping_text:
            return "ping text";
    }
    return "auto";
}

InputFormat detect_format(std::string_view input) {
    const std::string_view t = text::trim(input);
    if (t.empty()) throw InputError("format", "empty input: nothing to explain", 1);
    if (input.find('\0') != std::string_view::npos)
        throw InputError("format", "binary data: not iperf3, iperf2 or ping output");
    if (t.front() == '{') return InputFormat::iperf3_json;
    // Only the head decides: a long file is not scanned for a stray phrase.
    const std::string_view head = t.substr(0, 64 * 1024);
    auto has = [&](std::string_view s) { return head.find(s) != std::string_view::npos; };
    if (t.starts_with("PING ") || has(" ping statistics ---")) return InputFormat::ping_text;
    if (has("Connecting to host") || has("iperf Done.") ||
        (has("Server listening on ") && !has(" port ")))
        throw InputError("format",
                         "this is iperf3's text output, which cannot be reconciled: rerun "
                         "iperf3 with -J (or --json-stream) and explain that");
    if (has("Client connecting to ") || has("Server listening on ") || has(" sec  ") ||
        has("[ ID] Interval"))
        return InputFormat::iperf2_text;
    throw InputError("format",
                     "not iperf3 JSON, iperf2 text or ping output (give the tool with "
                     "--iperf3/--iperf2/--ping if it is)",
                     1);
}

Measurements parse_measurements(std::string_view text, const std::string& source,
                                InputFormat format) {
    if (format == InputFormat::auto_detect) format = detect_format(text);
    switch (format) {
        case InputFormat::iperf3_json:
            return measurements_from(parse_iperf3(text), source);
        case InputFormat::iperf2_text:
            return measurements_from(parse_iperf2(text), source);
        case InputFormat::ping_text: {
            Measurements m;
            m.pings = parse_ping(text, source);
            return m;
        }
        case InputFormat::auto_detect:
            break;
    }
    return {};
}

}  // namespace np
