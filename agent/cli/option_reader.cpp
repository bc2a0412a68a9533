// The command line and the environment, read into option_values.
#include "agent/cli/option_reader.hpp"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "evaluator/common/json_path.hpp"

namespace ptxbench::cli {

// --- option_values ---

const option& option_values::row(const std::string& id) const {
  for (const option* o : m_declared)
    if (o->id == id) return *o;
  throw std::logic_error("the command reads option '" + id + "' that it does not declare");
}

bool option_values::has(const std::string& id) const { return given(id) != nullptr; }

const given_value* option_values::given(const std::string& id) const {
  row(id);
  auto it = m_given.find(id);
  return it == m_given.end() ? nullptr : &it->second;
}

void option_values::set(const std::string& id, given_value v) { m_given[row(id).id] = std::move(v); }

void option_values::append(const std::string& id, const nlohmann::json& items) {
  auto& value = m_given.at(row(id).id).value;
  for (const auto& item : items) value.push_back(item);
}

std::optional<nlohmann::json> option_values::value_or_default(const std::string& id) const {
  if (const given_value* g = given(id)) return g->value;
  const option& o = row(id);
  if (o.default_value.empty()) return std::nullopt;
  return value_from_text(o, o.default_value, "the default of --" + o.flag);
}

bool option_values::flag(const std::string& id) const {
  auto v = value_or_default(id);
  return v && v->get<bool>();
}

std::optional<std::string> option_values::text_if(const std::string& id) const {
  auto v = value_or_default(id);
  if (!v) return std::nullopt;
  return v->get<std::string>();
}

std::optional<int64_t> option_values::integer_if(const std::string& id) const {
  auto v = value_or_default(id);
  if (!v) return std::nullopt;
  return v->get<int64_t>();
}

std::optional<double> option_values::number_if(const std::string& id) const {
  auto v = value_or_default(id);
  if (!v) return std::nullopt;
  return v->get<double>();
}

std::optional<std::string> option_values::given_text(const std::string& id) const {
  const given_value* g = given(id);
  if (g == nullptr) return std::nullopt;
  return g->value.get<std::string>();
}

std::string option_values::text(const std::string& id) const {
  auto v = value_or_default(id);
  if (!v) throw std::logic_error("option '" + id + "' has no value and no default");
  return v->get<std::string>();
}

int64_t option_values::integer(const std::string& id) const {
  auto v = value_or_default(id);
  if (!v) throw std::logic_error("option '" + id + "' has no value and no default");
  return v->get<int64_t>();
}

std::vector<std::string> option_values::list(const std::string& id) const {
  auto v = value_or_default(id);
  return v ? v->get<std::vector<std::string>>() : std::vector<std::string>{};
}

std::vector<int64_t> option_values::integers(const std::string& id) const {
  auto v = value_or_default(id);
  return v ? v->get<std::vector<int64_t>>() : std::vector<int64_t>{};
}

// --- the command line ---

namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

class command_line {
 public:
  command_line(const std::string& program, option_values& values) : m_program(program), m_values(values) {}

  void read(int argc, const char* const* argv) {
    bool options_ended = false;
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (options_ended || arg == "-" || arg.empty() || arg[0] != '-') {
        positional(arg);
      } else if (arg == "--") {
        options_ended = true;
      } else if (arg == "-h" || arg == "--help") {
        m_values.help_requested = true;
      } else {
        const bool is_long = arg.rfind("--", 0) == 0;
        const auto eq = arg.find('=');
        const std::string name = arg.substr(is_long ? 2 : 1, eq == std::string::npos ? std::string::npos
                                                                                     : eq - (is_long ? 2 : 1));
        const option& o = is_long ? by_flag(name, arg) : by_short(name, arg);
        if (o.type == value_type::flag) {
          if (eq != std::string::npos) fail("--" + o.flag + " takes no value");
          take(o, "--" + o.flag, "true", nlohmann::json(true));
          continue;
        }
        std::string value;
        if (eq != std::string::npos) value = arg.substr(eq + 1);
        else if (i + 1 < argc) value = argv[++i];
        else fail("--" + o.flag + " needs a value (" + o.value_name + ")");
        take(o, "--" + o.flag, value, value_from_text(o, value, "--" + o.flag));
      }
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw input_error(what + " (" + m_program + " --help lists the options)");
  }

  const option& by_flag(const std::string& name, const std::string& arg) const {
    const option* nearest = nullptr;
    size_t best = 3;
    for (const option* o : m_values.declared()) {
      if (o->positional) continue;
      if (o->flag == name || std::find(o->aliases.begin(), o->aliases.end(), name) != o->aliases.end()) return *o;
      if (size_t d = edit_distance(o->flag, name); d < best) {
        best = d;
        nearest = o;
      }
    }
    fail("unknown option '" + arg + "'" + (nearest ? " (did you mean --" + nearest->flag + "?)" : ""));
  }

  const option& by_short(const std::string& name, const std::string& arg) const {
    for (const option* o : m_values.declared())
      if (o->short_flag != 0 && name == std::string(1, o->short_flag)) return *o;
    fail("unknown option '" + arg + "'");
  }

  void take(const option& o, const std::string& source, const std::string& text, nlohmann::json value) {
    given_value g{std::move(value), value_origin::command_line, source, text};
    if (m_values.has(o.id)) {
      if (o.type != value_type::list) fail(source + " is given twice");
      m_values.append(o.id, g.value);
      return;
    }
    m_values.set(o.id, std::move(g));
  }

  void positional(const std::string& arg) {
    for (const option* o : m_values.declared()) {
      if (!o->positional) continue;
      if (m_values.has(o->id) && o->type != value_type::list) continue;
      const std::string source = o->value_name;
      // Each argument is one item of a positional list: a file name may hold a comma.
      if (o->type == value_type::list) {
        if (arg.empty()) fail(source + ": an empty argument");
        take(*o, source, arg, nlohmann::json::array({arg}));
      } else {
        take(*o, source, arg, value_from_text(*o, arg, source));
      }
      return;
    }
    fail("unexpected argument '" + arg + "'");
  }

  const std::string& m_program;
  option_values& m_values;
};

}  // namespace

option_values read_options(const std::string& program, const std::vector<std::string>& ids, int argc,
                           const char* const* argv) {
  std::vector<const option*> declared;
  for (const auto& id : ids) declared.push_back(&find_option(id));
  option_values values(std::move(declared));
  command_line(program, values).read(argc, argv);
  if (values.help_requested) return values;
  for (const option* o : values.declared()) {
    if (o->env.empty() || values.has(o->id)) continue;
    const char* v = std::getenv(o->env.c_str());
    if (v == nullptr || *v == '\0') continue;
    values.set(o->id, {value_from_text(*o, v, o->env), value_origin::environment, o->env, v});
  }
  return values;
}

}  // namespace ptxbench::cli
