// `np-explain codes`: every finding code the explanation can raise, from the registry
// (analysis/explanation/codes.hpp) — the one list the engine, this command and docs/codes.md share
// (a test holds docs/codes.md to `codes --markdown`).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "analysis/explanation/codes.hpp"
#include "src/cli/commands.hpp"

namespace np::cli {
namespace {

nlohmann::json codes_json() {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& c : finding_codes()) {
        nlohmann::json supersedes = nlohmann::json::array();
        for (const auto& s : c.supersedes) supersedes.push_back(s);
        list.push_back({{"code", c.code},
                        {"severity", to_string(c.severity)},
                        {"verdict", c.verdict},
                        {"meaning", c.meaning},
                        {"places_loss", c.is_loss},
                        {"supersedes", supersedes}});
    }
    return {{"schema", "np-codes/1"}, {"codes", list}};
}

// A pipe table, every column left-aligned: the meanings are prose.
std::string codes_markdown() {
    const auto cell = [](std::string_view s) {
        std::string out;
        for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
        return out;
    };
    std::string out = "| code | severity | verdict | meaning |\n| :-- | :-- | :-- | :-- |\n";
    for (const auto& c : finding_codes())
        out += fmt::format("| `{}` | {} | {} | {} |\n", c.code, to_string(c.severity),
                           c.verdict.empty() ? "-" : cell(c.verdict), cell(c.meaning));
    return out;
}

enum class CodesFormat { text, json, markdown };

int run_codes(CodesFormat format) {
    if (format == CodesFormat::json) {
        fmt::print("{}\n", codes_json().dump(2));
        return 0;
    }
    if (format == CodesFormat::markdown) {
        fmt::print("{}", codes_markdown());
        return 0;
    }
    // One block per code: the meanings are sentences, too long for a table's column.
    for (const auto& c : finding_codes()) {
        fmt::print("{:<26} {:<5}{}\n    {}\n", c.code, to_string(c.severity),
                   c.verdict.empty() ? std::string() : fmt::format("  verdict: {}", c.verdict),
                   c.meaning);
    }
    return 0;
}

}  // namespace

void add_codes_command(CLI::App& app, Runner& run) {
    auto json = std::make_shared<bool>(false);
    auto markdown = std::make_shared<bool>(false);
    CLI::App* sub = app.add_subcommand(
        "codes",
        "List every finding code the explanation can raise: its severity, the verdict it gives "
        "a test and what it means, in verdict priority order");
    sub->add_flag("--json", *json,
                  "Print {\"schema\": \"np-codes/1\", \"codes\": [...]} with what each "
                  "supersedes");
    sub->add_flag("--markdown", *markdown,
                  "Print a Markdown table (code, severity, verdict, meaning): the one in "
                  "docs/codes.md")
        ->excludes("--json");
    sub->callback([&run, json, markdown] {
        const CodesFormat f = *json       ? CodesFormat::json
                              : *markdown ? CodesFormat::markdown
                                          : CodesFormat::text;
        run = [f] { return run_codes(f); };
    });
}

}  // namespace np::cli
