#pragma once
// The man page and the bash completion of a CLI11 app, generated from the app itself (its
// subcommands, options, descriptions, value types and defaults), so they say what --help says.
// The prose CLI11 cannot know (exit status, environment, files, examples) is hand-written in
// man_prose.cpp and passed in.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace np::docgen {

// Hand-written text, escaped for roff by man_page(). A paragraph with a term is a tagged
// paragraph (.TP); a paragraph whose text starts with "$ " is a command shown verbatim.
struct Paragraph {
    std::string term;
    std::string text;
};

struct Section {
    std::string title;  // e.g. "EXIT STATUS"
    std::vector<Paragraph> paragraphs;
};

struct ManProse {
    std::string summary;              // NAME: "np-explain - <summary>"
    std::vector<Paragraph> overview;  // DESCRIPTION, after the app's own description
    std::vector<Section> after;       // after the options and commands
};

// A section 1 man page in roff (man macros): NAME, SYNOPSIS, DESCRIPTION, OPTIONS, one
// subsection per subcommand under COMMANDS, then `prose.after`.
std::string man_page(const CLI::App& app, const std::string& version, const ManProse& prose);

// A bash completion script for the app's name: subcommands, each one's options, and the
// values of options that list them ({html,md}); interfaces for --iface; files otherwise.
std::string bash_completion(const CLI::App& app);

}  // namespace np::docgen
