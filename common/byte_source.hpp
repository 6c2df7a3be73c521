#pragma once
// The bytes of one input as the readers see them: in chunks, pulled one at a time, so a reader
// never needs the whole input in memory. The CLI implements ByteSource on a file descriptor
// (src/cli/files.hpp); tests and in-memory outputs use StringSource. Header-only, like the JSON
// reader that reads from it (common/json_document.hpp).
#include <cstddef>
#include <string_view>

namespace np {

class ByteSource {
  public:
    virtual ~ByteSource() = default;
    // The next chunk of the input; empty only at its end. The view stays valid until the next
    // call. Throws InputError when the input cannot be read on.
    virtual std::string_view next() = 0;
};

// A text already in memory, handed out in pieces of `chunk` bytes (all at once by default).
// Small pieces are how tests and fuzzers reach every chunk boundary a file read can produce.
class StringSource : public ByteSource {
  public:
    explicit StringSource(std::string_view text, size_t chunk = 0)
        : rest_(text), chunk_(chunk == 0 ? text.size() : chunk) {}
    std::string_view next() override {
        const std::string_view piece = rest_.substr(0, chunk_);
        rest_.remove_prefix(piece.size());
        return piece;
    }

  private:
    std::string_view rest_;
    size_t chunk_;
};

}  // namespace np
