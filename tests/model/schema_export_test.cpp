// schema_export_test.cpp: the key table as JSON Schema 2020-12 and as markdown (model/schema.hpp
// to_json_schema, to_markdown); the validator itself is schema_test.cpp's.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "model/error.hpp"
#include "model/scenario/scenario_keys.hpp"
#include "model/schema.hpp"
#include "schema_test_table.hpp"

namespace ddpsim::model {
namespace {

using nlohmann::json;
using testing::spec;
using testing::test_table;

// Where JSON Schema 2020-12 keeps a key-table entry: an object's key K under /properties/K, an
// array's elements under /items, an object's free keys ("{}") under /additionalProperties. So
// the table's /model/layers/*/params is the schema's
// /properties/model/properties/layers/items/properties/params. Table segments are RFC 6901
// escaped already (schema.cpp), so they go into the pointer as they are.
std::string schema_pointer(const std::string& table_pointer) {
  std::string out;
  for (std::size_t at = 1; at <= table_pointer.size();) {
    std::size_t end = table_pointer.find('/', at);
    if (end == std::string::npos) end = table_pointer.size();
    const std::string seg = table_pointer.substr(at, end - at);
    out += seg == "*" ? "/items" : seg == "{}" ? "/additionalProperties" : "/properties/" + seg;
    at = end + 1;
  }
  return out;
}

// Every key of `table` in `schema` (to_json_schema's document as an editor reads it: dumped to
// text and parsed back) where schema_pointer puts it, with the table's JSON type, default,
// allowed values, bounds (minimum/maximum; exclusiveMinimum; minItems/maxItems for arrays, the
// bounds rounded inwards) and its name in the parent's "required". Fails for a key that is
// missing, misplaced or differs in any of these.
void expect_schema_holds_every_key(const KeyTable& table, const json& schema) {
  for (const KeySpec& k : table.keys) {
    const std::string at = schema_pointer(k.pointer);
    ASSERT_TRUE(schema.contains(json::json_pointer(at))) << k.pointer << " is not at " << at;
    const json& whole = schema.at(json::json_pointer(at));
    const json type = k.type == KeyType::kBooleanOrInteger  ? json::array({"boolean", "integer"})
                      : k.type == KeyType::kBooleanOrObject ? json::array({"boolean", "object"})
                      : k.type == KeyType::kStringOrInteger ? json::array({"string", "integer"})
                                                            : json(key_type_name(k.type));
    EXPECT_EQ(whole.value("type", json()), type) << k.pointer;
    EXPECT_EQ(whole.value("default", json()), k.default_value) << k.pointer;
    // A string-or-integer key's enum binds its string branch, its bounds its integer branch.
    const bool two = k.type == KeyType::kStringOrInteger;
    if (two) {
      ASSERT_EQ(whole.at("anyOf").size(), 2u) << k.pointer;
    }
    const json& strings = two ? whole.at("anyOf")[0] : whole;
    const json& node = two ? whole.at("anyOf")[1] : whole;
    if (!k.allowed.empty()) {
      EXPECT_EQ(strings.value("enum", json()), json(k.allowed)) << k.pointer;
    }
    const bool array = k.type == KeyType::kArray;
    if (k.minimum) {
      const char* name = array ? "minItems" : k.exclusive_minimum ? "exclusiveMinimum" : "minimum";
      ASSERT_TRUE(node.contains(name)) << k.pointer << " has no " << name;
      EXPECT_EQ(node[name].get<double>(), array ? std::ceil(*k.minimum) : *k.minimum) << k.pointer;
    }
    if (k.maximum) {
      const char* name = array ? "maxItems" : "maximum";
      ASSERT_TRUE(node.contains(name)) << k.pointer << " has no " << name;
      EXPECT_EQ(node[name].get<double>(), array ? std::floor(*k.maximum) : *k.maximum) << k.pointer;
    }
    if (k.required) {
      const std::size_t slash = k.pointer.rfind('/');
      const json& parent =
          schema.at(json::json_pointer(schema_pointer(k.pointer.substr(0, slash))));
      std::string name = k.pointer.substr(slash + 1);  // unescaped: "required" holds names
      for (std::size_t i = name.find('~'); i != std::string::npos; i = name.find('~', i + 1)) {
        name.replace(i, 2, name[i + 1] == '1' ? "/" : "~");
      }
      const json req = parent.value("required", json::array());
      EXPECT_NE(std::find(req.begin(), req.end(), json(name)), req.end())
          << k.pointer << " is not in its parent's \"required\"";
    }
  }
}

TEST(Schema, JsonSchemaStructure) {
  const json s = to_json_schema(test_table());
  EXPECT_EQ(s["$schema"], "https://json-schema.org/draft/2020-12/schema");
  EXPECT_EQ(s["title"], "scenario");
  EXPECT_EQ(s["type"], "object");
  EXPECT_EQ(s["additionalProperties"], false);
  EXPECT_EQ(s["required"], json::array({"name"}));

  const json& training = s["properties"]["training"];
  EXPECT_EQ(training["type"], "object");
  EXPECT_EQ(training["additionalProperties"], false);
  EXPECT_FALSE(training.contains("required"));

  const json& batch = training["properties"]["per_gpu_batch"];
  EXPECT_EQ(batch["type"], "integer");
  EXPECT_EQ(batch["minimum"], 1);
  EXPECT_EQ(batch["default"], 8);
  EXPECT_EQ(batch["description"], "Micro-batch per GPU. [samples]");

  const json& lr = training["properties"]["learning_rate"];
  EXPECT_EQ(lr["type"], "number");
  EXPECT_EQ(lr["exclusiveMinimum"], 0);
  EXPECT_FALSE(lr.contains("minimum"));
  EXPECT_EQ(lr["maximum"], 1);

  EXPECT_EQ(training["properties"]["strategy"]["enum"],
            json::array({"ddp", "zero1", "zero2", "zero3", "fsdp"}));
  EXPECT_EQ(training["properties"]["overlap"]["type"], "boolean");
  EXPECT_EQ(training["properties"]["overlap"]["default"], true);
  EXPECT_EQ(training["properties"]["gpus"]["items"]["type"], "integer");
  EXPECT_EQ(training["properties"]["gpus"]["items"]["minimum"], 0);

  EXPECT_EQ(s["properties"]["name"]["pattern"], "^(?:[a-z][a-z0-9_-]*)$");

  const json& layers = s["properties"]["model"]["properties"]["layers"];
  EXPECT_EQ(layers["type"], "array");
  EXPECT_EQ(layers["minItems"], 2);
  EXPECT_EQ(layers["items"]["type"], "object");
  EXPECT_EQ(layers["items"]["additionalProperties"], false);
  EXPECT_EQ(layers["items"]["required"], json::array({"name"}));
  EXPECT_EQ(layers["items"]["properties"]["params"]["minimum"], 1);

  const json& hf = s["properties"]["model"]["properties"]["hf_config"];
  EXPECT_EQ(hf["type"], "object");
  EXPECT_FALSE(hf.contains("additionalProperties"));

  const json& sweep = s["properties"]["sweep"];
  EXPECT_EQ(sweep["additionalProperties"]["type"], "array");
  EXPECT_EQ(sweep["additionalProperties"]["minItems"], 1);
  EXPECT_FALSE(sweep.contains("properties"));
  EXPECT_EQ(s["properties"]["tags"]["additionalProperties"]["type"], "string");
  EXPECT_EQ(s["properties"]["extras"]["additionalProperties"], false);

  // What an editor reads (the text `ddpsim schema --format json` prints, parsed again) still
  // holds every key of the table where JSON Schema looks for it, as the table describes it.
  const json back = json::parse(s.dump(2));
  expect_schema_holds_every_key(test_table(), back);
  EXPECT_EQ(back.at(json::json_pointer("/properties/model/properties/kind/enum/1")), "cnn");
  EXPECT_EQ(back.at(json::json_pointer("/properties/model/properties/kind/default")),
            "transformer");
  EXPECT_EQ(back.at(json::json_pointer("/properties/model/additionalProperties")), false);
}

// The same for ddpsim's own scenario table: every key a scenario may hold is in the schema that
// `ddpsim schema --format json` prints (docs/scenario.schema.json), with its type, default,
// allowed values, bounds and requiredness.
TEST(Schema, ScenarioSchemaHoldsEveryScenarioKey) {
  const json back = json::parse(to_json_schema(scenario_keys()).dump(2));
  expect_schema_holds_every_key(scenario_keys(), back);
  EXPECT_GT(scenario_keys().keys.size(), 100u);
}

// Every cell kind, written out by hand: the title, the header, "required" and a JSON default,
// a pattern, allowed values (JSON-quoted), a two-sided and an exclusive range, an array count,
// a free-form object, an escaped pipe and a newline folded into a space.
TEST(Schema, MarkdownOfASmallTableExactly) {
  std::vector<KeySpec> keys;
  {
    auto s = spec("/name", KeyType::kString);
    s.required = true;
    s.pattern = "[a-z]+";
    s.help = "Name | label.";
    keys.push_back(s);
  }
  {
    auto s = spec("/size", KeyType::kInteger);
    s.unit = "MiB";
    s.default_value = 25;
    s.minimum = 1;
    s.maximum = 1024;
    s.help = "Cap.";
    keys.push_back(s);
  }
  {
    auto s = spec("/mode", KeyType::kString);
    s.allowed = {"a", "b"};
    s.default_value = "a";
    keys.push_back(s);
  }
  {
    auto s = spec("/ratio", KeyType::kNumber);
    s.minimum = 0;
    s.exclusive_minimum = true;
    s.default_value = 0.5;
    keys.push_back(s);
  }
  {
    auto s = spec("/list", KeyType::kArray);
    s.minimum = 1;
    s.maximum = 4;
    keys.push_back(s);
  }
  {
    auto s = spec("/free", KeyType::kObject);
    s.pattern = "free";
    s.help = "Two\nlines.";
    keys.push_back(s);
  }
  {
    auto s = spec("/flag", KeyType::kBoolean);
    s.default_value = false;
    keys.push_back(s);
  }
  EXPECT_EQ(to_markdown(KeyTable{"tiny", keys}),
            "# tiny keys\n"
            "\n"
            "| Key | Type | Unit | Default | Allowed / range | Description |\n"
            "|---|---|---|---|---|---|\n"
            "| `/name` | string |  | required | matches `[a-z]+` | Name \\| label. |\n"
            "| `/size` | integer | MiB | `25` | >= 1 and <= 1024 | Cap. |\n"
            "| `/mode` | string |  | `\"a\"` | `\"a\"`, `\"b\"` |  |\n"
            "| `/ratio` | number |  | `0.5` | > 0 |  |\n"
            "| `/list` | array |  |  | of 1 to 4 elements |  |\n"
            "| `/free` | object |  |  | free-form | Two lines. |\n"
            "| `/flag` | boolean |  | `false` |  |  |\n");
}

TEST(Schema, MarkdownOneRowPerKey) {
  const auto t = test_table();
  const std::string md = to_markdown(t);
  EXPECT_EQ(md.rfind("# scenario", 0), 0u) << md;
  EXPECT_NE(md.find("| Key | Type | Unit | Default | Allowed / range | Description |"),
            std::string::npos);

  std::size_t rows = 0;
  std::size_t pos = 0;
  while ((pos = md.find("\n| `", pos)) != std::string::npos) {
    ++rows;
    ++pos;
  }
  EXPECT_EQ(rows, t.keys.size());
  for (const auto& k : t.keys) {
    EXPECT_NE(md.find("| `" + k.pointer + "` |"), std::string::npos) << k.pointer;
  }
  EXPECT_NE(md.find("| `/training/per_gpu_batch` | integer | samples | `8` | >= 1 | "
                    "Micro-batch per GPU. |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| `/training/learning_rate` | number |  |  | > 0 and <= 1 |  |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("`\"ddp\"`, `\"zero1\"`"), std::string::npos) << md;
  EXPECT_NE(md.find("| `/name` | string |  | required | matches `[a-z][a-z0-9_-]*` |"),
            std::string::npos)
      << md;
  // Pipes in cells are escaped so the table keeps six columns.
  EXPECT_NE(md.find("| a\\|b |"), std::string::npos) << md;
  EXPECT_NE(md.find("Free text \\| with a pipe."), std::string::npos) << md;
}

}  // namespace
}  // namespace ddpsim::model
