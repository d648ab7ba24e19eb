#include "base/file_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "t5s/error.h"

namespace t5s {

std::string read_text(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(ErrorCode::FileNotFound, path.string() + ": not found or unreadable");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void fsync_dir(const std::filesystem::path& dir) {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        ::fsync(fd);
        ::close(fd);
    }
}

}  // namespace t5s
