// The host side of the fp32 references (evaluator/gpu/reference_math.hpp,
// reference_plan.*, host_reference.*) against the naive formulas of
// tests/gpu/naive_reference.* at small sizes of every variant, and the
// per-element pieces one by one.
#include <doctest/doctest.h>

#include <cmath>
#include <set>

#include "evaluator/api/index_inputs.hpp"
#include "evaluator/gpu/host_reference.hpp"
#include "evaluator/gpu/reference_math.hpp"
#include "evaluator/gpu/reference_plan.hpp"
#include "tests/gpu/host_inputs.hpp"
#include "tests/gpu/naive_reference.hpp"
#include "tests/gpu/reference_fixtures.hpp"

using namespace ptxbench;

namespace {

naive::tensor_values as_double(const gpu::host_tensors& in) {
  naive::tensor_values out;
  for (const auto& [name, v] : in) out[name].assign(v.begin(), v.end());
  return out;
}

// Largest |a - b| relative to the largest |b| (1 when b is all zeros).
double scaled_error(const std::vector<float>& a, const std::vector<double>& b) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    err = std::max(err, std::fabs(double(a[i]) - b[i]));
    scale = std::max(scale, std::fabs(b[i]));
  }
  return err / (scale > 0 ? scale : 1.0);
}

}  // namespace

TEST_CASE("the host reference of every fixture variant matches the naive formula at every fixture size") {
  for (const task& t : reference_fixtures()) {
    for (const size_point& s : t.sizes) {
      CAPTURE(t.id);
      CAPTURE(describe_size(s));
      gpu::host_tensors in = test_inputs::draw_inputs(t, s, 7);
      if (t.reference == "attention_bwd") {  // the harness's derived inputs: O rounded to bf16, LSE in fp32
        gpu::host_tensors f = gpu::host_attention_forward(t, s, in);
        for (auto& x : f.at("O")) x = test_inputs::round_to(dtype::bf16, x);
        in["O"] = f.at("O");
        in["LSE"] = f.at("LSE");
      }
      const gpu::host_tensors got = gpu::host_reference(t, s, in);
      const naive::tensor_values want = naive::outputs(t, s, as_double(in));
      for (const auto& ts : t.tensors) {
        if (ts.role != tensor_role::output) continue;
        CAPTURE(ts.name);
        REQUIRE(got.count(ts.name) == 1);
        REQUIRE(got.at(ts.name).size() == size_t(tensor_elements(ts, s)));
        REQUIRE(want.at(ts.name).size() == got.at(ts.name).size());
        CHECK(scaled_error(got.at(ts.name), want.at(ts.name)) < 2e-5);
      }
    }
  }
}

TEST_CASE("the fixtures cover every axis of the suite's variants") {
  std::set<std::string> seen;
  for (const task& t : reference_fixtures()) {
    const size_point& s = t.timed_size();
    seen.insert(t.reference + " layout " + t.op.layout);
    seen.insert(t.reference + " epilogue " + t.op.epilogue);
    if (t.op.batched) seen.insert("batched");
    if (t.op.grouped) seen.insert("grouped");
    if (t.op.scaled) seen.insert("scaled");
    if (t.op.varlen) seen.insert(t.reference + (t.causal ? " varlen causal" : " varlen"));
    if (t.op.decode) seen.insert(s.values.count("HKV") ? "decode gqa" : "decode");
    if (t.op.fp8) seen.insert("fp8 attention");
    if (t.causal) seen.insert(t.reference + " causal");
    if (s.values.count("HKV") && s.values.at("HKV") == 1) seen.insert(t.reference + " mqa");
    if (s.values.count("HKV") && s.values.at("HKV") > 1) seen.insert(t.reference + " gqa");
    if (s.values.count("D")) seen.insert(t.reference + " d" + std::to_string(s.values.at("D")));
  }
  for (const char* axis : {"gemm layout nt", "gemm layout nn", "gemm epilogue none", "gemm epilogue bias",
                           "gemm epilogue bias_gelu", "gemm epilogue alpha_beta", "batched", "grouped", "scaled",
                           "attention_fwd varlen", "attention_fwd varlen causal", "decode", "decode gqa",
                           "fp8 attention", "attention_fwd causal", "attention_fwd mqa", "attention_fwd gqa",
                           "attention_fwd d64", "attention_fwd d128", "attention_fwd d256", "attention_bwd causal",
                           "attention_bwd gqa", "attention_bwd d64", "attention_bwd d128"}) {
    CAPTURE(axis);
    CHECK(seen.count(axis) == 1);
  }
}

TEST_CASE("GELU is the tanh form and the epilogue applies scale then bias then GELU or alpha and beta") {
  for (double x : {-5.0, -1.3, -0.2, 0.0, 0.7, 2.5, 6.0}) {
    const double want = 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    CHECK(refmath::gelu_tanh(float(x)) == doctest::Approx(want).epsilon(1e-6));
  }
  using refmath::epilogue_kind;
  refmath::gemm_epilogue e;
  e.scale = 0.5f;  // scale_a·scale_b
  CHECK(refmath::apply_epilogue(e, 3.0f, 100.0f, 100.0f) == 1.5f);
  e.kind = epilogue_kind::bias;
  CHECK(refmath::apply_epilogue(e, 3.0f, 0.25f, 100.0f) == 1.75f);
  e.kind = epilogue_kind::bias_gelu;
  CHECK(refmath::apply_epilogue(e, 3.0f, 0.25f, 100.0f) == refmath::gelu_tanh(1.75f));
  e.kind = epilogue_kind::alpha_beta;
  e.alpha = 2.0f;
  e.beta = -0.5f;
  CHECK(refmath::apply_epilogue(e, 3.0f, 100.0f, 4.0f) == 2.0f * 1.5f - 0.5f * 4.0f);
}

