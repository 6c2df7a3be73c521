// libFuzzer target: the fan-out's inventory of pairs (network-performance_pairs.yml, YAML) as
// `np-explain pairs` reads and schedules it, and the np-pairs/1 schedule it writes read back as
// `parity` and `report` read a gathered dir's np_pairs.json. An input that starts with '{' is
// also read as such a schedule directly.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "analysis/pairs.hpp"
#include "src/common/errors.hpp"
#include "src/common/json_document.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view text{reinterpret_cast<const char*>(data), size};
    try {
        const np::PairPlan plan = np::parse_pair_plan(text, "fuzz.yml", np::Params{});
        (void)np::render_pair_plan(plan);
        (void)np::pair_plan_from_json(np::to_json(plan), "np_pairs.json");
    } catch (const np::InputError&) {
    }
    if (!text.empty() && text.front() == '{') {
        try {
            (void)np::pair_plan_from_json(np::parse_json_document(text, "fuzz.json"),
                                          "fuzz.json");
        } catch (const np::InputError&) {
        }
    }
    return 0;
}
