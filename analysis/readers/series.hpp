#pragma once
// A series that keeps at most `cap` points however long the run it comes from: when it is full,
// neighbouring points are merged in pairs and every later point stands for twice as many
// readings. A day of iperf3 at 0.1 s intervals (864,000) is kept as 52,734 points of 1.6 s; a
// week-long ping as every 16th reply. Memory stays bounded by `cap`, not by the input.
#include <cstddef>
#include <utility>
#include <vector>

namespace np {

inline constexpr size_t kMaxSeriesPoints = 65536;

// Merge(a, weight_a, b, weight_b) -> the point standing for both.
template <class T, class Merge>
class BoundedSeries {
  public:
    explicit BoundedSeries(size_t cap = kMaxSeriesPoints, Merge merge = Merge())
        : cap_(cap < 2 ? 2 : cap & ~size_t{1}), merge_(merge) {}

    void push(const T& v) {
        pending_ = pending_count_ == 0 ? v : merge_(pending_, pending_count_, v, 1);
        if (++pending_count_ < stride_) return;
        points_.push_back(std::move(pending_));
        pending_count_ = 0;
        if (points_.size() >= cap_) halve();
    }
    bool empty() const { return points_.empty() && pending_count_ == 0; }
    // Readings per point (1 until the series first filled up).
    size_t stride() const { return stride_; }
    // The points, a last partial group included.
    std::vector<T> take() {
        if (pending_count_ > 0) points_.push_back(std::move(pending_));
        pending_count_ = 0;
        return std::move(points_);
    }

  private:
    void halve() {
        std::vector<T> merged;
        merged.reserve(cap_ / 2 + 1);
        // Full means an even count: cap_ is even.
        for (size_t i = 0; i + 1 < points_.size(); i += 2)
            merged.push_back(merge_(points_[i], stride_, points_[i + 1], stride_));
        points_ = std::move(merged);
        stride_ *= 2;
    }

    size_t cap_;
    Merge merge_;
    std::vector<T> points_;
    T pending_{};
    size_t pending_count_ = 0;
    size_t stride_ = 1;
};

// Interval rates: a merged point is the mean of the readings it stands for.
struct MeanOf {
    double operator()(double a, size_t wa, double b, size_t wb) const {
        return (a * static_cast<double>(wa) + b * static_cast<double>(wb)) /
               static_cast<double>(wa + wb);
    }
};
using RateSeries = BoundedSeries<double, MeanOf>;

}  // namespace np
