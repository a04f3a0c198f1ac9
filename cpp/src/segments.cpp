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
  if (name.find('/') != std::string::npos)
    shm_error("segment name \"" + name + "\" contains '/'; names are plain file names under /dev/shm");
  if (name.find('\0') != std::string::npos) shm_error("segment name contains a NUL byte");
}

void SegmentCache::remap(const std::string& name, Mapping& m, uint64_t size) {
  uint8_t* data = nullptr;
  if (size > 0) {
    void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, m.fd, 0);
    if (p == MAP_FAILED)
      shm_error("cannot map segment " + dir_ + "/" + name + " (" + std::to_string(size) + " bytes): " + errno_text());
    data = static_cast<uint8_t*>(p);
  }
  if (m.data) ::munmap(m.data, m.size);
  m.data = data;
  m.size = size;
}

SegmentCache::Mapping& SegmentCache::open(const std::string& name) {
  check_name(name);
  auto it = maps_.find(name);
  if (it != maps_.end()) return it->second;

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
  Mapping m;
  m.fd = fd;
  try {
    remap(name, m, static_cast<uint64_t>(st.st_size));
  } catch (...) {
    ::close(fd);
    throw;
  }
  return maps_.emplace(name, m).first->second;
}

uint8_t* SegmentCache::range(const std::string& name, uint64_t offset, uint64_t length) {
  Mapping& m = open(name);
  struct stat st {};
  if (::fstat(m.fd, &st) != 0) shm_error("cannot stat segment " + name + ": " + errno_text());
  uint64_t now = static_cast<uint64_t>(st.st_size);
  if (offset > now || length > now - offset) {
    std::string why = now < m.size ? "; it shrank from " + std::to_string(m.size) + " bytes since it was mapped" : "";
    shm_error("range [" + std::to_string(offset) + ", +" + std::to_string(length) + ") is past the end of segment " +
              name + " (" + std::to_string(now) + " bytes" + why + ")");
  }
  if (offset + length > m.size) remap(name, m, now);  // the driver grew it
  return m.data ? m.data + offset : nullptr;
}

void SegmentCache::map(const std::string& name) { open(name); }

bool SegmentCache::unmap(const std::string& name) {
  check_name(name);
  auto it = maps_.find(name);
  if (it == maps_.end()) return false;
  if (it->second.data) ::munmap(it->second.data, it->second.size);
  ::close(it->second.fd);
  maps_.erase(it);
  return true;
}

void SegmentCache::clear() {
  for (auto& [name, m] : maps_) {
    if (m.data) ::munmap(m.data, m.size);
    ::close(m.fd);
  }
  maps_.clear();
}

}  // namespace zyx
