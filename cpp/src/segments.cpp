#include "segments.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "device_layer.hpp"

namespace zyx {

namespace {

[[noreturn]] void shm_error(const std::string& msg) { throw Error("shm_error", msg); }

std::string errno_text() { return std::strerror(errno); }

}  // namespace

void SegmentCache::check_name(const std::string& name) {
  if (name.empty()) shm_error("segment name is empty");
  if (name.size() > 255) shm_error("segment name is longer than 255 bytes");
  if (name == "." || name == "..") shm_error("segment name \"" + name + "\" is not a file under /dev/shm");
  if (name.find('/') != std::string::npos) shm_error("segment name \"" + name + "\" contains '/'; names are plain file names under /dev/shm");
  if (name.find('\0') != std::string::npos) shm_error("segment name contains a NUL byte");
}

SegmentCache::Mapping& SegmentCache::open(const std::string& name, bool refresh) {
  check_name(name);
  auto it = maps_.find(name);
  if (it != maps_.end() && !refresh) return it->second;

  std::string path = dir_ + "/" + name;
  int fd = ::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) shm_error("cannot open segment " + path + ": " + errno_text());
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    std::string why = errno_text();
    ::close(fd);
    shm_error("cannot stat segment " + path + ": " + why);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    shm_error("segment " + path + " is not a regular file");
  }
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (it != maps_.end() && size <= it->second.size) {
    ::close(fd);
    return it->second;  // not grown: keep the mapping we have
  }
  uint8_t* data = nullptr;
  if (size > 0) {
    void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      std::string why = errno_text();
      ::close(fd);
      shm_error("cannot map segment " + path + " (" + std::to_string(size) + " bytes): " + why);
    }
    data = static_cast<uint8_t*>(p);
  }
  ::close(fd);  // the mapping keeps the segment alive
  if (it != maps_.end()) {
    if (it->second.data) ::munmap(it->second.data, it->second.size);
    it->second = Mapping{data, size};
    return it->second;
  }
  return maps_.emplace(name, Mapping{data, size}).first->second;
}

uint8_t* SegmentCache::range(const std::string& name, uint64_t offset, uint64_t length) {
  Mapping* m = &open(name, false);
  bool fits = offset <= m->size && length <= m->size - offset;
  if (!fits) {
    m = &open(name, true);
    fits = offset <= m->size && length <= m->size - offset;
  }
  if (!fits)
    shm_error("range [" + std::to_string(offset) + ", +" + std::to_string(length) + ") is past the end of segment " +
              name + " (" + std::to_string(m->size) + " bytes)");
  return m->data ? m->data + offset : nullptr;
}

void SegmentCache::map(const std::string& name) { open(name, false); }

bool SegmentCache::unmap(const std::string& name) {
  check_name(name);
  auto it = maps_.find(name);
  if (it == maps_.end()) return false;
  if (it->second.data) ::munmap(it->second.data, it->second.size);
  maps_.erase(it);
  return true;
}

void SegmentCache::clear() {
  for (auto& [name, m] : maps_)
    if (m.data) ::munmap(m.data, m.size);
  maps_.clear();
}

}  // namespace zyx
