// SegmentCache maps the driver's shared memory segments (/dev/shm/<name>)
// once, on `map` or first use, and keeps each mapping (and its file
// descriptor) until `unmap` or exit.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace zyx {

class SegmentCache {
 public:
  explicit SegmentCache(std::string dir = "/dev/shm") : dir_(std::move(dir)) {}
  ~SegmentCache() { clear(); }
  SegmentCache(const SegmentCache&) = delete;
  SegmentCache& operator=(const SegmentCache&) = delete;

  // Throws Error("shm_error") when the name could escape the directory.
  static void check_name(const std::string& name);

  // range returns a pointer to bytes [offset, offset+length) of the segment,
  // mapping it first if needed. Before every transfer it looks at the file's
  // size (fstat): a range past the file's current end is shm_error (a
  // segment shrunk since it was mapped would otherwise fault with SIGBUS),
  // and a file grown past the mapping is mapped again.
  uint8_t* range(const std::string& name, uint64_t offset, uint64_t length);

  // map maps the segment now; mapping a mapped segment is a no-op.
  void map(const std::string& name);
  // unmap drops the mapping; true when there was one.
  bool unmap(const std::string& name);
  void clear();

  size_t mapped() const { return maps_.size(); }

 private:
  struct Mapping {
    uint8_t* data = nullptr;
    uint64_t size = 0;
    int fd = -1;
  };
  Mapping& open(const std::string& name);
  void remap(const std::string& name, Mapping& m, uint64_t size);

  std::string dir_;
  std::map<std::string, Mapping> maps_;
};

}  // namespace zyx
