// sample_pcs: the PC-sampling probe's sequence (enable, stall reasons,
// configuration, work, start/stop, get data until nothing remains, disable),
// with every CUPTI failure a value and the buffers owned.
#include "evaluator/profile/pc_sampling.hpp"
#include "evaluator/profile/cupti_support.hpp"

#include <cupti.h>
#include <cupti_pcsampling.h>

#include <chrono>
#include <stdexcept>

#include "evaluator/common/clock.hpp"

namespace ptxbench {
namespace {

struct sampling_failure : std::runtime_error {
  sampling_failure(const std::string& what, bool machine) : std::runtime_error(what), machine(machine) {}
  bool machine;
};

void check(CUptiResult r, const char* what) {
  if (r == CUPTI_SUCCESS) return;
  throw sampling_failure(profile_detail::cupti_message(r, what), profile_detail::machine_cannot_profile(r));
}

// The record buffer CUPTI fills: one entry per PC, each with room for every reason.
struct sample_buffer {
  CUpti_PCSamplingData data{};
  std::vector<CUpti_PCSamplingPCData> pcs;
  std::vector<std::vector<CUpti_PCSamplingStallReason>> reasons;
  sample_buffer(size_t max_pcs, size_t n_reasons) : pcs(max_pcs), reasons(max_pcs) {
    data.size = sizeof(CUpti_PCSamplingData);
    data.collectNumPcs = max_pcs;
    data.pPcData = pcs.data();
    for (size_t i = 0; i < max_pcs; ++i) {
      reasons[i].resize(n_reasons);
      pcs[i].size = sizeof(CUpti_PCSamplingPCData);
      pcs[i].stallReason = reasons[i].data();
    }
  }
};

// Enabled on construction, disabled on destruction (also when work throws).
class sampling_session {
 public:
  explicit sampling_session(CUcontext c) : m_context(c) {
    CUpti_PCSamplingEnableParams en{CUpti_PCSamplingEnableParamsSize, nullptr, c};
    check(cuptiPCSamplingEnable(&en), "cuptiPCSamplingEnable");
  }
  ~sampling_session() {
    CUpti_PCSamplingDisableParams dis{CUpti_PCSamplingDisableParamsSize, nullptr, m_context};
    cuptiPCSamplingDisable(&dis);
  }
  sampling_session(const sampling_session&) = delete;
  sampling_session& operator=(const sampling_session&) = delete;

