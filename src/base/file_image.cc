#include "base/file_image.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace pg {

Result<FileImage> FileImage::Map(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    return IoError(path + ": cannot stat: " + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return InvalidArgument(path + ": not a regular file");
  }
  FileImage f;
  f.size_ = static_cast<uint64_t>(st.st_size);
  if (f.size_ > 0) {
    void* m = mmap(nullptr, f.size_, PROT_READ, MAP_SHARED, fd, 0);
    const int e = errno;
    ::close(fd);
    if (m == MAP_FAILED) return IoError(path + ": mmap failed: " + std::strerror(e));
    f.map_ = m;
    f.data_ = static_cast<const uint8_t*>(m);
  } else {
    ::close(fd);
  }
  return f;
}

FileImage FileImage::Copy(const uint8_t* data, size_t size) {
  FileImage f;
  f.owned_.assign(data, data + size);
  f.data_ = f.owned_.data();
  f.size_ = size;
  return f;
}

FileImage& FileImage::operator=(FileImage&& o) noexcept {
  if (this == &o) return *this;
  if (map_) munmap(map_, size_);
  data_ = std::exchange(o.data_, nullptr);
  size_ = std::exchange(o.size_, 0);
  map_ = std::exchange(o.map_, nullptr);
  owned_ = std::move(o.owned_);
  if (!map_) data_ = owned_.data();  // a moved vector keeps its storage
  return *this;
}

FileImage::~FileImage() {
  if (map_) munmap(map_, size_);
}

}  // namespace pg
