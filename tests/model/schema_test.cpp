#include "model/schema.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "model/error.hpp"
#include "model/scenario/scenario_keys.hpp"
#include "schema_test_table.hpp"

namespace ddpsim::model {
namespace {

using nlohmann::json;
using testing::spec;
using testing::test_table;

json valid_doc() {
  return json::parse(R"({
    "name": "gpt-small_1",
    "model": {
      "kind": "transformer",
      "layers": [{"name": "embed", "params": 1000}, {"name": "block"},
                 {"name": "head", "params": 5}],
      "hf_config": {"anything": [1, 2, {"goes": null}], "n_layer": 12}
    },
    "training": {
      "per_gpu_batch": 8, "learning_rate": 1, "precision": "bf16", "strategy": "zero1",
      "overlap": false, "gpus": [0, 1, 2, 3]
    },
    "sweep": {"training.per_gpu_batch": [1, 2, 4], "model.kind": ["cnn"]},
    "tags": {"owner": "me", "a/b": "slash", "x~y": "tilde"},
    "extras": {},
    "notes": "hello"
  })");
}

// Runs validate and returns the message; fails the test when nothing is thrown.
std::string scenario_error(const json& doc, const std::string& file = "run.json") {
  try {
    validate(doc, test_table(), file);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError for " << doc.dump();
  return {};
}

// validate()'s one-line message for `d` against `t` (file "f"), or "no error".
std::string message_of(const json& d, const KeyTable& t) {
  try {
    validate(d, t, "f");
  } catch (const InputError& e) {
    return std::string(e.what());
  }
  return std::string("no error");
}

TEST(Schema, KeyTypeNames) {
  EXPECT_STREQ(key_type_name(KeyType::kObject), "object");
  EXPECT_STREQ(key_type_name(KeyType::kArray), "array");
  EXPECT_STREQ(key_type_name(KeyType::kString), "string");
  EXPECT_STREQ(key_type_name(KeyType::kInteger), "integer");
  EXPECT_STREQ(key_type_name(KeyType::kNumber), "number");
  EXPECT_STREQ(key_type_name(KeyType::kBoolean), "boolean");
}

TEST(Schema, EditDistance) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("same", "same"), 0u);
  EXPECT_EQ(edit_distance("per_gpu_bach", "per_gpu_batch"), 1u);
  EXPECT_EQ(edit_distance("flaw", "lawn"), 2u);
}

TEST(Schema, FindMatchesWildcards) {
  const auto t = test_table();
  ASSERT_NE(t.find("/model/layers/3/params"), nullptr);
  EXPECT_EQ(t.find("/model/layers/3/params")->pointer, "/model/layers/*/params");
  EXPECT_EQ(t.find("/model/layers/12")->pointer, "/model/layers/*");
  EXPECT_EQ(t.find("/model/layers/x/params"), nullptr);  // "*" only matches an index
  ASSERT_NE(t.find("/sweep/training.per_gpu_batch"), nullptr);
  EXPECT_EQ(t.find("/sweep/training.per_gpu_batch")->pointer, "/sweep/{}");
  EXPECT_EQ(t.find("/training/per_gpu_batch")->pointer, "/training/per_gpu_batch");
  EXPECT_EQ(t.find("/nope"), nullptr);
  EXPECT_EQ(t.find("/training/per_gpu_batch/0"), nullptr);
  EXPECT_EQ(t.find(""), nullptr);
}

TEST(Schema, FindPrefersLiteralOverWildcard) {
  KeyTable t{"t",
             {spec("/sweep/{}", KeyType::kArray), spec("/sweep/seed", KeyType::kInteger),
              spec("/m/{}/x", KeyType::kString), spec("/m/special/{}", KeyType::kNumber)}};
  EXPECT_EQ(t.find("/sweep/seed")->pointer, "/sweep/seed");
  EXPECT_EQ(t.find("/sweep/other")->pointer, "/sweep/{}");
  EXPECT_EQ(t.find("/m/special/x")->pointer, "/m/special/{}");
  EXPECT_EQ(t.find("/m/other/x")->pointer, "/m/{}/x");
}

