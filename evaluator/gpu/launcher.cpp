#include "evaluator/gpu/launcher.hpp"

#include <cstring>
#include <sstream>
#include <tuple>

#include "evaluator/api/expression.hpp"
#include "evaluator/api/hidden_sizes.hpp"
#include "evaluator/gpu/cuda_check.hpp"

namespace ptxbench::gpu {
namespace {

CUtensorMapDataType map_type(dtype t) {
  switch (t) {
    case dtype::bf16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case dtype::fp16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case dtype::fp8_e4m3: return CU_TENSOR_MAP_DATA_TYPE_UINT8;
    case dtype::fp32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case dtype::i32: return CU_TENSOR_MAP_DATA_TYPE_INT32;
  }
  return CU_TENSOR_MAP_DATA_TYPE_UINT8;
}

CUtensorMapSwizzle map_swizzle(const std::string& s) {
  if (s == "32B") return CU_TENSOR_MAP_SWIZZLE_32B;
  if (s == "64B") return CU_TENSOR_MAP_SWIZZLE_64B;
  if (s == "128B") return CU_TENSOR_MAP_SWIZZLE_128B;
  return CU_TENSOR_MAP_SWIZZLE_NONE;
}

CUtensorMapL2promotion map_l2(const std::string& s) {
  if (s == "64B") return CU_TENSOR_MAP_L2_PROMOTION_L2_64B;
  if (s == "128B") return CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
  if (s == "256B") return CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
  return CU_TENSOR_MAP_L2_PROMOTION_NONE;
}

template <typename T>
std::string list(const T* v, size_t n) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < n; ++i) s << (i ? "," : "") << v[i];
  s << "]";
  return s.str();
}

