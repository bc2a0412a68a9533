#include "evaluator/protocol/protocol.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <thread>

namespace ptxbench::protocol {
namespace {

constexpr char k_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

void exit_when_orphaned(int period_ms) {
  const pid_t parent = ::getppid();
  std::thread([parent, period_ms] {
    while (true) {
      std::this_thread::sleep_for(std::chrono::milliseconds(period_ms));
      if (::getppid() != parent) std::_Exit(k_orphan_exit_status);
    }
  }).detach();
}

std::string base64_encode(const std::vector<char>& bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    out += k_alphabet[v >> 18];
    out += k_alphabet[(v >> 12) & 63];
    out += k_alphabet[(v >> 6) & 63];
    out += k_alphabet[v & 63];
  }
  size_t rest = bytes.size() - i;
  if (rest > 0) {
    uint32_t v = uint8_t(bytes[i]) << 16;
    if (rest == 2) v |= uint8_t(bytes[i + 1]) << 8;
    out += k_alphabet[v >> 18];
    out += k_alphabet[(v >> 12) & 63];
    out += rest == 2 ? k_alphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::vector<char> base64_decode(const std::string& text) {
  std::vector<char> out;
  out.reserve(text.size() / 4 * 3);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    if (c == '=') break;
    int v = base64_value(c);
    if (v < 0) throw std::runtime_error("base64: invalid character");
    acc = (acc << 6) | uint32_t(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(char((acc >> bits) & 0xFF));
    }
  }
  return out;
}

line_reader::status line_reader::read_line(std::string& line, int timeout_ms) {
  using clock = std::chrono::steady_clock;
  auto deadline = clock::now() + std::chrono::milliseconds(timeout_ms < 0 ? 0 : timeout_ms);
  while (true) {
    size_t nl = m_buffer.find('\n');
    if (nl != std::string::npos) {
      line = m_buffer.substr(0, nl);
      m_buffer.erase(0, nl + 1);
      return status::line;
    }
    int wait_ms = -1;
    if (timeout_ms >= 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
      if (left <= 0) return status::timeout;
      wait_ms = int(left);
    }
    pollfd p{m_fd, POLLIN, 0};
    int rc = ::poll(&p, 1, wait_ms);
    if (rc < 0) {
      if (errno == EINTR) continue;
      return status::eof;
    }
    if (rc == 0) return status::timeout;
    char chunk[65536];
    ssize_t n = ::read(m_fd, chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return status::eof;
    }
    if (n == 0) return status::eof;
    m_buffer.append(chunk, size_t(n));
  }
}

bool write_line(int fd, const std::string& line) {
  std::string data = line + '\n';
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += size_t(n);
  }
  return true;
}

nlohmann::json to_json(const worker_hello& h) {
  return {{"type", "hello"},         {"device", h.device},       {"device_count", h.device_count},
          {"name", h.name},          {"arch", h.arch},           {"sm_count", h.sm_count},
          {"l2_bytes", h.l2_bytes},  {"peak_tflops", h.peak_tflops}, {"copy_gbps", h.copy_gbps},
          {"start_ms", h.start_ms}};
}

worker_hello hello_from_json(const nlohmann::json& j) {
  worker_hello h;
  h.device = j.value("device", 0);
  h.device_count = j.value("device_count", 0);
  h.name = j.value("name", "");
  h.arch = j.value("arch", "");
  h.sm_count = j.value("sm_count", 0);
  h.l2_bytes = j.value("l2_bytes", int64_t(0));
  h.peak_tflops = j.value("peak_tflops", 0.0);
  h.copy_gbps = j.value("copy_gbps", 0.0);
  if (auto it = j.find("start_ms"); it != j.end() && it->is_object())
    for (const auto& [k, v] : it->items())
      if (v.is_number()) h.start_ms[k] = v.get<double>();
  return h;
}

nlohmann::json to_json(const worker_job& j) {
  return {{"type", "job"},
          {"id", j.id},
          {"task", task_to_json(j.t)},
          {"manifest", manifest_to_json(j.m)},
          {"cubin_b64", base64_encode(j.cubin)},
          {"seeds", j.seeds},
          {"hidden_seed", j.hidden_seed},
          {"timing_seed", j.timing_seed},
          {"run_timing", j.run_timing},
          {"count_only", j.count_only},
          {"hw_check", j.hw_check},
          {"count_launch", j.count_launch},
          {"count_size", j.count_size},
          {"count_seed", j.count_seed},
          {"profile_part", j.profile_part},
          {"time_limit_ms", j.time_limit_ms},
          {"timing_budget_ms", j.timing_budget_ms}};
}

worker_job job_from_json(const nlohmann::json& j) {
  worker_job job;
  job.id = j.at("id").get<uint64_t>();
  job.t = parse_task(j.at("task"), "job");
  job.m = parse_manifest(j.at("manifest"));
  job.cubin = base64_decode(j.at("cubin_b64").get<std::string>());
  job.seeds = j.at("seeds").get<std::vector<uint64_t>>();
  job.hidden_seed = j.at("hidden_seed").get<uint64_t>();
  job.timing_seed = j.value("timing_seed", uint64_t(0));
  job.run_timing = j.value("run_timing", true);
  job.count_only = j.value("count_only", false);
  job.hw_check = j.value("hw_check", false);
  job.count_launch = j.value("count_launch", 0);
  job.count_size = j.value("count_size", 0);
  job.count_seed = j.value("count_seed", uint64_t(0));
  job.profile_part = j.value("profile_part", "");
  if (!job.profile_part.empty() && job.profile_part != "counters" && job.profile_part != "sampling")
    throw std::runtime_error("job: profile_part is '" + job.profile_part + "' (counters or sampling)");
  if (job.count_size < 0 || size_t(job.count_size) >= job.t.sizes.size())
    throw std::runtime_error("job: count_size out of range");
  if (job.count_launch < 0 || size_t(job.count_launch) >= std::max<size_t>(1, job.m.launches.size()))
    throw std::runtime_error("job: count_launch out of range");
  job.time_limit_ms = j.value("time_limit_ms", 10000.0);
  job.timing_budget_ms = j.value("timing_budget_ms", 1500.0);
  return job;
}

nlohmann::json to_json(const worker_result& r) {
  nlohmann::json counts = nlohmann::json::array();
  for (const auto& c : r.dynamic.counts) counts.push_back({c.function, c.pc_offset, c.executed});
  return {{"type", "result"},
          {"id", r.id},
          {"partial", ptxbench::to_json(r.partial)},
          {"context_lost", r.context_lost},
          {"recycle", r.recycle},
          {"dynamic",
           {{"ran", r.dynamic.ran},
            {"error", r.dynamic.error},
            {"output_error", r.dynamic.output_error},
            {"candidate_failure", r.dynamic.candidate_failure},
            {"size_index", r.dynamic.size_index},
            {"launch", r.dynamic.launch},
            {"size", r.dynamic.size},
            {"task_flops", r.dynamic.task_flops},
            {"time_ms", r.dynamic.time_ms},
            {"phase_ms", r.dynamic.phase_ms},
            {"counts", counts},
            {"hw_metrics", r.dynamic.hw_metrics},
            {"hw_values", r.dynamic.hw_values},
            {"hw_passes", r.dynamic.hw_passes},
            {"hw_unavailable", r.dynamic.hw_unavailable}}},
          {"profile", to_json(r.profile)}};
}

worker_result result_from_json(const nlohmann::json& j) {
  worker_result r;
  r.id = j.at("id").get<uint64_t>();
  r.partial = evaluation_result_from_json(j.at("partial"));
  r.context_lost = j.value("context_lost", false);
  r.recycle = j.value("recycle", false);
  if (j.contains("profile") && j["profile"].is_object()) r.profile = profile_raw_from_json(j["profile"]);
  if (j.contains("dynamic")) {
    const auto& d = j["dynamic"];
    r.dynamic.ran = d.value("ran", false);
    r.dynamic.error = d.value("error", "");
    r.dynamic.output_error = d.value("output_error", "");
    r.dynamic.candidate_failure = d.value("candidate_failure", "");
    r.dynamic.size_index = d.value("size_index", 0);
    r.dynamic.launch = d.value("launch", 0);
    r.dynamic.size = d.value("size", "");
    r.dynamic.task_flops = d.value("task_flops", 0.0);
    r.dynamic.time_ms = d.value("time_ms", 0.0);
    if (d.contains("phase_ms") && d["phase_ms"].is_object())
      for (auto it = d["phase_ms"].begin(); it != d["phase_ms"].end(); ++it)
        if (it.value().is_number()) r.dynamic.phase_ms[it.key()] = it.value().get<double>();
    for (const auto& c : d.value("counts", nlohmann::json::array()))
      r.dynamic.counts.push_back({c.at(0).get<std::string>(), c.at(1).get<uint64_t>(), c.at(2).get<uint64_t>()});
    r.dynamic.hw_metrics = d.value("hw_metrics", std::vector<std::string>{});
    r.dynamic.hw_values = d.value("hw_values", std::vector<std::vector<double>>{});
    r.dynamic.hw_passes = d.value("hw_passes", 0);
    r.dynamic.hw_unavailable = d.value("hw_unavailable", false);
  }
  return r;
}

nlohmann::json to_json(const worker_progress& p) {
  return {{"type", "progress"}, {"what", p.what}, {"limit_ms", p.limit_ms}, {"launch", p.launch}, {"size", p.size}};
}

worker_progress progress_from_json(const nlohmann::json& j) {
  worker_progress p;
  p.what = j.value("what", "");
  p.limit_ms = j.value("limit_ms", 0.0);
  p.launch = j.value("launch", -1);
  p.size = j.value("size", "");
  return p;
}

}  // namespace ptxbench::protocol
