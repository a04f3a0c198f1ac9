#include "line_reader.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace zyx {

LineReader::LineReader(int fd, size_t max_line, size_t chunk)
    : fd_(fd), max_line_(max_line), chunk_(chunk ? chunk : 1) {}

long LineReader::fill() {
  // Make room for one chunk: first by dropping consumed bytes, then by growing.
  if (start_ > 0 && buf_.size() - end_ < chunk_) {
    std::memmove(buf_.data(), buf_.data() + start_, end_ - start_);
    end_ -= start_;
    scanned_ -= start_;
    start_ = 0;
  }
  if (buf_.size() - end_ < chunk_) buf_.resize(end_ + chunk_);
  for (;;) {
    ssize_t n = ::read(fd_, buf_.data() + end_, buf_.size() - end_);
    if (n < 0 && errno == EINTR) continue;
    if (n > 0) end_ += static_cast<size_t>(n);
    return static_cast<long>(n);
  }
}

LineReader::Status LineReader::next(std::string_view* line, uint64_t* skipped) {
  for (;;) {
    if (scanned_ < start_) scanned_ = start_;
    const void* nl = scanned_ < end_ ? std::memchr(buf_.data() + scanned_, '\n', end_ - scanned_) : nullptr;
    if (nl) {
      size_t pos = static_cast<size_t>(static_cast<const char*>(nl) - buf_.data());
      size_t len = pos - start_;
      size_t begin = start_;
      start_ = scanned_ = pos + 1;
      if (len > max_line_) {
        if (skipped) *skipped = len;
        return Status::too_long;
      }
      *line = std::string_view(buf_.data() + begin, len);
      return Status::line;
    }
    scanned_ = end_;
    if (end_ - start_ > max_line_) {
      // Over the limit with no newline yet: drop what we hold and discard
      // input until the newline, keeping memory bounded.
      uint64_t dropped = end_ - start_;
      start_ = end_ = scanned_ = 0;
      for (;;) {
        long n = fill();
        if (n < 0) return Status::error;
        if (n == 0) {
          eof_ = true;
          if (skipped) *skipped = dropped;
          return Status::too_long;
        }
        const void* p = std::memchr(buf_.data(), '\n', end_);
        if (p) {
          size_t pos = static_cast<size_t>(static_cast<const char*>(p) - buf_.data());
          dropped += pos;
          start_ = scanned_ = pos + 1;
          if (skipped) *skipped = dropped;
          return Status::too_long;
        }
        dropped += end_;
        start_ = end_ = scanned_ = 0;
      }
    }
    if (eof_) {
      if (end_ > start_) {
        *line = std::string_view(buf_.data() + start_, end_ - start_);
        start_ = scanned_ = end_;
        return Status::line;
      }
      return Status::eof;
    }
    long n = fill();
    if (n < 0) return Status::error;
    if (n == 0) eof_ = true;
  }
}

}  // namespace zyx
