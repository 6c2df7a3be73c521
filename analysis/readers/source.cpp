#include "analysis/readers/source.hpp"

#include <algorithm>
#include <utility>

namespace np {

std::string_view PeekableSource::peek(size_t n) {
    while (head_.size() < n) {
        if (pending_.empty()) {
            pending_ = in_.next();  // valid until in_.next() is called again
            if (pending_.empty()) break;
        }
        const size_t take = std::min(pending_.size(), n - head_.size());
        head_.append(pending_.data(), take);
        pending_.remove_prefix(take);
    }
    return head_;
}

void PeekableSource::skip(size_t n) {
    head_.erase(0, std::min(n, head_.size()));
}

std::string_view PeekableSource::next() {
    if (!head_given_) {
        head_given_ = true;
        if (!head_.empty()) return head_;
    }
    if (!pending_.empty()) return std::exchange(pending_, std::string_view{});
    return in_.next();
}

bool LineReader::next(Line& line) {
    bool joining = false;  // the line began in an earlier chunk and is gathered in joined_
    bool cut = false;
    std::string_view text;
    const auto gather = [&](std::string_view piece) {
        if (joined_.size() + piece.size() > max_line_) {
            cut = true;
            piece = piece.substr(0, max_line_ - std::min(max_line_, joined_.size()));
        }
        joined_.append(piece);
    };
    joined_.clear();
    while (true) {
        if (chunk_.empty()) {
            if (!end_) {
                chunk_ = in_.next();
                bytes_ += static_cast<int64_t>(chunk_.size());
                end_ = chunk_.empty();
                continue;
            }
            if (!joining) return false;
            text = joined_;  // the last line has no terminator
            break;
        }
        const size_t nl = chunk_.find('\n');
        if (nl == std::string_view::npos) {
            gather(chunk_);
            joining = true;
            chunk_ = {};
            continue;
        }
        const std::string_view piece = chunk_.substr(0, nl);
        chunk_.remove_prefix(nl + 1);
        if (joining) {
            gather(piece);
            text = joined_;
        } else if (piece.size() > max_line_) {
            text = piece.substr(0, max_line_);
            cut = true;
        } else {
            text = piece;
        }
        break;
    }
    if (!cut && !text.empty() && text.back() == '\r') text.remove_suffix(1);
    line.number = ++number_;
    line.text = text;
    line.cut = cut;
    return true;
}

}  // namespace np