 private:
  CUcontext m_context;
};

std::map<uint32_t, std::string> stall_reasons(CUcontext c, std::vector<uint32_t>& indexes) {
  size_t n = 0;
  CUpti_PCSamplingGetNumStallReasonsParams nr{CUpti_PCSamplingGetNumStallReasonsParamsSize, nullptr, c, &n};
  check(cuptiPCSamplingGetNumStallReasons(&nr), "cuptiPCSamplingGetNumStallReasons");
  std::vector<std::vector<char>> storage(n, std::vector<char>(CUPTI_STALL_REASON_STRING_SIZE, '\0'));
  std::vector<char*> names(n);
  for (size_t i = 0; i < n; ++i) names[i] = storage[i].data();
  indexes.assign(n, 0);
  CUpti_PCSamplingGetStallReasonsParams sr{CUpti_PCSamplingGetStallReasonsParamsSize, nullptr, c, n, indexes.data(),
                                           names.data()};
  check(cuptiPCSamplingGetStallReasons(&sr), "cuptiPCSamplingGetStallReasons");
  std::map<uint32_t, std::string> out;
  for (size_t i = 0; i < n; ++i) out[indexes[i]] = std::string(names[i]);
  return out;
}

void configure(CUcontext c, uint32_t period, std::vector<uint32_t>& indexes, sample_buffer& buffer,
               pc_sampling_mode mode) {
  std::vector<CUpti_PCSamplingConfigurationInfo> cfg(6);
  cfg[0].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
  cfg[0].attributeData.stallReasonData.stallReasonCount = indexes.size();
  cfg[0].attributeData.stallReasonData.pStallReasonIndex = indexes.data();
  cfg[1].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
  cfg[1].attributeData.samplingDataBufferData.samplingDataBuffer = &buffer.data;
  cfg[2].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
  cfg[2].attributeData.samplingPeriodData.samplingPeriod = period;
  cfg[3].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
  cfg[3].attributeData.collectionModeData.collectionMode = mode == pc_sampling_mode::serialized
                                                               ? CUPTI_PC_SAMPLING_COLLECTION_MODE_KERNEL_SERIALIZED
                                                               : CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS;
  cfg[4].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_ENABLE_START_STOP_CONTROL;
  cfg[4].attributeData.enableStartStopControlData.enableStartStopControl = 1;
  cfg[5].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SCRATCH_BUFFER_SIZE;
  cfg[5].attributeData.scratchBufferSizeData.scratchBufferSize = size_t(64) << 20;
  CUpti_PCSamplingConfigurationInfoParams cp{CUpti_PCSamplingConfigurationInfoParamsSize, nullptr, c, cfg.size(),
                                             cfg.data()};
  check(cuptiPCSamplingSetConfigurationAttribute(&cp), "cuptiPCSamplingSetConfigurationAttribute");
}

// Drains CUPTI's records into `out`, keyed by (function, pc). Stop leaves
// what it collected in the configured buffer, so that is read first; each
// GetData then overwrites the buffer with more, until none remain. (Calling
// GetData first overwrote Stop's records: every profile came back with no
// samples, H100 with CUPTI 13.0, docs/gpu-runs.md 2026-12-06.)
void collect(CUcontext c, sample_buffer& buffer, const std::map<uint32_t, std::string>& names,
             std::map<std::pair<std::string, uint64_t>, std::map<std::string, uint64_t>>& by_pc,
             pc_sampling_result& out) {
  const auto take = [&] {
    out.total_samples += buffer.data.totalSamples;
    out.dropped_samples += buffer.data.droppedSamples;
    for (size_t i = 0; i < buffer.data.totalNumPcs && i < buffer.pcs.size(); ++i) {
      const CUpti_PCSamplingPCData& pc = buffer.pcs[i];
      auto& entry = by_pc[{pc.functionName ? pc.functionName : "", pc.pcOffset}];
      for (size_t r = 0; r < pc.stallReasonCount && r < buffer.reasons[i].size(); ++r) {
        const auto name = names.find(pc.stallReason[r].pcSamplingStallReasonIndex);
        entry[name == names.end() ? "unknown" : name->second] += pc.stallReason[r].samples;
      }
    }
    buffer.data.totalSamples = buffer.data.droppedSamples = 0;
    buffer.data.totalNumPcs = 0;
  };
  take();
  for (int round = 0; round < 100000; ++round) {
    CUpti_PCSamplingGetDataParams gd{CUpti_PCSamplingGetDataParamsSize, nullptr, c, &buffer.data};
    check(cuptiPCSamplingGetData(&gd), "cuptiPCSamplingGetData");
    take();
    if (buffer.data.remainingNumPcs == 0) break;
  }
}

}  // namespace

pc_sampling_result sample_pcs(CUcontext context, uint32_t period, size_t max_pcs, const std::function<void()>& prepare,
                              const std::function<void()>& work, pc_sampling_mode mode) {
  pc_sampling_result out;
  auto t0 = std::chrono::steady_clock::now();
  try {
    if (cuCtxSetCurrent(context) != CUDA_SUCCESS) throw sampling_failure("cuCtxSetCurrent failed", false);
    sampling_session session(context);
    std::vector<uint32_t> indexes;
    const std::map<uint32_t, std::string> names = stall_reasons(context, indexes);
    sample_buffer buffer(max_pcs, indexes.size());
    configure(context, period, indexes, buffer, mode);
    prepare();
    out.setup_ms = ms_since(t0);
    t0 = std::chrono::steady_clock::now();
    if (cuCtxSynchronize() != CUDA_SUCCESS) throw sampling_failure("cuCtxSynchronize before sampling failed", false);
    CUpti_PCSamplingStartParams st{CUpti_PCSamplingStartParamsSize, nullptr, context};
    check(cuptiPCSamplingStart(&st), "cuptiPCSamplingStart");
    work();
    CUpti_PCSamplingStopParams sp{CUpti_PCSamplingStopParamsSize, nullptr, context};
    check(cuptiPCSamplingStop(&sp), "cuptiPCSamplingStop");
    out.work_ms = ms_since(t0);
    t0 = std::chrono::steady_clock::now();
    std::map<std::pair<std::string, uint64_t>, std::map<std::string, uint64_t>> by_pc;
    collect(context, buffer, names, by_pc, out);
    for (auto& [key, stalls] : by_pc) out.pcs.push_back({key.first, key.second, std::move(stalls)});
    out.collect_ms = ms_since(t0);
    out.ok = true;
  } catch (const sampling_failure& e) {
    out.error = e.what();
    out.unavailable = e.machine;
  }
  return out;
}

}  // namespace ptxbench
