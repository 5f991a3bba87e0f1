// The torch_export builder (model/builders/torch_export.hpp): a model file written by
// python/ddpsim_torch becomes the tensors, GEMMs and bucket order it describes. The file here
// is written by hand in the exporter's format; tests/python/test_torch_export.py checks the
// exporter's own files against real PyTorch DDP.
#include "model/builders/torch_export.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>

#include "model/error.hpp"
#include "model/json_file.hpp"
#include "model/workload/bucketing.hpp"

namespace ddpsim::model {
namespace {

using nlohmann::json;

// A two-layer model: fc (Linear 4 -> 3 with bias, first layer: its input needs no gradient) and
// norm (LayerNorm(3), a buffer of 12 bytes), then head tied to fc.weight. The gradients became
// ready as norm.weight, norm.bias, fc.bias, fc.weight (LayerNorm's weight before its bias).
json two_layer_config() {
  return json::parse(R"({
    "format": "ddpsim_torch/1", "example_batch": 8, "activation_dtype": "fp32",
    "layers": [
      {"name": "fc", "kind": "linear", "activation_bytes_per_sample": 16,
       "gemms": [{"name": "linear", "m": 2, "n": 3, "k": 4, "count": 1, "batch_dim": "m",
                  "a_grad": false, "b_grad": true, "b_is_weight": true}]},
      {"name": "norm", "kind": "norm", "elementwise_bytes_per_sample": 24,
       "elementwise_flops_per_sample": 3},
      {"name": "head", "kind": "linear"},
      {"name": "frozen", "kind": "linear"}
    ],
    "tensors": [
      {"name": "fc.weight", "layer": 0, "shape": [3, 4], "dtype": "fp32", "requires_grad": true},
      {"name": "fc.bias", "layer": 0, "shape": [3], "dtype": "fp32", "requires_grad": true},
      {"name": "norm.weight", "layer": 1, "shape": [3], "dtype": "fp32", "requires_grad": true},
      {"name": "norm.bias", "layer": 1, "shape": [3], "dtype": "fp32", "requires_grad": true},
      {"name": "head.weight", "layer": 2, "shape": [3, 4], "dtype": "fp32",
       "requires_grad": true, "tied_to": 0},
      {"name": "frozen.weight", "layer": 3, "shape": [5], "dtype": "fp32",
       "requires_grad": false}
    ],
    "buffers": [{"name": "norm.stat", "layer": 1, "shape": [3], "dtype": "fp32", "bytes": 12}],
    "grad_ready_order": [2, 3, 1, 0]
  })");
}

TEST(TorchExportTest, TensorsTiesAndFrozenParameters) {
  const Workload w = build_torch_export(two_layer_config(), "m.json");
  // The frozen parameter is left out (DDP never buckets it); the tied one is listed, not counted.
  ASSERT_EQ(w.tensors.size(), 5u);
  EXPECT_EQ(w.tensors[4].name, "head.weight");
  EXPECT_EQ(w.tensors[4].tied_to, 0);
  EXPECT_EQ(w.param_count(), 12 + 3 + 3 + 3);
  EXPECT_EQ(w.grad_ready_order, (std::vector<int>{2, 3, 1, 0}));
  EXPECT_EQ(w.layers[1].buffer_bytes, 12);
  EXPECT_EQ(w.layers[0].activation_bytes_per_sample, 16);
}

TEST(TorchExportTest, ProductsBecomeLinearGemms) {
  // Forward (2, 3, 4) batch on M; no input gradient (a_grad false); weight gradient
  // (n, k, m) = (3, 4, 2) with the batch on K: add_linear_gemms' shapes.
  const Layer fc = build_torch_export(two_layer_config(), "m.json").layers[0];
  ASSERT_EQ(fc.gemms.size(), 2u);
  EXPECT_EQ(fc.gemms[0].per_sample, (GemmShape{2, 3, 4, 1, false, true}));
  EXPECT_EQ(fc.gemms[0].batch_dim, BatchDim::kM);
  EXPECT_EQ(fc.gemms[1].role, GemmRole::kWeightGrad);
  EXPECT_EQ(fc.gemms[1].per_sample, (GemmShape{3, 4, 2, 1, true, false}));
  EXPECT_EQ(fc.gemms[1].batch_dim, BatchDim::kK);
  EXPECT_EQ(fc.fwd_flops_per_sample(), 2.0 * 2 * 3 * 4);
  // Element-wise: 24 bytes forward, 1.5x backward.
  const Layer norm = build_torch_export(two_layer_config(), "m.json").layers[1];
  ASSERT_EQ(norm.elementwise.size(), 2u);
  EXPECT_EQ(norm.elementwise[1].bytes_per_sample, 36);
  EXPECT_EQ(norm.elementwise[1].flops_per_sample, 3);
}

TEST(TorchExportTest, BatchedProductKeepsItsCountDimension) {
  // Attention scores: per head and sample, Q[8,16] K^T -> [8,8]; both operands need gradients.
  json c = two_layer_config();
  c["layers"][1]["gemms"] = json::parse(R"([{"name": "scores", "m": 8, "n": 8, "k": 16,
      "count": 4, "batch_dim": "count", "a_grad": true, "b_grad": true, "b_is_weight": false}])");
  const Layer l = build_torch_export(c, "m.json").layers[1];
  ASSERT_EQ(l.gemms.size(), 3u);
  EXPECT_EQ(l.gemms[1].per_sample, (GemmShape{8, 16, 8, 4, false, false}));
  EXPECT_EQ(l.gemms[2].role, GemmRole::kInputGrad);
  for (const Gemm& g : l.gemms) EXPECT_EQ(g.batch_dim, BatchDim::kCount);
  EXPECT_EQ(l.gemms[0].at_batch(2).count, 8);
}

