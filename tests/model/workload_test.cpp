// Workload basics: dtypes, GEMM shapes at a batch, the MLP builder's counts and FLOPs.
#include "model/workload/workload.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "model/builders/mlp.hpp"
#include "model/error.hpp"

namespace ddpsim::model {
namespace {

TEST(WorkloadTest, DtypeBytesAndNames) {
  EXPECT_EQ(dtype_bytes(DType::kFp32), 4);
  EXPECT_EQ(dtype_bytes(DType::kBf16), 2);
  EXPECT_EQ(dtype_bytes(DType::kFp16), 2);
  EXPECT_EQ(dtype_bytes(DType::kFp8), 1);
  EXPECT_EQ(parse_dtype("bf16"), DType::kBf16);
  EXPECT_FALSE(parse_dtype("tf32").has_value());
}

TEST(WorkloadTest, LinearGemmShapesAtBatch) {
  // nn.Linear(4096 -> 4096) at batch 32: Y = X W^T is 32x4096 by 4096x4096 (M=32, N=4096,
  // K=4096); dX = dY W has the same extents; dW = dY^T X is 4096x32 by 32x4096 (M=N=4096, K=32):
  // the weight-gradient GEMM the calibration issue talks about.
  Layer l;
  add_linear_gemms(l, "fc", 1, 4096, 4096);
  ASSERT_EQ(l.gemms.size(), 3u);
  EXPECT_EQ(l.gemms[0].at_batch(32), (GemmShape{32, 4096, 4096, 1, false, true}));
  EXPECT_EQ(l.gemms[1].at_batch(32), (GemmShape{32, 4096, 4096, 1, false, false}));
  EXPECT_EQ(l.gemms[2].at_batch(32), (GemmShape{4096, 4096, 32, 1, true, false}));
  // Each is 2*M*N*K = 2*32*4096*4096 = 1,073,741,824 FLOPs.
  for (const Gemm& g : l.gemms) EXPECT_DOUBLE_EQ(g.at_batch(32).flops(), 1073741824.0);
}

TEST(WorkloadTest, MlpCountsAndFlops) {
  // widths 1024 -> 4096 -> 1024 with bias: 1024*4096 + 4096 + 4096*1024 + 1024 = 8,393,728.
  const Workload w = build_mlp({{1024, 4096, 1024}, true, "relu"});
  EXPECT_EQ(w.param_count(), 8393728);
  ASSERT_EQ(w.tensors.size(), 4u);
  EXPECT_EQ(w.tensors[0].name, "fc0.weight");
  EXPECT_EQ(w.tensors[0].shape, (std::vector<std::int64_t>{4096, 1024}));
  EXPECT_EQ(w.tensors[3].name, "fc1.bias");
  // Forward GEMM FLOPs per sample: 2*1024*4096 * 2 layers = 16,777,216, plus the ReLU's 4096.
  EXPECT_DOUBLE_EQ(w.fwd_flops_per_sample(), 16777216.0 + 4096.0);
  // Backward: fc0 has no input gradient (its input is the data), so 3 GEMMs of 8,388,608 plus
  // the ReLU backward's 4096.
  EXPECT_DOUBLE_EQ(w.bwd_flops_per_sample(), 3 * 8388608.0 + 4096.0);
  // Saved for backward (fp32): fc0's input (1024), the ReLU output (4096), fc1's input (4096).
  EXPECT_DOUBLE_EQ(w.activation_bytes_per_sample(), 4.0 * (1024 + 4096 + 4096));
}

TEST(WorkloadTest, LayersFormIsOneTensorPerLayer) {
  const Workload w = build_from_layers({{"a", 1000, 2e6, 100}, {"b", 0, 1e6, 0}, {"c", 5, 0, 0}});
  EXPECT_EQ(w.param_count(), 1005);
  EXPECT_EQ(w.tensors.size(), 2u);  // a layer with 0 params has no tensor
  EXPECT_DOUBLE_EQ(w.fwd_flops_per_sample(), 3e6);
  EXPECT_DOUBLE_EQ(w.bwd_flops_per_sample(), 6e6);  // backward = 2 x forward
}

// Issue 20: sizes past int64 saturate instead of wrapping (a product of legal extents wrapped
// to a negative parameter count, exit 0), and check_model_size refuses past 1e15 parameters
// with the user's pointer. 2^24 x 2^24 = 2^48 per matrix: 3,553 of them pass 1e15; three
// extents of 2^24 in one tensor (2^72) overflow int64.
TEST(WorkloadTest, SizesSaturateAndTheModelCeilingNamesTheUsersKey) {
  ParamTensor t;
  t.shape = {std::int64_t{1} << 24, std::int64_t{1} << 24, std::int64_t{1} << 24};
  EXPECT_EQ(t.numel(), INT64_MAX);
  t.shape = {std::int64_t{1} << 24, std::int64_t{1} << 24};
  EXPECT_EQ(t.numel(), std::int64_t{1} << 48);

  const std::int64_t e = std::int64_t{1} << 24;
  Workload ok = build_mlp({{e, e, 1}, false, "relu"});  // 2^48 + 2^24 parameters
  EXPECT_EQ(ok.param_count(), (std::int64_t{1} << 48) + e);
  EXPECT_NO_THROW(check_model_size(ok, "s.json", "/model/mlp/widths"));

  const Workload at_limit = build_from_layers({{"a", kMaxModelParameters, 1e9, 0}});
  EXPECT_NO_THROW(check_model_size(at_limit, "s.json", "/model/layers"));
  const Workload past = build_from_layers({{"a", kMaxModelParameters, 1e9, 0}, {"b", 1, 1, 0}});
  try {
    check_model_size(past, "s.json", "/model/layers");
    ADD_FAILURE() << "1e15 + 1 parameters accepted";
  } catch (const InputError& err) {
    EXPECT_STREQ(err.what(),
                 "s.json: /model/layers: expected a model of at most 1e15 parameters, got 1e+15 "
                 "parameters");
  }
  Workload wrapped =
      build_from_layers({{"a", INT64_MAX / 2 + 1, 1, 0}, {"b", INT64_MAX / 2, 1, 0}});
  EXPECT_EQ(wrapped.param_count(), INT64_MAX);  // saturated, not negative
  try {
    check_model_size(wrapped, "s.json", "/model/layers");
    ADD_FAILURE() << "an int64 overflow accepted";
  } catch (const InputError& err) {
    EXPECT_NE(std::string(err.what()).find("int64 overflows"), std::string::npos) << err.what();
  }
}

}  // namespace
}  // namespace ddpsim::model
