#include "src/probe/walk_schedule.hpp"

namespace np::probe {

bool WalkSchedule::next(bool cut, const StreamNews& news, const std::vector<uint16_t>& unfound,
                        int64_t now_ms) {
    // The first sample walks for what was there before the probe.
    bool walk = cut || !last_walk_ms_;
    unnamed_ = unnamed_ || news.unnamed;
    if (!news.counted) {
        walk = walk || (unnamed_ && now_ms - *last_walk_ms_ >= kWalkEveryMs);
    } else {
        std::map<uint16_t, int64_t> still;
        for (const uint16_t port : unfound) {
            const auto it = unfound_since_.find(port);
            const int64_t since = it == unfound_since_.end() ? now_ms : it->second;
            still.emplace(port, since);
            walk = walk || now_ms - since <= retry_ms_;
        }
        unfound_since_ = std::move(still);
        walk = walk || (unnamed_ && now_ms - *last_walk_ms_ >= kFallbackMs);
    }
    if (walk) {
        last_walk_ms_ = now_ms;
        unnamed_ = false;
    }
    return walk;
}

}  // namespace np::probe