TEST(TorchExportTest, BucketsFollowTheMeasuredReadyOrder) {
  // 1-byte cap so every tensor closes its own bucket: the buckets are the ready order.
  BucketOptions o;
  o.cap_bytes = 1;
  o.cap_defaulted = false;
  const BucketPlan p = assign_buckets(build_torch_export(two_layer_config(), "m.json"), o);
  ASSERT_EQ(p.buckets.size(), 4u);
  EXPECT_EQ(p.buckets[0].tensors, std::vector<int>{2});
  EXPECT_EQ(p.buckets[1].tensors, std::vector<int>{3});
  EXPECT_EQ(p.buckets[3].tensors, std::vector<int>{0});
}

TEST(TorchExportTest, BadFilesNameThePointer) {
  auto pointer_of = [](const json& c) {
    try {
      build_torch_export(c, "m.json");
    } catch (const InputError& e) {
      return e.pointer();
    }
    return std::string("no error");
  };
  json c = two_layer_config();
  c["grad_ready_order"] = {2, 3, 1};
  EXPECT_EQ(pointer_of(c), "/grad_ready_order");
  c = two_layer_config();
  c["grad_ready_order"][0] = 4;  // the tied listing has no gradient of its own
  EXPECT_EQ(pointer_of(c), "/grad_ready_order/0");
  c = two_layer_config();
  c["tensors"][1]["layer"] = 7;
  EXPECT_EQ(pointer_of(c), "/tensors/1/layer");
  c = two_layer_config();
  c["tensors"][2]["layer"] = 0;
  c["tensors"][0]["layer"] = 1;
  EXPECT_EQ(pointer_of(c), "/tensors/1/layer");
  c = two_layer_config();
  c["tensors"][4]["tied_to"] = 4;
  EXPECT_EQ(pointer_of(c), "/tensors/4/tied_to");
  c = two_layer_config();
  c["format"] = "ddpsim_torch/3";
  EXPECT_EQ(pointer_of(c), "/format");
  c = two_layer_config();
  c["format"] = "ddpsim_torch/2";  // /2 is /1 with the captured ops: without them, refused
  EXPECT_EQ(pointer_of(c), "/ops");
  c = two_layer_config();
  c["layers"][0]["gemms"][0]["batch_dim"] = "rows";
  EXPECT_EQ(pointer_of(c), "/layers/0/gemms/0/batch_dim");
}

// Issue 20: indices and extents are read into int (cuBLAS's m, n, k are int): 2^32 was read as
// layer 0 and 2^32 + 3 as an extent of 3. Refused at their pointer; extents whose product passes
// int64 saturate (ParamTensor::numel) for check_model_size to refuse.
TEST(TorchExportTest, IntegersPastInt32AreRefusedNotTruncated) {
  json c = two_layer_config();
  c["tensors"][0]["layer"] = std::int64_t{1} << 32;
  EXPECT_THROW(
      {
        try {
          (void)build_torch_export(c, "m.json");
        } catch (const InputError& e) {
          EXPECT_EQ(e.pointer(), "/tensors/0/layer") << e.what();
          throw;
        }
      },
      InputError);
  c = two_layer_config();
  c["layers"][0]["gemms"][0]["m"] = (std::int64_t{1} << 32) + 3;
  try {
    (void)build_torch_export(c, "m.json");
    ADD_FAILURE() << "an extent of 2^32 + 3 accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/layers/0/gemms/0/m") << e.what();
  }
  c = two_layer_config();
  c["tensors"][2]["shape"] = {2147483647, 2147483647, 2147483647};
  EXPECT_EQ(build_torch_export(c, "m.json").param_count(), INT64_MAX);
}

