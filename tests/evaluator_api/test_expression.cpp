#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "evaluator/api/expression.hpp"
#include "evaluator/common/utf8.hpp"

using namespace ptxbench;

TEST_CASE("integer expressions follow precedence and the manifest's functions") {
  name_values n{{"M", 4096}, {"N", 384}, {"K", 1000}};
  CHECK(eval_int("cdiv(M,128)", n) == 32);
  CHECK(eval_int("cdiv(K,128)", n) == 8);
  CHECK(eval_int("M*N*4", n) == 4096LL * 384 * 4);
  CHECK(eval_int("2 + 3 * 4", n) == 14);
  CHECK(eval_int("(2 + 3) * 4", n) == 20);
  CHECK(eval_int("K / 3", n) == 333);
  CHECK(eval_int("K % 128", n) == 104);
  CHECK(eval_int("-N + 400", n) == 16);
  CHECK(eval_int("min(M, N) + max(M, N)", n) == 4096 + 384);
  CHECK(eval_int("2*M*N*K", n) == 2LL * 4096 * 384 * 1000);
}

TEST_CASE("real expressions give scalars such as the softmax scale") {
  CHECK(eval_real("rsqrt(D)", {{"D", 128}}) == doctest::Approx(0.08838834764));
  CHECK(eval_real("1/sqrt(D)", {{"D", 64}}) == doctest::Approx(0.125));
  CHECK(eval_real("K / 3", {{"K", 10}}) == doctest::Approx(3.3333333));
}

TEST_CASE("expression errors name the expression - the problem and the column") {
  name_values n{{"M", 4}};
  auto message = [&](const std::string& e) {
    try {
      eval_int(e, n);
    } catch (const expression_error& err) {
      return std::string(err.what());
    }
    return std::string("no error");
  };
  CHECK(message("cdiv(M,Q)").find("unknown name 'Q'") != std::string::npos);
  CHECK(message("cdiv(M,Q)").find("known: M") != std::string::npos);
  CHECK(message("M/0").find("division by zero") != std::string::npos);
  CHECK(message("M +").find("unexpected end") != std::string::npos);
  CHECK(message("M ) ").find("column 3") != std::string::npos);
  CHECK(message("foo(M)").find("unknown function 'foo'") != std::string::npos);
  CHECK(message("sqrt(M)").find("only allowed in real expressions") != std::string::npos);
  CHECK(message("9223372036854775807 * 2").find("overflow") != std::string::npos);
  CHECK(message("1.5*M").find("decimal literal") != std::string::npos);
}

TEST_CASE("check_expression accepts known names and rejects unknown ones") {
  CHECK_NOTHROW(check_expression("cdiv(M,128)*2", {{"M", 1}}));
  CHECK_THROWS_AS(check_expression("cdiv(X,128)", {{"M", 1}}), expression_error);
}

TEST_CASE("INT64_MIN divided by -1 is an overflow error and not a trap") {
  // Both raised SIGFPE in the process that parsed a model's manifest.
  CHECK_THROWS_WITH_AS(eval_int("(0-9223372036854775807-1)/(0-1)", {}), doctest::Contains("integer overflow"),
                       expression_error);
  CHECK_THROWS_WITH_AS(eval_int("(0-9223372036854775807-1)%(0-1)", {}), doctest::Contains("integer overflow"),
                       expression_error);
  CHECK_THROWS_AS(eval_int("cdiv(0-9223372036854775807-1, 0-1)", {}), expression_error);
  CHECK_NOTHROW(check_expression("(0-9223372036854775807-1)/(0-1)", {}));
}

TEST_CASE("cdiv does not overflow near INT64_MAX and rounds up") {
  CHECK(eval_int("cdiv(9223372036854775807, 2)", {}) == 4611686018427387904LL);
  CHECK(eval_int("cdiv(7, 2)", {}) == 4);
  CHECK(eval_int("cdiv(8, 2)", {}) == 4);
  CHECK(eval_int("cdiv(0-7, 2)", {}) == -3);
}

TEST_CASE("deeply nested expressions are refused instead of overflowing the stack") {
  std::string deep = std::string(30000, '(') + "1" + std::string(30000, ')');
  CHECK_THROWS_AS(eval_int(deep, {}), expression_error);  // over the length limit
  std::string nested = std::string(1500, '(') + "1" + std::string(1500, ')');
  CHECK_THROWS_WITH_AS(eval_int(nested, {}), doctest::Contains("nesting deeper"), expression_error);
  CHECK_THROWS_WITH_AS(eval_real(std::string(3000, '-') + "1", {}), doctest::Contains("nesting deeper"),
                       expression_error);
  CHECK(eval_int(std::string(50, '(') + "7" + std::string(50, ')'), {}) == 7);
}

TEST_CASE("malformed real literals are expression errors") {
  CHECK_THROWS_AS(eval_real(".", {}), expression_error);
  CHECK_THROWS_AS(eval_real("1.2.3", {}), expression_error);
  CHECK(eval_real("1.5", {}) == doctest::Approx(1.5));
}

TEST_CASE("error messages quote long expressions only in part") {
  std::string e = std::string(3000, '1') + "+";
  try {
    eval_int(e, {});
    FAIL("no error");
  } catch (const expression_error& err) {
    CHECK(std::string(err.what()).size() < 400);
  }
}

TEST_CASE("error messages quote a non-ASCII character whole - and a stray byte escaped") {
  auto message = [](const std::string& e) {
    try {
      eval_int(e, {{"M", 4}});
    } catch (const expression_error& err) {
      return std::string(err.what());
    }
    return std::string("no error");
  };
  // One byte of "é" made the message invalid UTF-8: evald's JSON answer threw.
  for (const std::string& e : {std::string("M \xc3\xa9"), std::string("\xc3\xa9"), std::string("M * (\xe6\x97\xa5)")}) {
    const std::string m = message(e);
    CAPTURE(m);
    CHECK(utf8_repaired(m) == m);
    CHECK_NOTHROW((void)nlohmann::json(m).dump());
  }
  CHECK(message("M \xc3\xa9").find("unexpected '\xc3\xa9'") != std::string::npos);
  CHECK(message("M \xff").find("unexpected '\\xff'") != std::string::npos);
  CHECK(message("M \xc3").find("unexpected '\\xc3'") != std::string::npos);
  // A long expression is quoted up to a character boundary.
  std::string longer = "M +";
  for (int i = 0; i < 300; ++i) longer += "\xc3\xa9";
  const std::string m = message(longer);
  CHECK(utf8_repaired(m) == m);
}

TEST_CASE("utf8 helpers cut between characters and repair invalid bytes") {
  const std::string e = "a\xc3\xa9" "b";
  CHECK(utf8_boundary(e, 2) == 1);
  CHECK(utf8_boundary(e, 3) == 3);
  CHECK(utf8_boundary(e, 10) == 4);
  CHECK(utf8_boundary("\xf0\x9f\x98\x80", 3) == 0);
  CHECK(utf8_char_length("\xf0\x9f\x98\x80", 0) == 4);
  CHECK(utf8_char_length("\xed\xa0\x80", 0) == 0);  // a surrogate
  CHECK(utf8_char_length("\xc0\xaf", 0) == 0);      // overlong
  CHECK(utf8_repaired("ok \xc3\xa9") == "ok \xc3\xa9");
  CHECK(utf8_repaired("a\xff" "b\xc3") == "a\xef\xbf\xbd" "b\xef\xbf\xbd");
}
