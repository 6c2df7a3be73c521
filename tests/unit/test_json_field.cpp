#include "common/json_field.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "common/errors.hpp"
#include "tests/unit/fixture.hpp"

namespace np {
namespace {

using testing::error_of;

const nlohmann::json kDoc = nlohmann::json::parse(R"({
    "n": 3, "neg": -1, "big": 18446744073709551615, "frac": 1.5, "s": "x", "b": true,
    "null": null, "list": [{"k": "v"}, 2], "obj": {"inner": {"deep": 1}}
})");

TEST(JsonField, ReadsEachType) {
    const JsonField doc(kDoc, "");
    EXPECT_EQ(doc.at("n").u64(), 3u);
    EXPECT_EQ(doc.at("neg").i64(), -1);
    EXPECT_EQ(doc.at("big").u64(), 18446744073709551615u);
    EXPECT_EQ(doc.at("frac").number(), 1.5);
    EXPECT_EQ(doc.at("n").number(), 3.0);
    EXPECT_EQ(doc.at("s").str(), "x");
    EXPECT_TRUE(doc.at("b").boolean());
    EXPECT_TRUE(doc.at("null").is_null());
    EXPECT_EQ(doc.at("list").array_size(), 2u);
    EXPECT_EQ(doc.at("obj").keys(), std::vector<std::string>{"inner"});
}

TEST(JsonField, AbsentAndNullAreNothingForFindAndMissingForRequired) {
    const JsonField doc(kDoc, "");
    EXPECT_FALSE(doc.find("none"));
    EXPECT_FALSE(doc.find("null"));
    EXPECT_EQ(doc.optional_str("null"), std::nullopt);
    EXPECT_EQ(doc.optional_number("none"), std::nullopt);
    EXPECT_EQ(doc.optional_number("frac"), 1.5);
    EXPECT_EQ(error_of([&] { doc.at("none"); }), "none: missing");
    EXPECT_EQ(error_of([&] { doc.required("null"); }), "null: missing");
}

TEST(JsonField, ErrorsNameThePathAndWhatWasFound) {
    const JsonField doc(kDoc, "t.json: explain");
    EXPECT_EQ(error_of([&] { doc.at("list").at(0).at("k").u64(); }),
              "t.json: explain.list[0].k: expected a non-negative integer, found a string");
    EXPECT_EQ(error_of([&] { doc.at("list").at(1).at("k"); }),
              "t.json: explain.list[1]: expected an object, found a number");
    EXPECT_EQ(error_of([&] { doc.at("obj").at("inner").at("deep").str(); }),
              "t.json: explain.obj.inner.deep: expected a string, found a number");
    EXPECT_EQ(error_of([&] { doc.at("neg").u64(); }),
              "t.json: explain.neg: expected a non-negative integer, found a negative integer");
    EXPECT_EQ(error_of([&] { doc.at("big").i64(); }),
              "t.json: explain.big: expected an integer, found an integer above 2^63 - 1");
    EXPECT_EQ(error_of([&] { doc.at("frac").i64(); }),
              "t.json: explain.frac: expected an integer, found a number with a fraction or an "
              "exponent");
    EXPECT_EQ(error_of([&] { doc.at("s").number(); }),
              "t.json: explain.s: expected a number, found a string");
    EXPECT_EQ(error_of([&] { doc.at("null").boolean(); }),
              "t.json: explain.null: expected true or false, found null");
    EXPECT_EQ(error_of([&] { doc.at("b").array_size(); }),
              "t.json: explain.b: expected an array, found a boolean");
}

TEST(JsonField, ADocumentNamesItsFieldsAfterTheSource) {
    const JsonField doc = JsonField::document(kDoc, "np_contract_manual.json");
    EXPECT_EQ(error_of([&] { doc.at("s").u64(); }),
              "np_contract_manual.json: s: expected a non-negative integer, found a string");
    EXPECT_EQ(doc.at("obj").at("inner").path(), "np_contract_manual.json: obj.inner");
    EXPECT_EQ(JsonField::document(kDoc, "").at("n").path(), "n");
}

}  // namespace
}  // namespace np
