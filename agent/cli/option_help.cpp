#include "agent/cli/option_help.hpp"

#include <algorithm>
#include <sstream>

#include "agent/loop/experiment_config.hpp"
#include "ptxbench/version.hpp"

namespace ptxbench::cli {
namespace {

constexpr size_t k_width = 100;

// `text` broken into lines of at most k_width columns, each starting with `indent`.
std::string wrap(const std::string& text, const std::string& indent, size_t width = k_width) {
  std::string out;
  std::string line = indent;
  std::istringstream words(text);
  std::string word;
  while (words >> word) {
    if (line.size() > indent.size() && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line = indent;
    }
    line += (line.size() > indent.size() ? " " : "") + word;
  }
  return out + line + "\n";
}

std::string number_text(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

std::string joined(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : separator) + s;
  return out;
}

// What the value may be: "an integer from 1 to 1000", "auto | off"...
std::string value_rule(const option& o) {
  auto scalar = [&o](value_type t) -> std::string {
    if (t == value_type::integer)
      return "integers from " + std::to_string(o.min_integer) + " to " + std::to_string(o.max_integer);
    if (t == value_type::number) return "a number from " + number_text(o.min_number) + " to " + number_text(o.max_number);
    if (t == value_type::choice) return joined(o.choices, " | ");
    return "";
  };
  switch (o.type) {
    case value_type::list: {
      if (o.positional) return "one or more";
      const std::string items = scalar(o.item);
      return "comma-separated, repeatable" + (items.empty() ? "" : "; each of " + items);
    }
    case value_type::shard:
      return "0 <= I < N <= " + std::to_string(o.max_integer);
    case value_type::integer:
      return "an integer from " + std::to_string(o.min_integer) + " to " + std::to_string(o.max_integer);
    default:
      return scalar(o.type);
  }
}

// The experiment config's own default of a config-backed option, when it is a
// value the option accepts (not an "unset" marker such as -1 or "").
std::string config_default(const option& o) {
  if (o.config_keys.size() != 1) return "";
  static const nlohmann::json defaults = experiment_config_to_json(experiment_config{});
  const nlohmann::json* v = &defaults;
  std::istringstream path(o.config_keys[0]);
  for (std::string key; std::getline(path, key, '.');) {
    if (!v->is_object() || !v->contains(key)) return "";
    v = &(*v)[key];
  }
  try {
    nlohmann::json checked = value_from_json(o, *v, "");
    return checked.is_string() ? checked.get<std::string>() : checked.dump();
  } catch (const std::exception&) {
    return "";
  }
}

std::string default_text(const option& o, bool with_config) {
  if (!o.default_value.empty()) return o.default_value;
  return with_config ? config_default(o) : "";
}

std::string flag_text(const option& o) {
  if (o.positional) return o.value_name + (o.type == value_type::list ? "..." : "");
  std::string s = (o.short_flag ? std::string("-") + o.short_flag + ", " : "") + "--" + o.flag;
  return o.value_name.empty() ? s : s + " " + o.value_name;
}

std::string details(const option& o, bool with_config) {
  std::vector<std::string> parts;
  if (std::string rule = value_rule(o); !rule.empty()) parts.push_back(rule);
  if (std::string d = default_text(o, with_config); !d.empty()) parts.push_back("default " + d);
  if (with_config && !o.config_keys.empty()) parts.push_back("config " + joined(o.config_keys, " and "));
  if (!o.env.empty()) parts.push_back(o.env);
  if (!o.aliases.empty()) parts.push_back("also --" + joined(o.aliases, ", --"));
  return parts.empty() ? "" : "[" + joined(parts, "; ") + "]";
}

std::string escape_cell(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

}  // namespace

std::string program_help() {
  std::string out = std::string("ptxbench ") + project_version + " (evaluator " + evaluator_version +
                    ")\n\nusage: ptxbench <command> [options]   (ptxbench <command> --help)\n"
                    "       ptxbench help options   (every option: variable, config key, bounds, default)\n\n";
  for (const command_spec* c : all_commands()) {
    std::string name = c->name;
    name.resize(9, ' ');
    out += "  " + name + c->summary + "\n";
  }
  return out +
         "\nEvery option can also be set by its environment variable (PTXBENCH_<OPTION>; each command's --help "
         "names them); the command line wins.\n"
         "exit codes: 0 ok, 1 the job ran and found failures, 2 usage or input error, 3 infrastructure error, "
         "130 interrupted\n";
}

std::string command_help(const command_spec& c) {
  std::string positionals;
  for (const auto& id : c.options)
    if (const option& o = find_option(id); o.positional) positionals += " [" + flag_text(o) + "]";
  std::string out = "usage: ptxbench " + c.name + " [options]" + positionals + "\n\n";
  std::istringstream paragraphs(c.description);
  for (std::string line; std::getline(paragraphs, line);) out += line.rfind("  ", 0) == 0 ? line + "\n" : wrap(line, "");
  out += "\noptions:\n";
  for (const auto& id : c.options) {
    const option& o = find_option(id);
    const bool required = std::find(c.required.begin(), c.required.end(), id) != c.required.end();
    out += "  " + flag_text(o) + (required ? "   (required)" : "") + "\n";
    out += wrap(o.help + " " + details(o, c.reads_experiment_config), "      ");
  }
  return out + "  -h, --help\n      show this help\n\n" +
         wrap("A variable (PTXBENCH_...) sets its option when the command line does not; an empty variable is "
              "unset, and a flag's variable takes 1/true/yes/on or 0/false/no/off.",
              "");
}

std::string commands_synopsis() {
  std::string out;
  for (const command_spec* c : all_commands()) {
    std::string head = "ptxbench " + c->name;
    head.resize(17, ' ');
    std::string line = head;
    auto add = [&](const std::string& part) {
      if (line.size() > head.size() && line.size() + 1 + part.size() > 118) {
        out += line + "\n";
        line = std::string(head.size(), ' ');
        line += part;
      } else {
        line += (line.size() > head.size() ? " " : "") + part;
      }
    };
    for (const auto& id : c->options) {
      const option& o = find_option(id);
      const bool required = std::find(c->required.begin(), c->required.end(), id) != c->required.end();
      std::string part = o.positional || o.short_flag == 0 ? flag_text(o) : "--" + o.flag + " " + o.value_name;
      if (o.type == value_type::choice) part = (o.positional ? "" : "--" + o.flag + " ") + joined(o.choices, "|");
      add(required ? part : "[" + part + "]");
    }
    out += line + "\n";
  }
  return out;
}

std::string options_reference() {
  std::string out =
      "# Options\n\n<!-- Written by `ptxbench help options` from agent/cli's option table; "
      "scripts/update_option_docs.sh rewrites it, and a test fails when it is stale. -->\n\n"
      "Every option is read from the command line, else from its environment variable (an empty variable is "
      "unset), else, for `run`, from its key in the experiment config; all three are checked by the same rules "
      "and a bad value is an input error (exit 2) naming where it came from. A flag's variable takes "
      "1/true/yes/on or 0/false/no/off. On `run --resume` the stored config wins: an option given with another "
      "value than the stored one is refused, except those marked *may change on resume*.\n\n```\n" +
      commands_synopsis() + "```\n";
  for (const command_spec* c : all_commands()) {
    out += "\n## ptxbench " + c->name + "\n\n" + c->summary + ".\n\n";
    const bool config = c->reads_experiment_config;
    out += config ? "| option | variable | config key | value | default | meaning |\n|---|---|---|---|---|---|\n"
                  : "| option | variable | value | default | meaning |\n|---|---|---|---|---|\n";
    for (const auto& id : c->options) {
      const option& o = find_option(id);
      const bool required = std::find(c->required.begin(), c->required.end(), id) != c->required.end();
      std::string meaning = o.help;
      if (required) meaning += " (required)";
      if (c->name == "run" && o.may_change_on_resume) meaning += " (may change on resume)";
      if (!o.aliases.empty()) meaning += " (also --" + joined(o.aliases, ", --") + ")";
      const std::string keys = o.config_keys.empty() ? "" : "`" + joined(o.config_keys, "`, `") + "`";
      out += "| `" + escape_cell(flag_text(o)) + "` | " + (o.env.empty() ? "" : "`" + o.env + "`") + " | " +
             (config ? keys + " | " : "") +
             escape_cell(value_rule(o)) + " | " + escape_cell(default_text(o, config)) + " | " + escape_cell(meaning) +
             " |\n";
    }
  }
  return out;
}

}  // namespace ptxbench::cli
