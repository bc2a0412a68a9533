#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "evaluator/common/files.hpp"
#include "evaluator/common/json_path.hpp"
#include "temp_path.hpp"

using namespace ptxbench;

TEST_CASE("a directory is not read as an empty file") {
  auto dir = std::filesystem::temp_directory_path();
  CHECK_THROWS_WITH_AS(read_text_file(dir, "PTX"), doctest::Contains("is a directory"), input_error);
}

TEST_CASE("reads are bounded so that endless files end in an error") {
  CHECK_THROWS_WITH_AS(read_text_file("/dev/zero", "PTX", 1 << 20), doctest::Contains("larger than 1048576 bytes"),
                       input_error);
  auto path = ptxbench::test::unique_temp_path("ptxbench_files_bound.txt");
  std::ofstream(path) << std::string(100, 'a');
  CHECK(read_text_file(path, "", 100).size() == 100);
  CHECK_THROWS_AS(read_text_file(path, "", 99), input_error);
  std::filesystem::remove(path);
}

TEST_CASE("JSON files nested too deep are refused with the file name") {
  auto path = ptxbench::test::unique_temp_path("ptxbench_files_deep.json");
  std::ofstream(path) << std::string(50000, '[') << std::string(50000, ']');
  CHECK_THROWS_WITH_AS(read_json_file(path), doctest::Contains("nested deeper than 64"), input_error);
  std::filesystem::remove(path);
  CHECK(parse_json_bounded(std::string(60, '[') + std::string(60, ']'), "x").is_array());
}

TEST_CASE("a JSON file with a number past double is invalid JSON with the file name") {
  CHECK_THROWS_WITH_AS(parse_json_bounded("{\"samples\": 1e999}", "c.json"), doctest::Contains("c.json: invalid JSON"),
                       input_error);
}
