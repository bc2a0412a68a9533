#include "evaluator/api/expression.hpp"

#include <cctype>
#include <cmath>
#include <limits>
#include <vector>

#include "evaluator/api/index_inputs.hpp"
#include "evaluator/common/utf8.hpp"

namespace ptxbench {

namespace {

// Recursive-descent evaluator over a value type that is either int64 or double.
template <typename T>
class parser {
 public:
  parser(const std::string& text, const name_values& names, bool check_only)
      : m_text(text), m_names(names), m_check_only(check_only) {}

  T parse() {
    if (m_text.size() > k_max_expression_chars)
      throw expression_error("expression of " + std::to_string(m_text.size()) + " characters; the limit is " +
                             std::to_string(k_max_expression_chars));
    T v = expr();
    skip_space();
    if (m_pos != m_text.size()) fail("unexpected '" + utf8_quoted_char(m_text, m_pos) + "'");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    // Quoted in full only when short: a hostile expression must not become a megabyte error message.
    // Cut between characters: half of one is invalid UTF-8, which JSON cannot carry.
    throw expression_error("expression \"" + utf8_shortened(m_text, 200) + "\": " + what + " at column " +
                           std::to_string(m_pos + 1));
  }
  // Nesting (parentheses, unary signs, calls) is bounded so that model-written
  // expressions cannot overflow the stack of the process that parses them.
  struct depth_guard {
    explicit depth_guard(parser& p) : m_p(p) {
      if (++m_p.m_depth > k_max_expression_depth)
        m_p.fail("nesting deeper than " + std::to_string(k_max_expression_depth));
    }
    ~depth_guard() { --m_p.m_depth; }
    parser& m_p;
  };
  void skip_space() {
    while (m_pos < m_text.size() && std::isspace(static_cast<unsigned char>(m_text[m_pos]))) ++m_pos;
  }
  bool accept(char c) {
    skip_space();
    if (m_pos < m_text.size() && m_text[m_pos] == c) {
      ++m_pos;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!accept(c)) fail(std::string("expected '") + c + "'");
  }

  T checked_mul(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      T r;
      if (__builtin_mul_overflow(a, b, &r)) fail("integer overflow");
      return r;
    } else {
      return a * b;
    }
  }
  T checked_add(T a, T b, bool subtract) {
    if constexpr (std::is_integral_v<T>) {
      T r;
      bool o = subtract ? __builtin_sub_overflow(a, b, &r) : __builtin_add_overflow(a, b, &r);
      if (o) fail("integer overflow");
      return r;
    } else {
      return subtract ? a - b : a + b;
    }
  }
  T divide(T a, T b, bool remainder) {
    if (b == 0) {
      if (m_check_only) return 0;
      fail("division by zero");
    }
    if constexpr (std::is_integral_v<T>) {
      // INT64_MIN / -1 does not fit (and traps on x86, for '%' too).
      if (b == -1 && a == std::numeric_limits<T>::min()) {
        if (m_check_only) return 0;
        fail("integer overflow");
      }
      return remainder ? a % b : a / b;
    } else {
      return remainder ? std::fmod(a, b) : a / b;
    }
  }

