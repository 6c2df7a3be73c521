#pragma once
// The one place numbers become text and rows become a table, so every command prints the
// same units the same way.
#include <string>
#include <vector>

namespace np {

// Bit rates: "941.48 Mbit/s" below 10 Gbit/s, "9.415 Gbit/s" above (3 decimals keep the
// difference between 9.415 and 9.42 visible).
std::string format_rate(double bps);
// Nominal link rates as people name them: "1 Gbit/s", "2.5 Gbit/s", "100 Mbit/s".
std::string format_link_rate(double bps);
// Ratios as percent: 0.99204 -> "99.20 %".
std::string format_pct(double ratio, int decimals = 2);
// Counts with thousands grouping: 7134255 -> "7,134,255".
std::string format_count(double n);

// A plain-text table: columns padded to their widest cell, first column left-aligned, others
// right-aligned, a rule under the header.
class Table {
  public:
    explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
    void add_row(std::vector<std::string> row) { rows_.push_back({std::move(row), {}}); }
    // A line of its own under the last row (e.g. the command that produced it), indented and
    // left out of the column widths. Markdown has no place for it: render_markdown omits it.
    void add_note(std::string note) {
        if (!rows_.empty()) rows_.back().note = std::move(note);
    }
    std::string render() const;
    // The same table in Markdown (GitHub's pipe tables): first column left-aligned, others
    // right-aligned; a '|' inside a cell is escaped and a line break becomes a blank.
    std::string render_markdown() const;

  private:
    struct Row {
        std::vector<std::string> cells;
        std::string note;
    };
    std::vector<std::string> header_;
    std::vector<Row> rows_;
};

}  // namespace np
