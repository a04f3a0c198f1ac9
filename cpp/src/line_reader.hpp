// LineReader splits a byte stream (the runtime's stdin) into request lines
// with a hard length limit, so that one oversized line costs an error reply
// and never the process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace zyx {

// The protocol's line limit (docs/protocol.md, "Transport").
inline constexpr size_t kMaxLineBytes = size_t{64} << 20;

class LineReader {
 public:
  enum class Status {
    line,      // *line holds one line, without its '\n'
    too_long,  // a line over the limit was skipped up to and including its '\n'
    eof,       // the input ended (a last line without '\n' is returned first)
    error,     // read() failed; errno says why
  };

  LineReader(int fd, size_t max_line = kMaxLineBytes, size_t chunk = size_t{1} << 20);

  // Next returns the next line. The view stays valid until the next call.
  // After too_long, *skipped holds how many bytes the skipped line had.
  Status next(std::string_view* line, uint64_t* skipped = nullptr);

 private:
  // fill reads more input after end_; returns bytes read, 0 at EOF, -1 on error.
  long fill();

  int fd_;
  size_t max_line_, chunk_;
  std::vector<char> buf_;
  size_t start_ = 0, end_ = 0, scanned_ = 0;
  bool eof_ = false;
};

}  // namespace zyx
