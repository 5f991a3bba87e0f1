// schema_test_table.hpp: the small key table schema_test.cpp and schema_export_test.cpp check
// the validator, the JSON Schema and the markdown against.
#pragma once

#include <string>
#include <vector>

#include "model/schema.hpp"

namespace ddpsim::model::testing {

inline KeySpec spec(std::string pointer, KeyType type) {
  KeySpec s;
  s.pointer = std::move(pointer);
  s.type = type;
  return s;
}

inline KeyTable test_table() {
  std::vector<KeySpec> keys;
  {
    auto s = spec("/name", KeyType::kString);
    s.pattern = "[a-z][a-z0-9_-]*";
    s.required = true;
    s.help = "Scenario name.";
    keys.push_back(s);
  }
  keys.push_back(spec("/model", KeyType::kObject));
  {
    auto s = spec("/model/kind", KeyType::kString);
    s.allowed = {"transformer", "cnn", "mlp"};
    s.default_value = "transformer";
    keys.push_back(s);
  }
  {
    auto s = spec("/model/layers", KeyType::kArray);
    s.minimum = 2;
    keys.push_back(s);
  }
  keys.push_back(spec("/model/layers/*", KeyType::kObject));
  {
    auto s = spec("/model/layers/*/name", KeyType::kString);
    s.required = true;
    keys.push_back(s);
  }
  {
    auto s = spec("/model/layers/*/params", KeyType::kInteger);
    s.minimum = 1;
    keys.push_back(s);
  }
  {
    auto s = spec("/model/hf_config", KeyType::kObject);
    s.pattern = "free";
    s.help = "Embedded Hugging Face config.";
    keys.push_back(s);
  }
  keys.push_back(spec("/training", KeyType::kObject));
  {
    auto s = spec("/training/per_gpu_batch", KeyType::kInteger);
    s.unit = "samples";
    s.default_value = 8;
    s.minimum = 1;
    s.help = "Micro-batch per GPU.";
    keys.push_back(s);
  }
  {
    auto s = spec("/training/learning_rate", KeyType::kNumber);
    s.minimum = 0;
    s.exclusive_minimum = true;
    s.maximum = 1;
    keys.push_back(s);
  }
  {
    auto s = spec("/training/precision", KeyType::kString);
    s.allowed = {"fp32", "bf16", "fp16"};
    keys.push_back(s);
  }
  {
    auto s = spec("/training/strategy", KeyType::kString);
    s.allowed = {"ddp", "zero1", "zero2", "zero3", "fsdp"};
    keys.push_back(s);
  }
  {
    auto s = spec("/training/overlap", KeyType::kBoolean);
    s.default_value = true;
    keys.push_back(s);
  }
  keys.push_back(spec("/training/gpus", KeyType::kArray));
  {
    auto s = spec("/training/gpus/*", KeyType::kInteger);
    s.minimum = 0;
    keys.push_back(s);
  }
  keys.push_back(spec("/sweep", KeyType::kObject));
  {
    auto s = spec("/sweep/{}", KeyType::kArray);
    s.minimum = 1;
    s.help = "Values to sweep.";
    keys.push_back(s);
  }
  keys.push_back(spec("/tags", KeyType::kObject));
  keys.push_back(spec("/tags/{}", KeyType::kString));
  keys.push_back(spec("/extras", KeyType::kObject));  // not free, no children: must stay empty
  {
    auto s = spec("/notes", KeyType::kString);
    s.unit = "a|b";
    s.help = "Free text | with a pipe.";
    keys.push_back(s);
  }
  return KeyTable{"scenario", keys};
}

}  // namespace ddpsim::model::testing