// Encodes the tensor map of binding `b`; returns a refusal or "".
std::string encode_map(const tensor_map_spec& spec, const task& t, const size_point& s,
                       const std::map<std::string, CUdeviceptr>& buffers, unsigned char* out) {
  const tensor_spec* ts = t.find_tensor(spec.tensor);
  if (!ts) return "tensor_map of '" + spec.tensor + "': only task tensors can be described by tensor maps";
  std::vector<int64_t> shape;
  for (const auto& e : spec.view.empty() ? ts->shape : spec.view) shape.push_back(eval_int(e, s.values));
  int64_t view_elems = 1, elems = tensor_elements(*ts, s);
  for (auto d : shape) view_elems *= d;
  if (view_elems != elems)
    return "tensor_map of " + spec.tensor + ": view has " + std::to_string(view_elems) + " elements but the tensor has " +
           std::to_string(elems);
  size_t rank = shape.size();
  if (spec.box.size() != rank)
    return "tensor_map of " + spec.tensor + ": box has " + std::to_string(spec.box.size()) +
           " dimensions but the tensor (view) has " + std::to_string(rank) + " (box is innermost first)";
  cuuint64_t dims[5], strides[4];
  cuuint32_t box[5], elem_strides[5];
  int64_t bytes = dtype_bytes(ts->type);
  for (size_t i = 0; i < rank; ++i) {
    dims[i] = cuuint64_t(shape[rank - 1 - i]);
    box[i] = cuuint32_t(spec.box[i]);
    elem_strides[i] = 1;
  }
  int64_t stride = bytes;
  for (size_t i = 0; i + 1 < rank; ++i) {
    stride *= int64_t(dims[i]);
    strides[i] = cuuint64_t(stride);
  }
  CUtensorMap map;
  CUresult r = cuTensorMapEncodeTiled(&map, map_type(ts->type), cuuint32_t(rank),
                                      reinterpret_cast<void*>(buffers.at(spec.tensor)), dims, strides, box,
                                      elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, map_swizzle(spec.swizzle),
                                      map_l2(spec.l2_promotion), CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    return "tensor_map of " + spec.tensor + " (dims " + list(dims, rank) + " innermost first, box " + list(box, rank) +
           ", swizzle " + spec.swizzle + ") rejected by cuTensorMapEncodeTiled: " + describe(r) +
           " (box dimensions must be <= 256, and the inner box row of box[0]*" + std::to_string(bytes) +
           " bytes must not exceed the swizzle span)";
  std::memcpy(out, &map, sizeof map);
  return "";
}

// Writes the bound value of one parameter of `size` bytes; returns a refusal or "".
std::string bind_param(const param_binding& b, size_t size, const task& t, const size_point& s,
                       const std::map<std::string, CUdeviceptr>& buffers, unsigned char* out) {
  auto need = [&](std::initializer_list<size_t> ok, const char* what) -> std::string {
    for (size_t n : ok)
      if (n == size) return "";
    return std::string("is ") + std::to_string(size) + " bytes in the kernel, but binds " + what;
  };
  switch (b.kind) {
    case binding_kind::buffer: {
      if (auto e = need({8}, "a buffer (an 8-byte .u64 address)"); !e.empty()) return e;
      uint64_t p = buffers.at(b.name);
      std::memcpy(out, &p, 8);
      return "";
    }
    case binding_kind::size: {
      if (auto e = need({4, 8}, "a size (.u32/.s32 or .u64/.s64)"); !e.empty()) return e;
      int64_t v = s.values.at(b.name);
      if (size == 4) {
        int32_t v32 = int32_t(v);
        std::memcpy(out, &v32, 4);
      } else {
        std::memcpy(out, &v, 8);
      }
      return "";
    }
    case binding_kind::scalar: {
      if (auto e = need({4, 8}, "a scalar (.f32 or .f64)"); !e.empty()) return e;
      double v = scalar_values(t, s).at(b.name);
      if (size == 4) {
        float f = float(v);
        std::memcpy(out, &f, 4);
      } else {
        std::memcpy(out, &v, 8);
      }
      return "";
    }
    case binding_kind::constant: {
      if (b.const_is_float) {
        if (auto e = need({4, 8}, "a float constant"); !e.empty()) return e;
        if (size == 4) {
          float f = float(b.const_value);
          std::memcpy(out, &f, 4);
        } else {
          std::memcpy(out, &b.const_value, 8);
        }
      } else {
        if (auto e = need({1, 2, 4, 8}, "an integer constant"); !e.empty()) return e;
        int64_t v = int64_t(b.const_value);
        std::memcpy(out, &v, size);  // little-endian: the low bytes
      }
      return "";
    }
    case binding_kind::tensor_map:
      if (auto e = need({128}, "a tensor map (.param .align 64 .b8 name[128])"); !e.empty()) return e;
      return encode_map(b.map, t, s, buffers, out);
  }
  return "unknown binding";
}

// The kernel's real parameter layout against the manifest's bindings, each
// bound into `l`'s storage: what is wrong, or "".
std::string bind_params(const launch_spec& spec, const task& t, const size_point& s,
                        const std::map<std::string, CUdeviceptr>& buffers, prepared_launch& l) {
  std::vector<size_t> sizes;
  for (size_t i = 0;; ++i) {
    size_t offset = 0, size = 0;
    if (cuFuncGetParamInfo(l.function, i, &offset, &size) != CUDA_SUCCESS) break;
    sizes.push_back(size);
  }
  if (sizes.size() != spec.params.size())
    return "the kernel has " + std::to_string(sizes.size()) + " parameters but the manifest binds " +
           std::to_string(spec.params.size());
  l.storage.resize(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::memset(l.storage[i].bytes, 0, sizeof l.storage[i].bytes);
    if (sizes[i] > sizeof l.storage[i].bytes)
      return "parameter " + std::to_string(i) + " is " + std::to_string(sizes[i]) + " bytes (max 128)";
    std::string e = bind_param(spec.params[i], sizes[i], t, s, buffers, l.storage[i].bytes);
    if (!e.empty()) return "parameter " + std::to_string(i) + " " + e;
    l.args.push_back(l.storage[i].bytes);
  }
  return "";
}

// The launch configuration of `l` with its cluster dimensions as the one
// attribute (`attr`, which must outlive the configuration).
CUlaunchConfig cluster_launch_config(const prepared_launch& l, CUstream stream, CUlaunchAttribute& attr) {
  attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attr.value.clusterDim.x = l.cluster[0];
  attr.value.clusterDim.y = l.cluster[1];
  attr.value.clusterDim.z = l.cluster[2];
  CUlaunchConfig cfg{};
  cfg.gridDimX = l.grid[0];
  cfg.gridDimY = l.grid[1];
  cfg.gridDimZ = l.grid[2];
  cfg.blockDimX = l.block[0];
  cfg.blockDimY = l.block[1];
  cfg.blockDimZ = l.block[2];
  cfg.sharedMemBytes = l.shared_bytes;
  cfg.hStream = stream;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  return cfg;
}

// Whether a cluster launch of `l` can be scheduled at all (a cluster of one
// block needs no check): what is wrong, or "".
std::string check_cluster(const prepared_launch& l, int64_t threads, int64_t shared_bytes) {
  const int cluster_size = int(l.cluster[0] * l.cluster[1] * l.cluster[2]);
  if (cluster_size <= 1) return "";
  if (cluster_size > 8) cuFuncSetAttribute(l.function, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
  CUlaunchAttribute attr{};
  const CUlaunchConfig cfg = cluster_launch_config(l, nullptr, attr);
  int clusters = 0;
  CUresult r = cuOccupancyMaxActiveClusters(&clusters, l.function, &cfg);
  if (r != CUDA_SUCCESS || clusters == 0)
    return "a cluster of " + list(l.cluster, 3) + " blocks with " + std::to_string(shared_bytes) +
           " bytes of shared memory and " + std::to_string(threads) + " threads each cannot be scheduled on this GPU" +
           (r != CUDA_SUCCESS ? " (" + describe(r) + ")" : "");
  return "";
}

}  // namespace

device_limits query_limits(CUdevice device) {
  device_limits l;
  PTXB_CU(cuDeviceGetAttribute(&l.max_shared_optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device));
  PTXB_CU(cuDeviceGetAttribute(&l.max_threads_per_block, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, device));
  return l;
}

std::string size_text(const size_point& s) {
  std::string out;
  for (const auto& [k, v] : s.values) out += (out.empty() ? "" : " ") + k + "=" + std::to_string(v);
  return out;
}

launch_plan prepare_launches(CUmodule module, const manifest& m, const task& t, const size_point& s,
                             const std::map<std::string, CUdeviceptr>& buffers, const device_limits& limits) {
  launch_plan plan;
  for (size_t li = 0; li < m.launches.size(); ++li) {
    const launch_spec& spec = m.launches[li];
    std::string where = "launch " + std::to_string(li) + " (" + spec.kernel + ")";
    auto refuse = [&](const std::string& why) {
      plan.refusal = where + " " + at_size(size_label(t, s)) + ": " + why;
      return plan;
    };
    prepared_launch l;
    l.kernel = spec.kernel;
    if (cuModuleGetFunction(&l.function, module, spec.kernel.c_str()) != CUDA_SUCCESS)
      return refuse("no kernel of that name in the module");
    int64_t threads = 1;
    for (int d = 0; d < 3; ++d) {
      int64_t g = eval_int(spec.grid[d], s.values), b = eval_int(spec.block[d], s.values),
              c = eval_int(spec.cluster[d], s.values);
      if (g < 1 || b < 1 || c < 1) return refuse("grid, block and cluster dimensions must be >= 1");
      if (g > (d == 0 ? 2147483647LL : 65535LL)) return refuse("grid dimension " + std::to_string(d) + " too large");
      if (g % c != 0)
        return refuse("grid dimension " + std::to_string(d) + " (" + std::to_string(g) +
                      ") is not a multiple of the cluster dimension (" + std::to_string(c) + ")");
      l.grid[d] = unsigned(g);
      l.block[d] = unsigned(b);
      l.cluster[d] = unsigned(c);
      threads *= b;
    }
    // What the driver says of the candidate's own function, and the
    // configuration it asks for: a refusal is its runtime failure, never the
    // evaluator's error (docs/decisions.md, "Paths to error").
    int max_threads = 0, static_shared = 0, regs = 0;
    using attribute_query = std::tuple<int*, CUfunction_attribute, const char*>;
    for (auto [out, attribute, what] :
         {attribute_query{&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "its thread limit"},
          attribute_query{&static_shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "its static shared memory"},
          attribute_query{&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, "its register count"}})
      if (CUresult e = cuFuncGetAttribute(out, attribute, l.function); e != CUDA_SUCCESS)
        return refuse(std::string("the driver could not read ") + what + ": " + describe(e));
    if (threads > limits.max_threads_per_block)
      return refuse("block of " + std::to_string(threads) + " threads; a block has at most " +
                    std::to_string(limits.max_threads_per_block));
    if (threads > max_threads)
      return refuse("block of " + std::to_string(threads) + " threads, but this kernel (" + std::to_string(regs) +
                    " registers per thread, or its .maxntid) can run at most " + std::to_string(max_threads));
    int64_t dyn = eval_int(spec.shared_bytes, s.values);
    if (dyn < 0) return refuse("negative shared_bytes");
    if (dyn + static_shared > limits.max_shared_optin)
      return refuse("asks for " + std::to_string(dyn) + " bytes of dynamic shared memory (+" +
                    std::to_string(static_shared) + " static); this GPU allows at most " +
                    std::to_string(limits.max_shared_optin) + " bytes per block");
    l.shared_bytes = unsigned(dyn);
    if (CUresult e = cuFuncSetAttribute(l.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                        int(limits.max_shared_optin - static_shared));
        e != CUDA_SUCCESS)
      return refuse("the driver refused " + std::to_string(limits.max_shared_optin - static_shared) +
                    " bytes of dynamic shared memory for it (" + std::to_string(static_shared) +
                    " static): " + describe(e));

    if (std::string e = bind_params(spec, t, s, buffers, l); !e.empty()) return refuse(e);
    if (std::string e = check_cluster(l, threads, dyn + static_shared); !e.empty()) return refuse(e);
    plan.launches.push_back(std::move(l));
  }
  return plan;
}

CUresult enqueue(prepared_launch& l, CUstream stream) {
  // cuLaunchKernelEx is needed only for the cluster attribute; plain launches
  // take the oldest, most widely hooked path (profilers instrument it first).
  if (l.cluster[0] * l.cluster[1] * l.cluster[2] == 1)
    return cuLaunchKernel(l.function, l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2],
                          l.shared_bytes, stream, l.args.data(), nullptr);
  CUlaunchAttribute attr{};
  const CUlaunchConfig cfg = cluster_launch_config(l, stream, attr);
  return cuLaunchKernelEx(&cfg, l.function, l.args.data(), nullptr);
}

}  // namespace ptxbench::gpu
