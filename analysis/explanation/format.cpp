#include "analysis/explanation/format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace np {

std::string format_rate(double bps) {
    if (std::fabs(bps) >= 10e9) return fmt::format("{:.3f} Gbit/s", bps / 1e9);
    return fmt::format("{:.2f} Mbit/s", bps / 1e6);
}

std::string format_link_rate(double bps) {
    if (bps >= 1e9) return fmt::format("{:g} Gbit/s", bps / 1e9);
    return fmt::format("{:g} Mbit/s", bps / 1e6);
}

std::string format_pct(double ratio, int decimals) {
    return fmt::format("{:.{}f} %", ratio * 100.0, decimals);
}

std::string format_count(double n) {
    std::string digits = fmt::format("{:.0f}", std::fabs(n));
    std::string out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return n < 0 ? "-" + out : out;
}

std::string Table::render() const {
    std::vector<size_t> width(header_.size(), 0);
    auto widen = [&](const std::vector<std::string>& row) {
        for (size_t i = 0; i < row.size() && i < width.size(); ++i)
            width[i] = std::max(width[i], row[i].size());
    };
    widen(header_);
    for (const auto& r : rows_) widen(r.cells);
    auto line = [&](const std::vector<std::string>& row) {
        std::string s;
        for (size_t i = 0; i < width.size(); ++i) {
            const std::string cell = i < row.size() ? row[i] : "";
            if (i > 0) s += "  ";
            s += i == 0 ? fmt::format("{:<{}}", cell, width[i])
                        : fmt::format("{:>{}}", cell, width[i]);
        }
        while (!s.empty() && s.back() == ' ') s.pop_back();
        return s + "\n";
    };
    std::string out = line(header_);
    size_t total = 0;
    for (auto w : width) total += w;
    out += std::string(total + 2 * (width.size() - 1), '-') + "\n";
    for (const auto& r : rows_) {
        out += line(r.cells);
        if (!r.note.empty()) out += "  " + r.note + "\n";
    }
    return out;
}

std::string Table::render_markdown() const {
    const auto line = [&](const std::vector<std::string>& row) {
        std::string s = "|";
        for (size_t i = 0; i < header_.size(); ++i) {
            std::string cell = i < row.size() ? row[i] : "";
            for (size_t at = cell.find('|'); at != std::string::npos; at = cell.find('|', at + 2))
                cell.replace(at, 1, "\\|");
            std::replace(cell.begin(), cell.end(), '\n', ' ');
            s += " " + cell + " |";
        }
        return s + "\n";
    };
    std::string out = line(header_) + "|";
    for (size_t i = 0; i < header_.size(); ++i) out += i == 0 ? " :-- |" : " --: |";
    out += "\n";
    for (const auto& r : rows_) out += line(r.cells);
    return out;
}

}  // namespace np