TEST_CASE("query heads map to KV heads in groups of H / HKV and MQA maps every head to one") {
  for (int64_t h = 0; h < 32; ++h) {
    CHECK(refmath::kv_head_of(h, 32, 8) == h / 4);
    CHECK(refmath::kv_head_of(h, 32, 1) == 0);
    CHECK(refmath::kv_head_of(h, 32, 32) == h);
  }
}

TEST_CASE("a head's rows are where docs/task-suite.md puts them in each layout") {
  refmath::attention_dims a;
  a.batch = 3;
  a.heads = 8;
  a.kv_heads = 2;
  a.dim = 16;
  a.seq = 10;
  const int64_t b = 2, h = 5;  // KV head 1
  SUBCASE("dense: Q [B,H,S,D], K [B,HKV,S,D], LSE [B,H,S]") {
    const auto v = refmath::view_of(a, b, h, 0, 0);
    CHECK(v.q + 3 * v.q_step + 7 == ((b * 8 + h) * 10 + 3) * 16 + 7);
    CHECK(v.k + 4 * v.k_step + 7 == ((b * 2 + 1) * 10 + 4) * 16 + 7);
    CHECK(v.lse + 3 == (b * 8 + h) * 10 + 3);
    CHECK(v.sq == 10);
    CHECK(v.sk == 10);
  }
  SUBCASE("varlen: Q [T,H,D], K [T,HKV,D], LSE [H,T]") {
    a.layout = refmath::attention_layout::varlen;
    a.total = 21;
    const auto v = refmath::view_of(a, b, h, 12, 6);
    CHECK(v.q + 3 * v.q_step + 7 == ((12 + 3) * 8 + h) * 16 + 7);
    CHECK(v.k + 4 * v.k_step + 7 == ((12 + 4) * 2 + 1) * 16 + 7);
    CHECK(v.lse + 3 == h * 21 + 12 + 3);
    CHECK(v.sq == 6);
    CHECK(v.sk == 6);
  }
  SUBCASE("decode: Q [B,H,D], K [B,HKV,S,D], LSE [B,H]") {
    a.layout = refmath::attention_layout::decode;
    const auto v = refmath::view_of(a, b, h, 0, 0);
    CHECK(v.q + 7 == (b * 8 + h) * 16 + 7);
    CHECK(v.k + 9 * v.k_step + 7 == ((b * 2 + 1) * 10 + 9) * 16 + 7);
    CHECK(v.lse == b * 8 + h);
    CHECK(v.sq == 1);
    CHECK(v.sk == 10);
  }
}

TEST_CASE("causal queries attend keys up to their own position and a decode query attends the whole cache") {
  CHECK(refmath::keys_attended(true, 0, 5, 5) == 1);
  CHECK(refmath::keys_attended(true, 4, 5, 5) == 5);
  CHECK(refmath::keys_attended(false, 0, 5, 5) == 5);
  CHECK(refmath::keys_attended(true, 0, 1, 7) == 7);
  CHECK(refmath::keys_attended(false, 0, 1, 7) == 7);
}

TEST_CASE("the index inputs are the documented patterns with empty groups and uneven lengths") {
  for (int64_t g : {1, 5, 6, 16, 64})
    for (int64_t m : {1, 3, 512}) {
      const auto rows = naive::documented_group_rows(g, m);
      const auto off = group_offsets(g, m);
      REQUIRE(off.size() == rows.size() + 1);
      for (size_t i = 0; i < rows.size(); ++i) CHECK(off[i + 1] - off[i] == rows[i]);
    }
  CHECK(naive::documented_group_rows(6, 9)[5] == 0);  // group 5 is empty
  for (int64_t b : {1, 3, 8})
    for (int64_t s : {1, 29, 4096}) {
      const auto lens = naive::documented_lengths(b, s);
      const auto cu = varlen_cu_seqlens(b, s);
      for (size_t i = 0; i < lens.size(); ++i) CHECK(cu[i + 1] - cu[i] == lens[i]);
    }
}

TEST_CASE("heads are chunked by shape within the memory budget") {
  task t;
  for (const task& f : reference_fixtures())
    if (f.id == "ref_attn_fwd_varlen") t = f;
  REQUIRE(!t.id.empty());
  size_point s;
  s.values = {{"B", 4}, {"H", 4}, {"HKV", 2}, {"S", 100}, {"D", 64}};
  const gpu::attention_plan p = gpu::plan_attention(t, s);
  const auto chunks = gpu::chunk_heads(p, 2, size_t(100) * 100 * 4 * 2 * 3);  // 3 of the longest heads
  size_t covered = 0;
  for (const auto& c : chunks) {
    CHECK(c.first == covered);
    covered += c.count;
    CHECK(c.count <= 3 * (100 * 100) / size_t(p.heads[c.first].sq * p.heads[c.first].sk) + 1);
    for (size_t i = c.first; i < c.first + c.count; ++i) {
      CHECK(p.heads[i].sq == p.heads[c.first].sq);  // one sequence's length per chunk
      CHECK(p.heads[i].sk == p.heads[c.first].sk);
    }
  }
  CHECK(covered == p.heads.size());
  CHECK(chunks.size() >= 4);  // the sequences differ in length
}
