#include "src/docgen/cli_docs.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace np::docgen {
namespace {

// ---- the app as data ----

std::vector<const CLI::App*> commands(const CLI::App& app) {
    // CLI11 hides a subcommand or option by giving it an empty group.
    return app.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); });
}

std::vector<const CLI::Option*> options(const CLI::App& app, bool positional) {
    return app.get_options([positional](const CLI::Option* o) {
        return !o->get_group().empty() && o->get_positional() == positional &&
               (positional || o->nonpositional());
    });
}

bool is_flag(const CLI::Option* o) {
    return o->get_type_size() == 0;
}

// CLI11's type name is "TYPE" or "TYPE:CONSTRAINT" ("TEXT:{html,md}", "TEXT:INT in [1 - 65535]").
std::string placeholder(const CLI::Option* o) {
    if (o->get_positional()) return o->get_name(true);
    const std::string t = o->get_type_name();
    return t.substr(0, t.find(':'));
}

// More values than the placeholder names: "files ...", but not "NODE_A NODE_B" (two of two).
bool repeatable(const CLI::Option* o) {
    const std::string p = placeholder(o);
    const auto named = 1 + std::count(p.begin(), p.end(), ' ');
    return o->get_items_expected_max() > named;
}

std::string constraint(const CLI::Option* o) {
    const std::string t = o->get_type_name();
    const auto colon = t.find(':');
    return colon == std::string::npos ? "" : t.substr(colon + 1);
}

// The values of a constraint that lists them: "{html,md}" -> html, md.
std::vector<std::string> listed_values(const CLI::Option* o) {
    const std::string c = constraint(o);
    std::vector<std::string> values;
    if (c.size() < 2 || c.front() != '{' || c.back() != '}') return values;
    std::stringstream in(c.substr(1, c.size() - 2));
    for (std::string v; std::getline(in, v, ',');) values.push_back(v);
    return values;
}

std::vector<std::string> names(const CLI::Option* o) {
    std::vector<std::string> out;
    for (const auto& s : o->get_snames()) out.push_back("-" + s);
    for (const auto& l : o->get_lnames()) out.push_back("--" + l);
    return out;
}

std::string command_path(const CLI::App& app) {
    return app.get_parent() ? command_path(*app.get_parent()) + " " + app.get_name()
                            : app.get_name();
}

// ---- roff ----

// Text as roff: a backslash is \e, every '-' is \- (so options stay ASCII hyphen-minus when
// copied from the rendered page), and a line may not start with a control character.
std::string roff(const std::string& text) {
    std::string out;
    bool line_start = true;
    for (char c : text) {
        if (line_start && (c == '.' || c == '\'')) out += "\\&";
        line_start = c == '\n';
        if (c == '\\') {
            out += "\\e";
        } else if (c == '-') {
            out += "\\-";
        } else {
            out += c;
        }
    }
    return out;
}

// Text in a font, or plain (a .SS heading is bold already).
enum class Font { plain, bold, italic };

std::string in_font(Font f, const std::string& s) {
    switch (f) {
        case Font::bold:
            return "\\fB" + roff(s) + "\\fR";
        case Font::italic:
            return "\\fI" + roff(s) + "\\fR";
        case Font::plain:
            break;
    }
    return roff(s);
}

std::string value_text(const CLI::Option* o, bool fonts) {
    return in_font(fonts ? Font::italic : Font::plain, placeholder(o)) +
           (repeatable(o) ? " ..." : "");
}

// "--iface TEXT": how the option is written on a command line.
std::string option_usage(const CLI::Option* o, bool fonts) {
    if (o->get_positional()) return value_text(o, fonts);
    std::string out;
    for (const auto& n : names(o))
        out += (out.empty() ? "" : ", ") + in_font(fonts ? Font::bold : Font::plain, n);
    if (!is_flag(o)) out += " " + value_text(o, fonts);
    return out;
}

// "np-explain probe --iface TEXT [OPTIONS]", in fonts for SYNOPSIS or plain for a heading.
std::string usage(const CLI::App& app, bool fonts) {
    const Font value = fonts ? Font::italic : Font::plain;
    std::string out = in_font(fonts ? Font::bold : Font::plain, command_path(app));
    bool optional_options = false;
    for (const auto* o : options(app, false)) {
        if (o->get_required()) {
            out += " " + option_usage(o, fonts);
        } else {
            optional_options = true;
        }
    }
    if (optional_options) out += " [" + in_font(value, "OPTIONS") + "]";
    if (!commands(app).empty()) out += " " + in_font(value, "COMMAND");
    for (const auto* p : options(app, true)) {
        const std::string v = value_text(p, fonts);
        out += " " + (p->get_required() ? v : "[" + v + "]");
    }
    return out;
}

std::string option_entry(const CLI::Option* o) {
    std::string text = o->get_description();
    auto sentence = [&text](const std::string& s) {
        if (!text.empty() && text.back() != '.') text += '.';
        text += (text.empty() ? "" : " ") + s;
    };
    if (const auto values = listed_values(o); !values.empty()) {
        std::string list;
        for (const auto& v : values) list += (list.empty() ? "" : ", ") + v;
        sentence("One of: " + list + ".");
    } else if (const std::string c = constraint(o); !c.empty()) {
        sentence("Accepts: " + c + ".");
    }
    if (!o->get_default_str().empty()) sentence("Default: " + o->get_default_str() + ".");
    if (o->get_required()) sentence("Required.");
    return ".TP\n" + option_usage(o, true) + "\n" + roff(text) + "\n";
}

std::string options_list(const CLI::App& app, bool with_help) {
    std::string out;
    for (const auto* p : options(app, true)) out += option_entry(p);
    for (const auto* o : options(app, false))
        if (with_help || o != app.get_help_ptr()) out += option_entry(o);
    return out;
}

