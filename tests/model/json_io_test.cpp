// The one JSON reader every file goes through (read_json_file / parse_json_text): what a hostile
// or careless input gets (issue 20): regular files only, a nesting limit, duplicate keys and NUL
// bytes refused, each with one InputError naming the file and, where there is one, the pointer.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "model/error.hpp"
#include "model/scenario/scenario.hpp"

namespace ddpsim::model {
namespace {

using nlohmann::json;

// The error's text, or "(parsed)" when the text is accepted.
std::string parse_error(const std::string& text) {
  try {
    (void)parse_json_text(text, "s.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(parsed)";
}

std::string scratch_path(const std::string& name) { return ::testing::TempDir() + "/" + name; }

TEST(JsonIo, AcceptsOrdinaryDocuments) {
  EXPECT_EQ(parse_json_text(R"({"a": [1, {"b": 2}], "c": {"d": "~/x"}})", "s.json")["a"][1]["b"],
            2);
  // The same key in different objects is fine.
  EXPECT_EQ(parse_error(R"({"a": {"k": 1}, "b": {"k": 2}, "c": [{"k": 1}, {"k": 2}]})"),
            "(parsed)");
  // 256 levels (root included) is the limit, reached exactly.
  EXPECT_EQ(parse_error(std::string(256, '[') + std::string(256, ']')), "(parsed)");
}

// nlohmann keeps the last of two equal keys, so "gpus": 8, "gpus": 64 would silently predict 64.
// The pointer names the repeated key where it sits, through arrays too.
TEST(JsonIo, RefusesDuplicateKeysWithTheirPointer) {
  const std::string top = parse_error(R"({"cluster": {"gpus": 8, "gpus": 64}})");
  EXPECT_NE(top.find("s.json"), std::string::npos) << top;
  EXPECT_NE(top.find("/cluster/gpus"), std::string::npos) << top;
  EXPECT_NE(top.find("\"gpus\" a second time"), std::string::npos) << top;
  const std::string nested = parse_error(R"({"a": [0, {"x": 1}, {"b/c": 1, "b/c": 2}]})");
  EXPECT_NE(nested.find("/a/2/b~1c"), std::string::npos) << nested;
  // After a nested array closes, the parent array's index keeps counting.
  const std::string after = parse_error(R"({"a": [[1, 2], {"k": 1, "k": 1}]})");
  EXPECT_NE(after.find("/a/1/k"), std::string::npos) << after;
}

// 10^5 levels: refused at level 256 (and no recursive walk ever sees such a document), not a
// stack overflow.
TEST(JsonIo, RefusesNestingDeeperThan256Levels) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string e = parse_error(deep);
  EXPECT_NE(e.find("nested at most 256 levels"), std::string::npos) << e;
  std::string nested_objects;
  for (int i = 0; i < 300; ++i) nested_objects += "{\"k\":";
  nested_objects += "1" + std::string(300, '}');
  const std::string objects = parse_error(nested_objects);
  EXPECT_NE(objects.find("/k/k/k"), std::string::npos) << objects;
}

TEST(JsonIo, RefusesNulBytes) {
  const std::string e = parse_error(std::string("{\"a\": 1}\0\0", 10));
  EXPECT_NE(e.find("a NUL byte at byte 8"), std::string::npos) << e;
}

// A FIFO would block open() and read() forever; /dev/zero never ends. Both are refused before a
// byte is read.
TEST(JsonIo, ReadsRegularFilesOnly) {
  const std::string fifo = scratch_path("json_io_fifo.json");
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  try {
    (void)read_json_file(fifo);
    ADD_FAILURE() << "a FIFO was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("a FIFO"), std::string::npos) << e.what();
  }
  ::unlink(fifo.c_str());
  try {
    (void)read_json_file("/dev/zero");
    ADD_FAILURE() << "/dev/zero was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("a character device"), std::string::npos) << e.what();
  }
  const std::string ok = scratch_path("json_io_ok.json");
  std::ofstream(ok) << R"({"a": 1})";
  EXPECT_EQ(read_json_file(ok)["a"], 1);
}

// Control characters (an ESC sequence in a scenario name) print as \xNN; newline, tab and UTF-8
// stay as they are.
TEST(Printable, EscapesControlCharactersOnly) {
  EXPECT_EQ(printable("a\x1b[31mb\x7f\n\tc\xc3\xa9"), "a\\x1b[31mb\\x7f\n\tc\xc3\xa9");
  EXPECT_EQ(printable(std::string("x\0y", 3)), "x\\x00y");
}

// C1 controls act on a terminal too: U+009B (UTF-8 C2 9B) is the 8-bit CSI, so "\u009b31m"
// recolours an xterm exactly as ESC [ 31m does. They print as \u00NN. A byte that is not valid
// UTF-8 (a lone 0x9b, which a Latin-1 terminal takes as CSI; an overlong C0 80; a truncated
// sequence) prints as \xNN. U+00A0 and above, and 4-byte characters, are kept.
TEST(Printable, EscapesC1ControlsAndInvalidUtf8) {
  EXPECT_EQ(printable("a\xc2\x9b"
                      "31mb"),
            "a\\u009b31mb");
  EXPECT_EQ(printable("\xc2\x80\xc2\x9f\xc2\xa0"), "\\u0080\\u009f\xc2\xa0");
  EXPECT_EQ(printable("x\x9b"
                      "31m"),
            "x\\x9b31m");
  EXPECT_EQ(printable("\xc0\x80"), "\\xc0\\x80");
  EXPECT_EQ(printable("\xe2\x82"), "\\xe2\\x82");
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a UTF-16 surrogate
  EXPECT_EQ(printable("\xe2\x82\xac \xf0\x9f\x98\x80"), "\xe2\x82\xac \xf0\x9f\x98\x80");
}

// one_line: what a one-line message echoes. Newline, carriage return and tab become \n, \r, \t,
// so a path or an environment value holding a newline cannot split the line in two.
TEST(Printable, OneLineEscapesLineBreaks) {
  EXPECT_EQ(one_line("a\nb\r\tc\x1b"), "a\\nb\\r\\tc\\x1b");
  EXPECT_EQ(one_line("caf\xc3\xa9 \xc2\x9b"), "caf\xc3\xa9 \\u009b");
  EXPECT_EQ(printable("a\nb\r"), "a\nb\\r");
}

}  // namespace
}  // namespace ddpsim::model