  T expr() {
    depth_guard guard(*this);
    T v = term();
    for (;;) {
      if (accept('+')) v = checked_add(v, term(), false);
      else if (accept('-')) v = checked_add(v, term(), true);
      else return v;
    }
  }
  T term() {
    T v = unary();
    for (;;) {
      if (accept('*')) v = checked_mul(v, unary());
      else if (accept('/')) v = divide(v, unary(), false);
      else if (accept('%')) v = divide(v, unary(), true);
      else return v;
    }
  }
  T unary() {
    depth_guard guard(*this);
    if (accept('-')) return checked_add(T(0), unary(), true);
    if (accept('+')) return unary();
    return primary();
  }
  T primary() {
    skip_space();
    if (m_pos >= m_text.size()) fail("unexpected end");
    char c = m_text[m_pos];
    if (accept('(')) {
      T v = expr();
      expect(')');
      return v;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return number();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') return name_or_call();
    fail("unexpected '" + utf8_quoted_char(m_text, m_pos) + "'");
  }
  T number() {
    size_t start = m_pos;
    while (m_pos < m_text.size() && (std::isdigit(static_cast<unsigned char>(m_text[m_pos])) || m_text[m_pos] == '.'))
      ++m_pos;
    std::string s = m_text.substr(start, m_pos - start);
    if constexpr (std::is_integral_v<T>) {
      if (s.find('.') != std::string::npos) fail("decimal literal in an integer expression");
      try {
        return static_cast<T>(std::stoll(s));
      } catch (...) {
        fail("integer literal out of range");
      }
    } else {
      if (s.find_first_of("0123456789") == std::string::npos || s.find('.') != s.rfind('.'))
        fail("malformed number '" + s + "'");
      return std::strtod(s.c_str(), nullptr);
    }
  }
  T name_or_call() {
    size_t start = m_pos;
    while (m_pos < m_text.size() &&
           (std::isalnum(static_cast<unsigned char>(m_text[m_pos])) || m_text[m_pos] == '_'))
      ++m_pos;
    std::string name = m_text.substr(start, m_pos - start);
    if (accept('(')) {
      std::vector<T> args{expr()};
      while (accept(',')) args.push_back(expr());
      expect(')');
      return call(name, args);
    }
    auto it = m_names.find(name);
    if (it == m_names.end()) {
      std::string known;
      for (const auto& [k, v] : m_names) known += (known.empty() ? "" : ", ") + k;
      m_pos = start;
      fail("unknown name '" + name + "' (known: " + known + ")");
    }
    return static_cast<T>(it->second);
  }
  T call(const std::string& f, const std::vector<T>& a) {
    auto arity = [&](size_t n) {
      if (a.size() != n) fail(f + "() takes " + std::to_string(n) + " argument(s)");
    };
    if (f == "cdiv") {
      arity(2);
      if constexpr (std::is_integral_v<T>) {
        if (a[1] == 0) return divide(a[0], a[1], false);
        // Ceiling division without the overflow of (a + b - 1) / b.
        T q = divide(a[0], a[1], false);
        bool inexact = q * a[1] != a[0];
        bool positive = (a[0] > 0) == (a[1] > 0);
        return inexact && positive ? q + 1 : q;
      } else {
        return std::ceil(divide(a[0], a[1], false));
      }
    }
    if (f == "min") return arity(2), std::min(a[0], a[1]);
    if (f == "max") return arity(2), std::max(a[0], a[1]);
    if (f == "sqrt" || f == "rsqrt") {
      arity(1);
      if constexpr (std::is_integral_v<T>) {
        fail(f + "() is only allowed in real expressions (scalars)");
      } else {
        return f == "sqrt" ? std::sqrt(a[0]) : 1.0 / std::sqrt(a[0]);
      }
    }
    if (f == "grouped_rows" || f == "varlen_total" || f == "varlen_sumsq" || f == "varlen_causal_pairs") {
      // The index inputs' totals (index_inputs.hpp), integer arguments only.
      arity(2);
      int64_t x = 0, y = 0;
      if constexpr (std::is_integral_v<T>) {
        x = a[0], y = a[1];
      } else {
        if (a[0] != std::floor(a[0]) || a[1] != std::floor(a[1]) || std::fabs(a[0]) > 1e15 || std::fabs(a[1]) > 1e15)
          fail(f + "() takes integer arguments");
        x = int64_t(a[0]), y = int64_t(a[1]);
      }
      try {
        int64_t v = f == "grouped_rows"   ? grouped_rows(x, y)
                    : f == "varlen_total" ? varlen_total(x, y)
                    : f == "varlen_sumsq" ? varlen_sumsq(x, y)
                                          : varlen_causal_pairs(x, y);
        return static_cast<T>(v);
      } catch (const expression_error& e) {
        fail(f + "(): " + e.what());
      }
    }
    fail("unknown function '" + f +
         "' (known: cdiv, min, max, sqrt, rsqrt, grouped_rows, varlen_total, varlen_sumsq, varlen_causal_pairs)");
  }

  const std::string& m_text;
  const name_values& m_names;
  bool m_check_only;
  size_t m_pos = 0;
  int m_depth = 0;
};

}  // namespace

int64_t eval_int(const std::string& expr, const name_values& names) {
  return parser<int64_t>(expr, names, false).parse();
}

double eval_real(const std::string& expr, const name_values& names) {
  return parser<double>(expr, names, false).parse();
}

void check_expression(const std::string& expr, const std::map<std::string, int64_t>& allowed) {
  parser<int64_t>(expr, allowed, true).parse();
}

}  // namespace ptxbench