std::string paragraphs(const std::vector<Paragraph>& ps) {
    std::string out;
    for (const auto& p : ps) {
        if (!p.term.empty()) {
            out += ".TP\n" + in_font(Font::bold, p.term) + "\n" + roff(p.text) + "\n";
        } else if (p.text.rfind("$ ", 0) == 0) {
            out += ".PP\n.RS 4\n.nf\n" + roff(p.text) + "\n.fi\n.RE\n";
        } else {
            out += ".PP\n" + roff(p.text) + "\n";
        }
    }
    return out;
}

std::string upper(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
    return s;
}

// ---- bash ----

std::string words(const std::vector<std::string>& ws) {
    std::string out;
    for (const auto& w : ws) out += (out.empty() ? "" : " ") + w;
    return out;
}

// "a | b | c": a case pattern.
std::string alternatives(const std::vector<std::string>& ws) {
    std::string out;
    for (const auto& w : ws) out += (out.empty() ? "" : " | ") + w;
    return out;
}

std::vector<std::string> option_words(const CLI::App& app) {
    std::vector<std::string> out;
    for (const auto* o : options(app, false))
        for (const auto& n : names(o)) out.push_back(n);
    return out;
}

// The completions of one app (the root or a subcommand), as case arms on "$cmd $prev" and
// "$cmd".
void completion_arms(const CLI::App& app, const std::string& cmd, std::string& values,
                     std::string& words_arms) {
    for (const auto* o : options(app, false)) {
        std::string reply;
        if (const auto listed = listed_values(o); !listed.empty()) {
            reply = "$(compgen -W \"" + words(listed) + "\" -- \"$cur\")";
        } else if (o->get_lnames() == std::vector<std::string>{"iface"}) {
            reply = "$(compgen -W \"$(command ls /sys/class/net 2>/dev/null)\" -- \"$cur\")";
        } else {
            continue;
        }
        for (const auto& n : names(o))
            values += "        \"" + cmd + " " + n + "\") COMPREPLY=(" + reply + "); return ;;\n";
    }
    std::vector<std::string> subs;
    for (const auto* s : commands(app)) subs.push_back(s->get_name());
    words_arms += "        \"" + cmd + "\")\n";
    words_arms += "            if [[ $cur == -* ]]; then\n";
    words_arms += "                COMPREPLY=($(compgen -W \"" + words(option_words(app)) +
                  "\" -- \"$cur\"))\n";
    if (!subs.empty()) {
        words_arms += "            else\n";
        words_arms +=
            "                COMPREPLY=($(compgen -W \"" + words(subs) + "\" -- \"$cur\"))\n";
    }
    words_arms += "            fi ;;\n";
}

}  // namespace

std::string man_page(const CLI::App& app, const std::string& version, const ManProse& prose) {
    const std::string name = app.get_name();
    std::string out = ".\\\" " + name +
                      "(1). Generated by np-docgen from the command line the program parses and "
                      "src/docgen/man_prose.cpp: do not edit.\n";
    out += ".TH " + roff(upper(name)) + " 1 \"\" \"" + roff(name + " " + version) +
           "\" \"User Commands\"\n";
    // Left-aligned, no hyphenation: option names and paths stay whole.
    out += ".ad l\n.nh\n";
    out += ".SH NAME\n" + roff(name) + " \\- " + roff(prose.summary) + "\n";
    out += ".SH SYNOPSIS\n" + usage(app, true) + "\n";
    for (const auto* s : commands(app)) out += ".br\n" + usage(*s, true) + "\n";
    out += ".SH DESCRIPTION\n" + roff(app.get_description()) + "\n" + paragraphs(prose.overview);
    out += ".SH OPTIONS\n" + options_list(app, true);
    if (!commands(app).empty()) {
        out += ".SH COMMANDS\n";
        for (const auto* s : commands(app)) {
            out += ".SS \"" + usage(*s, false) + "\"\n";
            out += roff(s->get_description()) + "\n" + options_list(*s, false);
        }
    }
    for (const auto& section : prose.after)
        out += ".SH " + roff(section.title) + "\n" + paragraphs(section.paragraphs);
    return out;
}

std::string bash_completion(const CLI::App& app) {
    const std::string name = app.get_name();
    std::string function = "_" + name;
    std::replace(function.begin(), function.end(), '-', '_');

    std::string values, words_arms;
    completion_arms(app, "", values, words_arms);
    std::vector<std::string> subs;
    for (const auto* s : commands(app)) {
        subs.push_back(s->get_name());
        completion_arms(*s, s->get_name(), values, words_arms);
    }

    std::string out = "# bash completion for " + name +
                      ". Generated by np-docgen from the command line " + name +
                      " parses: do not edit.\n";
    out += function + "() {\n";
    out += "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd=\"\" i\n";
    if (!subs.empty()) {
        out += "    for ((i = 1; i < COMP_CWORD; i++)); do\n";
        out += "        case ${COMP_WORDS[i]} in\n";
        out += "            " + alternatives(subs) + ") cmd=${COMP_WORDS[i]}; break ;;\n";
        out += "        esac\n";
        out += "    done\n";
    }
    // The value of an option: listed values or interfaces; otherwise nothing here, and
    // `complete -o default` completes file names.
    if (!values.empty()) out += "    case \"$cmd $prev\" in\n" + values + "    esac\n";
    out += "    case \"$cmd\" in\n" + words_arms + "    esac\n";
    out += "}\n";
    out += "complete -o default -F " + function + " " + name + "\n";
    return out;
}

}  // namespace np::docgen