TEST(Schema, ValidDocumentPasses) {
  EXPECT_NO_THROW(validate(valid_doc(), test_table(), "run.json"));
  EXPECT_NO_THROW(validate(json::parse(R"({"name": "x"})"), test_table(), "run.json"));
}

TEST(Schema, RootMustBeObject) {
  const auto msg = scenario_error(json::array());
  EXPECT_EQ(msg, "run.json: /: expected an object, got an array");
  EXPECT_EQ(scenario_error(json(3)), "run.json: /: expected an object, got 3");
}

TEST(Schema, UnknownKeySuggestsClosest) {
  auto doc = valid_doc();
  doc["training"]["per_gpu_bach"] = 4;
  const auto msg = scenario_error(doc);
  EXPECT_EQ(msg,
            "run.json: /training/per_gpu_bach: expected one of the keys gpus, learning_rate, "
            "overlap, per_gpu_batch, precision, strategy, got unknown key 'per_gpu_bach' (did "
            "you mean 'per_gpu_batch'?)");
}

TEST(Schema, UnknownKeyWithoutCloseMatchHasNoSuggestion) {
  auto doc = valid_doc();
  doc["training"]["zzzzzzzzzzzz"] = 4;
  const auto msg = scenario_error(doc);
  EXPECT_NE(msg.find("run.json: /training/zzzzzzzzzzzz: expected one of the keys"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("unknown key 'zzzzzzzzzzzz'"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("did you mean"), std::string::npos) << msg;
}

TEST(Schema, UnknownTopLevelKey) {
  auto doc = valid_doc();
  doc["modle"] = json::object();
  const auto msg = scenario_error(doc);
  EXPECT_NE(msg.find("run.json: /modle: expected one of the keys extras, model, name, notes, "
                     "sweep, tags, training"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("(did you mean 'model'?)"), std::string::npos) << msg;
}

TEST(Schema, UnknownKeyInArrayElement) {
  auto doc = valid_doc();
  doc["model"]["layers"][1]["parms"] = 3;
  const auto msg = scenario_error(doc);
  EXPECT_NE(msg.find("run.json: /model/layers/1/parms: expected one of the keys name, params"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("did you mean 'params'?"), std::string::npos) << msg;
}

TEST(Schema, LongKeyListIsTruncated) {
  std::vector<KeySpec> keys;
  for (char c = 'a'; c <= 'o'; ++c) keys.push_back(spec(std::string("/k") + c, KeyType::kBoolean));
  KeyTable t{"many", keys};
  try {
    validate(json::parse(R"({"zzzzzz": 1})"), t, "f.json");
    FAIL() << "no throw";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("one of the keys ka, kb, kc, kd, ke, kf, kg, kh, ki, kj, kk, kl, ..., got"),
              std::string::npos)
        << msg;
    EXPECT_EQ(msg.find("km"), std::string::npos) << msg;
  }
}

TEST(Schema, IntegerRejectsFloats) {
  auto doc = valid_doc();
  doc["model"]["layers"][2]["params"] = 3.0;
  const auto msg = scenario_error(doc);
  EXPECT_EQ(msg, "run.json: /model/layers/2/params: expected an integer >= 1, got 3.0");

  doc = valid_doc();
  doc["model"]["layers"][2]["params"] = json::parse("1e3");
  EXPECT_EQ(scenario_error(doc),
            "run.json: /model/layers/2/params: expected an integer >= 1, got 1000.0");

  doc = valid_doc();
  doc["training"]["per_gpu_batch"] = "8";
  EXPECT_EQ(scenario_error(doc),
            "run.json: /training/per_gpu_batch: expected an integer >= 1, got \"8\"");
}

TEST(Schema, IntegerMinimum) {
  auto doc = valid_doc();
  doc["training"]["per_gpu_batch"] = -1;
  EXPECT_EQ(scenario_error(doc),
            "run.json: /training/per_gpu_batch: expected an integer >= 1, got -1");
  doc["training"]["per_gpu_batch"] = 0;
  EXPECT_EQ(scenario_error(doc),
            "run.json: /training/per_gpu_batch: expected an integer >= 1, got 0");
  doc["training"]["per_gpu_batch"] = 1;
  EXPECT_NO_THROW(validate(doc, test_table(), "run.json"));
  doc["training"]["per_gpu_batch"] = std::int64_t{1} << 53;
  EXPECT_NO_THROW(validate(doc, test_table(), "run.json"));
  // The table gives no maximum; 2^53 is every integer key's ceiling all the same
  // (IntegersWithoutACeilingStopAtTwoToThe53).
  doc["training"]["per_gpu_batch"] = std::numeric_limits<std::uint64_t>::max();
  EXPECT_THROW(validate(doc, test_table(), "run.json"), InputError);
}

TEST(Schema, NumberRejectsNonNumbers) {
  auto doc = valid_doc();
  doc["training"]["learning_rate"] = true;
  EXPECT_EQ(scenario_error(doc),
            "run.json: /training/learning_rate: expected a number > 0 and <= 1, got true");
  doc["training"]["learning_rate"] = nullptr;
  EXPECT_EQ(scenario_error(doc),
            "run.json: /training/learning_rate: expected a number > 0 and <= 1, got null");
}

TEST(Schema, NumberRejectsNanAndInf) {
  auto doc = valid_doc();
  doc["training"]["learning_rate"] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(scenario_error(doc),
            "run.json: /training/learning_rate: expected a number > 0 and <= 1, got NaN");
  doc["training"]["learning_rate"] = std::numeric_limits<double>::infinity();
  EXPECT_EQ(scenario_error(doc),
            "run.json: /training/learning_rate: expected a number > 0 and <= 1, got inf");
  // No bounds at all: NaN must still be refused.
  KeyTable t{"t", {spec("/x", KeyType::kNumber)}};
  json d = {{"x", -std::numeric_limits<double>::infinity()}};
  EXPECT_THROW(validate(d, t, "f"), InputError);
  d["x"] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(validate(d, t, "f"), InputError);
  d["x"] = 1e300;
  EXPECT_NO_THROW(validate(d, t, "f"));
}

TEST(Schema, ATableEditedInPlaceIsValidatedAsItIsNow) {
  // validate() keeps each table's Index (built once, not per sweep point) while the table's rows
  // sit at the same addresses with the same pointers; a row renamed in place, or a table
  // rebuilt where another was, is indexed afresh: never the old table's keys.
  KeyTable t{"t", {spec("/a", KeyType::kInteger), spec("/b", KeyType::kString)}};
  EXPECT_EQ(message_of({{"a", 1}}, t), "no error");
  EXPECT_NE(message_of({{"c", 1}}, t).find("/c"), std::string::npos);
  t.keys[0].pointer = "/c";  // same rows, same addresses, another key
  EXPECT_EQ(message_of({{"c", 1}}, t), "no error");
  EXPECT_NE(message_of({{"a", 1}}, t).find("f: /a: "), std::string::npos)
      << message_of({{"a", 1}}, t);
  // Another field of a row is read when a value is checked, not kept in the Index.
  t.keys[0].type = KeyType::kString;
  EXPECT_NE(message_of({{"c", 1}}, t).find("/c"), std::string::npos);
  EXPECT_EQ(message_of({{"c", "x"}}, t), "no error");
  // A pattern is compiled once per pattern text and applied to each value.
  KeySpec p = spec("/p", KeyType::kString);
  p.pattern = "^[a-z]+$";
  const KeyTable patterned{"p", {p}};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(message_of({{"p", "abc"}}, patterned), "no error");
    EXPECT_NE(message_of({{"p", "ABC"}}, patterned).find("/p"), std::string::npos);
  }
}

TEST(Schema, NumberExclusiveMinimumAndMaximum) {
  auto doc = valid_doc();
  doc["training"]["learning_rate"] = 0;
  EXPECT_EQ(scenario_error(doc),
            "run.json: /training/learning_rate: expected a number > 0 and <= 1, got 0");
  doc["training"]["learning_rate"] = 0.0;
  EXPECT_EQ(scenario_error(doc),
            "run.json: /training/learning_rate: expected a number > 0 and <= 1, got 0.0");
  doc["training"]["learning_rate"] = 1.5;
  EXPECT_EQ(scenario_error(doc),
            "run.json: /training/learning_rate: expected a number > 0 and <= 1, got 1.5");
  doc["training"]["learning_rate"] = 1e-9;
  EXPECT_NO_THROW(validate(doc, test_table(), "run.json"));
  doc["training"]["learning_rate"] = 1;  // an integer is a fine number
  EXPECT_NO_THROW(validate(doc, test_table(), "run.json"));
}

TEST(Schema, RangeTextVariants) {
  auto lo = spec("/lo", KeyType::kNumber);
  lo.minimum = 0.5;
  auto hi = spec("/hi", KeyType::kInteger);
  hi.maximum = 10;
  auto both = spec("/both", KeyType::kInteger);
  both.minimum = 2;
  both.maximum = 4;
  KeyTable t{"t", {lo, hi, both}};
  auto msg = [&](const json& d) { return message_of(d, t); };
  EXPECT_EQ(msg({{"lo", 0.25}}), "f: /lo: expected a number >= 0.5, got 0.25");
  EXPECT_EQ(msg({{"hi", 11}}), "f: /hi: expected an integer <= 10, got 11");
  EXPECT_EQ(msg({{"both", 5}}), "f: /both: expected an integer >= 2 and <= 4, got 5");
  EXPECT_EQ(msg({{"lo", 0.5}, {"hi", 10}, {"both", 4}}), "no error");
}

// Issue 20: an integer key without a ceiling of its own still stops at 2^53 (past it a double no
// longer holds every integer, and int64 products are one step from wrapping).
TEST(Schema, IntegersWithoutACeilingStopAtTwoToThe53) {
  auto open = spec("/open", KeyType::kInteger);
  open.minimum = 0;
  KeyTable t{"t", {open}};
  auto msg = [&](const json& d) { return message_of(d, t); };
  EXPECT_EQ(msg({{"open", 9007199254740992LL}}), "no error");
  EXPECT_EQ(msg({{"open", 9007199254740993LL}}),
            "f: /open: expected an integer >= 0 of magnitude at most 2^53, got 9007199254740993");
  EXPECT_EQ(msg({{"open", 18446744073709551615ULL}}),
            "f: /open: expected an integer >= 0 of magnitude at most 2^53, got "
            "18446744073709551615");
}

TEST(Schema, BooleanType) {
  auto doc = valid_doc();
  doc["training"]["overlap"] = 1;
  EXPECT_EQ(scenario_error(doc), "run.json: /training/overlap: expected a boolean, got 1");
  doc["training"]["overlap"] = "true";
  EXPECT_EQ(scenario_error(doc), "run.json: /training/overlap: expected a boolean, got \"true\"");
}

TEST(Schema, EnumMissSuggests) {
  auto doc = valid_doc();
  doc["training"]["strategy"] = "zer01";
  EXPECT_EQ(scenario_error(doc),
            "run.json: /training/strategy: expected one of \"ddp\", \"zero1\", \"zero2\", "
            "\"zero3\", \"fsdp\", got \"zer01\" (did you mean \"zero1\"?)");
  doc["training"]["strategy"] = "pipeline-parallel";
  const auto msg = scenario_error(doc);
  EXPECT_NE(msg.find("got \"pipeline-parallel\""), std::string::npos) << msg;
  EXPECT_EQ(msg.find("did you mean"), std::string::npos) << msg;
  doc = valid_doc();
  doc["training"]["precision"] = 16;
  EXPECT_EQ(scenario_error(doc),
            "run.json: /training/precision: expected one of \"fp32\", \"bf16\", \"fp16\", got 16");
}

TEST(Schema, PatternMiss) {
  auto doc = valid_doc();
  doc["name"] = "Bad Name";
  EXPECT_EQ(scenario_error(doc),
            "run.json: /name: expected a string matching [a-z][a-z0-9_-]*, got \"Bad Name\"");
  // Full match, not search: a valid prefix is not enough.
  doc["name"] = "ok name";
  EXPECT_NE(scenario_error(doc).find("/name: expected a string matching"), std::string::npos);
}

TEST(Schema, MissingRequiredKey) {
  auto doc = valid_doc();
  doc.erase("name");
  EXPECT_EQ(scenario_error(doc), "run.json: /name: expected a value (required), got nothing");

  doc = valid_doc();
  doc["model"]["layers"][1].erase("name");
  EXPECT_EQ(scenario_error(doc),
            "run.json: /model/layers/1/name: expected a value (required), got nothing");
}

TEST(Schema, ArrayCountAndElements) {
  auto doc = valid_doc();
  doc["model"]["layers"] = json::parse(R"([{"name": "only"}])");
  EXPECT_EQ(scenario_error(doc),
            "run.json: /model/layers: expected an array of at least 2 elements, got an array of "
            "1 element");
  doc["model"]["layers"] = json::object();
  EXPECT_EQ(scenario_error(doc),
            "run.json: /model/layers: expected an array of at least 2 elements, got an object");

  doc = valid_doc();
  doc["training"]["gpus"][1] = -3;
  EXPECT_EQ(scenario_error(doc), "run.json: /training/gpus/1: expected an integer >= 0, got -3");
  doc["training"]["gpus"] = json::array();  // no count bounds
  EXPECT_NO_THROW(validate(doc, test_table(), "run.json"));

  doc = valid_doc();
  doc["model"]["layers"][0] = "embed";
  EXPECT_EQ(scenario_error(doc), "run.json: /model/layers/0: expected an object, got \"embed\"");
}

TEST(Schema, ArrayCountTextVariants) {
  auto exact = spec("/exact", KeyType::kArray);
  exact.minimum = 3;
  exact.maximum = 3;
  auto between = spec("/between", KeyType::kArray);
  between.minimum = 1;
  between.maximum = 2;
  auto most = spec("/most", KeyType::kArray);
  most.maximum = 1;
  KeyTable t{"t", {exact, between, most}};
  auto msg = [&](const json& d) { return message_of(d, t); };
  EXPECT_EQ(msg({{"exact", {1, 2}}}),
            "f: /exact: expected an array of exactly 3 elements, got an array of 2 elements");
  EXPECT_EQ(msg({{"between", json::array()}}),
            "f: /between: expected an array of 1 to 2 elements, got an array of 0 elements");
  EXPECT_EQ(msg({{"most", {1, 2}}}),
            "f: /most: expected an array of at most 1 element, got an array of 2 elements");
}

TEST(Schema, FreeObjectAcceptsAnything) {
  auto doc = valid_doc();
  doc["model"]["hf_config"] = json::parse(R"({"x": {"y": [1, "z", null]}, "w": 1.5})");
  EXPECT_NO_THROW(validate(doc, test_table(), "run.json"));
  doc["model"]["hf_config"] = 3;
  EXPECT_EQ(scenario_error(doc), "run.json: /model/hf_config: expected an object, got 3");
}

TEST(Schema, ObjectWithoutChildrenIsNotFree) {
  auto doc = valid_doc();
  doc["extras"]["anything"] = 1;
  EXPECT_EQ(scenario_error(doc),
            "run.json: /extras/anything: expected no keys here (an empty object), got unknown key "
            "'anything'");
}

TEST(Schema, FreeObjectStillChecksListedChildren) {
  auto free = spec("/cfg", KeyType::kObject);
  free.pattern = "free";
  auto n = spec("/cfg/n", KeyType::kInteger);
  n.required = true;
  KeyTable t{"t", {free, n}};
  EXPECT_NO_THROW(validate(json::parse(R"({"cfg": {"n": 1, "other": "x"}})"), t, "f"));
  EXPECT_THROW(validate(json::parse(R"({"cfg": {"n": "1"}})"), t, "f"), InputError);
  EXPECT_THROW(validate(json::parse(R"({"cfg": {"other": 1}})"), t, "f"), InputError);
}

TEST(Schema, MapKeysAreFreeAndPointersEscaped) {
  auto doc = valid_doc();
  doc["tags"]["a/b~c"] = 3;
  EXPECT_EQ(scenario_error(doc), "run.json: /tags/a~1b~0c: expected a string, got 3");
  try {
    validate(doc, test_table(), "run.json");
  } catch (const InputError& e) {
    EXPECT_EQ(e.pointer(), "/tags/a~1b~0c");
    EXPECT_EQ(e.file(), "run.json");
  }

  doc = valid_doc();
  doc["sweep"]["training.per_gpu_batch"] = json::array();
  EXPECT_EQ(scenario_error(doc),
            "run.json: /sweep/training.per_gpu_batch: expected an array of at least 1 element, "
            "got an array of 0 elements");
  doc["sweep"]["training.per_gpu_batch"] = 4;
  EXPECT_NE(scenario_error(doc).find("/sweep/training.per_gpu_batch: expected an array"),
            std::string::npos);
}

TEST(Schema, ImpliedIntermediateLevels) {
  // "/a" and "/a/list" are not listed themselves; the walk infers an object and an array.
  auto leaf = spec("/a/list/*/v", KeyType::kInteger);
  leaf.minimum = 0;
  KeyTable t{"t", {leaf}};
  EXPECT_NO_THROW(validate(json::parse(R"({"a": {"list": [{"v": 1}]}})"), t, "f"));
  auto msg = [&](const char* text) {
    try {
      validate(json::parse(text), t, "f");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(msg(R"({"a": {"list": [{"v": -1}]}})"),
            "f: /a/list/0/v: expected an integer >= 0, got -1");
  EXPECT_EQ(msg(R"({"a": {"list": {"v": 1}}})"), "f: /a/list: expected an array, got an object");
  EXPECT_EQ(msg(R"({"a": 1})"), "f: /a: expected an object, got 1");
  EXPECT_EQ(msg(R"({"a": {"lst": []}})"),
            "f: /a/lst: expected one of the keys list, got unknown key 'lst' (did you mean "
            "'list'?)");
}

TEST(Schema, MessagesAreOneLineAndShort) {
  auto doc = valid_doc();
  doc["training"]["bad\nkey"] = 1;
  std::string msg = scenario_error(doc);
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  EXPECT_NE(msg.find("/training/bad"), std::string::npos) << msg;

  doc = valid_doc();
  doc["training"]["strategy"] = std::string(500, 'x') + "\n" + std::string(500, 'y');
  msg = scenario_error(doc);
  EXPECT_EQ(msg.find('\n'), std::string::npos);
  EXPECT_LT(msg.size(), 200u) << msg;
  EXPECT_TRUE(msg.ends_with("got \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...")) << msg;
}

TEST(Schema, ValidateValueUsesSpecAndConcretePointer) {
  const auto t = test_table();
  const KeySpec* batch = t.find("/training/per_gpu_batch");
  ASSERT_NE(batch, nullptr);
  EXPECT_NO_THROW(validate_value(json(4), *batch, t, "s.json", "/sweep/training.per_gpu_batch/0"));
  try {
    validate_value(json(0), *batch, t, "s.json", "/sweep/training.per_gpu_batch/1");
    FAIL() << "no throw";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "s.json: /sweep/training.per_gpu_batch/1: expected an integer >= 1, got 0");
    EXPECT_EQ(e.pointer(), "/sweep/training.per_gpu_batch/1");
  }

  // Recurses below the spec: an array of layer objects swept as a whole.
  const KeySpec* layers = t.find("/model/layers");
  ASSERT_NE(layers, nullptr);
  const json value = json::parse(R"([{"name": "a"}, {"name": "b", "params": 0}])");
  try {
    validate_value(value, *layers, t, "s.json", "/sweep/model.layers/0");
    FAIL() << "no throw";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "s.json: /sweep/model.layers/0/1/params: expected an integer >= 1, got 0");
  }
  const json missing = json::parse(R"([{"name": "a"}, {"params": 3}])");
  EXPECT_THROW(validate_value(missing, *layers, t, "s.json", "/p"), InputError);
}

}  // namespace
}  // namespace ddpsim::model
