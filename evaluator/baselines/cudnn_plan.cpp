// Execution plans and variant packs for a finalized cuDNN operation graph.
#include <utility>

#include "evaluator/baselines/cudnn_api.hpp"
#include "evaluator/baselines/cudnn_graph.hpp"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace ptxbench::cudnn {
namespace {

// Engine configurations the heuristic in `mode` proposes, best first.
std::vector<std::shared_ptr<descriptor>> heuristic_configs(const graph& g, cudnnBackendHeurMode_t mode) {
  descriptor heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  cudnnBackendDescriptor_t op_graph = g.operation_graph();
  heur.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op_graph, "heuristic graph")
      .set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode, "heuristic mode");
  heur.finalize("engine heuristic");
  int64_t count = 0;
  check(load().backend_get(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                           nullptr),
        "heuristic result count");
  std::vector<std::shared_ptr<descriptor>> configs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int64_t i = 0; i < count; ++i) {
    configs.push_back(std::make_shared<descriptor>(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
    raw.push_back(configs.back()->get());
  }
  int64_t got = 0;
  if (count > 0)
    check(load().backend_get(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got,
                             raw.data()),
          "heuristic results");
  configs.resize(static_cast<size_t>(got));
  return configs;
}

int64_t engine_index(const descriptor& config) {
  try {
    descriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    cudnnBackendDescriptor_t raw = engine.get();
    int64_t n = 0;
    if (load().backend_get(config.get(), CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &raw) !=
        CUDNN_STATUS_SUCCESS)
      return -1;
    int64_t index = -1;
    if (load().backend_get(raw, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, &index) !=
        CUDNN_STATUS_SUCCESS)
      return -1;
    return index;
  } catch (const error&) {
    return -1;  // the index only decorates the baseline's name
  }
}

}  // namespace

std::vector<plan> make_plans(cudnnHandle_t handle, const graph& g, int max_plans, std::string& rejected) {
  std::vector<plan> plans;
  for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    std::vector<std::shared_ptr<descriptor>> configs;
    try {
      configs = heuristic_configs(g, mode);
    } catch (const error& e) {
      rejected += std::string(rejected.empty() ? "" : "; ") + e.what();
      continue;
    }
    if (configs.empty())
      rejected += std::string(rejected.empty() ? "" : "; ") + "heuristic mode " + std::to_string(mode) +
                  " proposed no engine";
    for (auto& config : configs) {
      if (static_cast<int>(plans.size()) >= max_plans) return plans;
      try {
        auto p = std::make_shared<descriptor>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
        cudnnBackendDescriptor_t raw = config->get();
        p->set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle, "plan handle")
            .set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &raw, "plan config");
        p->finalize("execution plan");
        int64_t workspace = 0, n = 0;
        check(load().backend_get(p->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n,
                                 &workspace),
              "plan workspace size");
        plans.push_back(plan{config, p, workspace, engine_index(*config)});
      } catch (const error& e) {
        rejected += std::string(rejected.empty() ? "" : "; ") + e.what();
      }
    }
    if (!plans.empty()) return plans;
  }
  return plans;
}

descriptor make_variant_pack(const std::vector<int64_t>& uids, const std::vector<void*>& pointers, void* workspace) {
  descriptor vp(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  vp.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, static_cast<int64_t>(uids.size()), uids.data(),
         "variant pack uids")
      .set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, static_cast<int64_t>(pointers.size()),
           pointers.data(), "variant pack pointers")
      .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace, "variant pack workspace");
  vp.finalize("variant pack");
  return vp;
}

}  // namespace ptxbench::cudnn