// A real capture (tests/data/torch_export/mlp-ops.json: `python3 -m ddpsim_torch mlp.py
// mlp-ops.json --ops` on torch 1.13, Linear(256, 1024) - GELU - Linear(1024, 256), example batch
// 8, AdamW): format /2's ops replace the layers' work, per sample (/ 8), by hand:
//   layer 0: addmm (8, 1024, 256) forward -> m 1; mm (1024, 256, 8) backward, output [1024, 256]
//            = fc.weight's shape -> a weight gradient, batch in k -> k 1; the bias gradient's
//            sum reads 32768 and writes 4096 bytes -> 4608 per sample. (Its input needs no
//            gradient: no dgrad.)
//   layer 1: gelu 32768 + 32768 -> 8192 forward; gelu_backward 65536 + 32768 -> 12288.
//   layer 2: addmm (8, 256, 1024) -> m 1; dgrad mm (8, 1024, 256) -> m 1; wgrad mm (256, 1024, 8)
//            -> k 1; its bias gradient reads the loss's gradient, ones expanded from one
//            element (a broadcast reads its element once: 4 bytes) and writes 1024 -> 128.5;
//            plus the root module's ops (the
//            loss: sum 8192 + 4 -> 1024.5, add 4 + 4 -> 1 forward; ones_like 0 + 4 -> 0.5
//            backward). Views, allocations and the optimizer's ops charge nothing.
TEST(TorchExportTest, CapturedOpsBecomeTheLayersWork) {
  const json doc = read_json_file(std::string(DDPSIM_TEST_DATA_DIR) + "/torch_export/mlp-ops.json");
  const Workload w = build_torch_export(doc.at("config"), "mlp-ops.json");
  ASSERT_EQ(w.layers.size(), 3u);
  const Layer& fc1 = w.layers[0];
  ASSERT_EQ(fc1.gemms.size(), 2u);
  EXPECT_EQ(fc1.gemms[0].role, GemmRole::kForward);
  EXPECT_EQ(fc1.gemms[0].per_sample, (GemmShape{1, 1024, 256, 1, false, true}));
  EXPECT_EQ(fc1.gemms[0].batch_dim, BatchDim::kM);
  EXPECT_EQ(fc1.gemms[1].role, GemmRole::kWeightGrad);
  EXPECT_EQ(fc1.gemms[1].per_sample, (GemmShape{1024, 256, 1, 1, true, false}));
  EXPECT_EQ(fc1.gemms[1].batch_dim, BatchDim::kK);
  ASSERT_EQ(fc1.elementwise.size(), 1u);
  EXPECT_EQ(fc1.elementwise[0].role, GemmRole::kInputGrad);
  EXPECT_DOUBLE_EQ(fc1.elementwise[0].bytes_per_sample, 4608);

  const Layer& gelu = w.layers[1];
  EXPECT_TRUE(gelu.gemms.empty());
  ASSERT_EQ(gelu.elementwise.size(), 2u);
  EXPECT_DOUBLE_EQ(gelu.elementwise[0].bytes_per_sample, 8192);
  EXPECT_EQ(gelu.elementwise[1].role, GemmRole::kInputGrad);
  EXPECT_DOUBLE_EQ(gelu.elementwise[1].bytes_per_sample, 12288);

  const Layer& fc2 = w.layers[2];
  ASSERT_EQ(fc2.gemms.size(), 3u);
  EXPECT_EQ(fc2.gemms[0].per_sample, (GemmShape{1, 256, 1024, 1, false, true}));
  EXPECT_EQ(fc2.gemms[1].role, GemmRole::kInputGrad);
  EXPECT_EQ(fc2.gemms[1].per_sample, (GemmShape{1, 1024, 256, 1, false, false}));
  EXPECT_EQ(fc2.gemms[2].role, GemmRole::kWeightGrad);
  EXPECT_EQ(fc2.gemms[2].per_sample, (GemmShape{256, 1024, 1, 1, false, false}));
  std::vector<double> bytes;
  for (const ElementwiseOp& e : fc2.elementwise) bytes.push_back(e.bytes_per_sample);
  EXPECT_EQ(bytes, (std::vector<double>{1024.5, 1.0, 0.5, 128.5}));
  // The model FLOPs per sample: 2 x 256 x 1024 forward per Linear, backward twice that but the
  // first layer's dgrad: 2 x (2 x 262144) + 3 x (2 x 262144) = 2621440.
  double flops = 0;
  for (const Layer& l : w.layers) {
    for (const Gemm& g : l.gemms) flops += g.flops_per_sample();
  }
  EXPECT_DOUBLE_EQ(flops, 5 * 2.0 * 262144);
}

TEST(TorchExportTest, OpsNeedFormatTwo) {
  json doc = read_json_file(std::string(DDPSIM_TEST_DATA_DIR) + "/torch_export/mlp-ops.json");
  doc["config"]["format"] = "ddpsim_torch/1";
  try {
    build_torch_export(doc.at("config"), "m.json");
    FAIL() << "a /1 file with ops was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/format"), std::string::npos) << e.what();
  }
  doc["config"]["format"] = "ddpsim_torch/2";
  doc["config"]["ops"][1]["kind"] = "matmul";
  EXPECT_THROW(build_torch_export(doc.at("config"), "m.json"), InputError);
}

}  // namespace
}  // namespace ddpsim::model
