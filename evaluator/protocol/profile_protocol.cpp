#include "evaluator/protocol/profile_protocol.hpp"

namespace ptxbench::protocol {

const std::vector<std::string>& profile_counter_metrics() {
  static const std::vector<std::string> metrics = {
      "gpu__time_duration.sum",
      "sm__throughput.avg.pct_of_peak_sustained_elapsed",
      "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
      "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed",
      "dram__throughput.avg.pct_of_peak_sustained_elapsed",
      "lts__throughput.avg.pct_of_peak_sustained_elapsed",
      "lts__t_sector_hit_rate.pct",
      "sm__warps_active.avg.pct_of_peak_sustained_active",
      "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
      "dram__bytes.sum",
  };
  return metrics;
}

nlohmann::json to_json(const profile_raw& p) {
  nlohmann::json pcs = nlohmann::json::array();
  for (const auto& pc : p.pcs) pcs.push_back({pc.function, pc.pc_offset, pc.samples});
  return {{"part", p.part},
          {"ran", p.ran},
          {"error", p.error},
          {"unavailable", p.unavailable},
          {"metrics", p.metrics},
          {"ranges", p.ranges},
          {"values", p.values},
          {"registers", p.registers},
          {"shared_bytes", p.shared_bytes},
          {"passes", p.passes},
          {"total_samples", p.total_samples},
          {"dropped_samples", p.dropped_samples},
          {"pcs", pcs},
          {"time_ms", p.time_ms},
          {"phase_ms", p.phase_ms}};
}

profile_raw profile_raw_from_json(const nlohmann::json& j) {
  profile_raw p;
  p.part = j.value("part", "");
  p.ran = j.value("ran", false);
  p.error = j.value("error", "");
  p.unavailable = j.value("unavailable", false);
  p.metrics = j.value("metrics", std::vector<std::string>{});
  p.ranges = j.value("ranges", std::vector<std::string>{});
  p.values = j.value("values", std::vector<std::vector<double>>{});
  p.registers = j.value("registers", std::vector<int>{});
  p.shared_bytes = j.value("shared_bytes", std::vector<int>{});
  p.passes = j.value("passes", 0);
  p.total_samples = j.value("total_samples", uint64_t(0));
  p.dropped_samples = j.value("dropped_samples", uint64_t(0));
  for (const auto& pc : j.value("pcs", nlohmann::json::array()))
    p.pcs.push_back({pc.at(0).get<std::string>(), pc.at(1).get<uint64_t>(),
                     pc.at(2).get<std::map<std::string, uint64_t>>()});
  p.time_ms = j.value("time_ms", 0.0);
  p.phase_ms = j.value("phase_ms", std::map<std::string, double>{});
  return p;
}

}  // namespace ptxbench::protocol
