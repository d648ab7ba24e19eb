#include "t5s/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "atomic_file.h"
#include "t5s/error.h"

namespace t5s {
namespace {

using json = nlohmann::json;

bool parse_dtype(const std::string& s, DType* out) {
    static const std::pair<const char*, DType> kNames[] = {
        {"F32", DType::F32}, {"F16", DType::F16}, {"BF16", DType::BF16}, {"F64", DType::F64}, {"I64", DType::I64},
        {"I32", DType::I32}, {"I16", DType::I16}, {"I8", DType::I8},     {"U8", DType::U8},   {"BOOL", DType::Bool}};
    for (const auto& [name, dtype] : kNames) {
        if (s == name) {
            *out = dtype;
            return true;
        }
    }
    return false;
}

[[noreturn]] void corrupt(const std::filesystem::path& file, const std::string& what) {
    throw Error(ErrorCode::CorruptFile, file.string() + ": " + what);
}

}  // namespace

const char* to_string(DType d) {
    switch (d) {
        case DType::F32: return "F32";
        case DType::F16: return "F16";
        case DType::BF16: return "BF16";
        case DType::F64: return "F64";
        case DType::I64: return "I64";
        case DType::I32: return "I32";
        case DType::I16: return "I16";
        case DType::I8: return "I8";
        case DType::U8: return "U8";
        case DType::Bool: return "BOOL";
    }
    return "?";
}

size_t dtype_size(DType d) {
    switch (d) {
        case DType::F64: case DType::I64: return 8;
        case DType::F32: case DType::I32: return 4;
        case DType::F16: case DType::BF16: case DType::I16: return 2;
        default: return 1;
    }
}

int64_t TensorView::numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

std::shared_ptr<SafetensorsFile> SafetensorsFile::open(const std::filesystem::path& file) {
    int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) throw Error(ErrorCode::FileNotFound, file.string() + ": file not found");
        throw Error(ErrorCode::FileNotFound, file.string() + ": cannot open (" + std::strerror(errno) + ")");
    }
    struct stat st{};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        throw Error(ErrorCode::FileNotFound, file.string() + ": not a regular file");
    }
    const size_t size = static_cast<size_t>(st.st_size);
    if (size < 8) {
        ::close(fd);
        corrupt(file, "truncated safetensors file (" + std::to_string(size) + " bytes, no header length)");
    }
    void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (map == MAP_FAILED) throw Error(ErrorCode::CorruptFile, file.string() + ": mmap failed (" + std::strerror(errno) + ")");

    std::shared_ptr<SafetensorsFile> f(new SafetensorsFile());
    f->path_ = file;
    f->map_ = map;
    f->map_size_ = size;
    const auto* bytes = static_cast<const unsigned char*>(map);
    uint64_t header_len = 0;
    for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | bytes[i];
    if (header_len > size - 8) {
        corrupt(file, "header length " + std::to_string(header_len) + " goes beyond the end of the file (" +
                          std::to_string(size) + " bytes)");
    }
    json header;
    try {
        header = json::parse(bytes + 8, bytes + 8 + header_len);
    } catch (const json::parse_error& e) {
        corrupt(file, std::string("bad JSON header: ") + e.what());
    }
    if (!header.is_object()) corrupt(file, "bad JSON header: not an object");
    const size_t data_start = 8 + header_len;
    const size_t data_size = size - data_start;
    for (auto it = header.begin(); it != header.end(); ++it) {
        const std::string& name = it.key();
        const json& entry = it.value();
        if (name == "__metadata__") {
            if (!entry.is_object()) corrupt(file, "__metadata__ must be an object of strings");
            for (auto m = entry.begin(); m != entry.end(); ++m) {
                if (m.value().is_string()) f->metadata_[m.key()] = m.value().get<std::string>();
            }
            continue;
        }
        if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") || !entry.contains("data_offsets") ||
            !entry["dtype"].is_string() || !entry["shape"].is_array() || !entry["data_offsets"].is_array() ||
            entry["data_offsets"].size() != 2) {
            corrupt(file, "tensor '" + name + "' has a malformed header entry");
        }
        TensorView view;
        view.name = name;
        const std::string dtype = entry["dtype"].get<std::string>();
        if (!parse_dtype(dtype, &view.dtype)) corrupt(file, "tensor '" + name + "' has unknown dtype '" + dtype + "'");
        for (const auto& d : entry["shape"]) {
            if (!d.is_number_unsigned()) corrupt(file, "tensor '" + name + "' has a non-integer or negative dimension");
            view.shape.push_back(d.get<int64_t>());
        }
        const auto& off = entry["data_offsets"];
        if (!off[0].is_number_unsigned() || !off[1].is_number_unsigned()) {
            corrupt(file, "tensor '" + name + "' has invalid data_offsets");
        }
        const uint64_t begin = off[0].get<uint64_t>(), end = off[1].get<uint64_t>();
        if (begin > end) corrupt(file, "tensor '" + name + "' has data_offsets with begin > end");
        if (end > data_size) {
            corrupt(file, "truncated: tensor '" + name + "' ends at data byte " + std::to_string(end) + " but the file holds " +
                              std::to_string(data_size) + " data bytes");
        }
        // numel overflow-safe check against the byte range
        uint64_t expected = dtype_size(view.dtype);
        for (int64_t d : view.shape) {
            if (d != 0 && expected > UINT64_MAX / static_cast<uint64_t>(d)) corrupt(file, "tensor '" + name + "' is too large");
            expected *= static_cast<uint64_t>(d);
        }
        if (expected != end - begin) {
            corrupt(file, "tensor '" + name + "' has " + std::to_string(end - begin) + " bytes but its shape and dtype need " +
                              std::to_string(expected));
        }
        view.data = bytes + data_start + begin;
        view.nbytes = end - begin;
        f->tensors_.emplace(name, std::move(view));
    }
    return f;
}

SafetensorsFile::~SafetensorsFile() {
    if (map_) munmap(map_, map_size_);
}

const TensorView* SafetensorsFile::find(const std::string& name) const {
    auto it = tensors_.find(name);
    return it == tensors_.end() ? nullptr : &it->second;
}

void write_safetensors(const std::filesystem::path& file, const std::vector<TensorToWrite>& tensors,
                       const std::map<std::string, std::string>& metadata) {
    json header = json::object();
    if (!metadata.empty()) header["__metadata__"] = metadata;
    // Offsets follow name order (json objects are sorted), which is what the safetensors library does too.
    std::map<std::string, const TensorToWrite*> ordered;
    for (const auto& t : tensors) ordered[t.name] = &t;
    uint64_t offset = 0;
    for (const auto& [name, t] : ordered) {
        header[name] = {{"dtype", to_string(t->dtype)}, {"shape", t->shape}, {"data_offsets", {offset, offset + t->nbytes}}};
        offset += t->nbytes;
    }
    std::string head = header.dump();
    while ((head.size() + 8) % 8 != 0) head.push_back(' ');
    std::string blob;
    blob.reserve(8 + head.size() + offset);
    uint64_t n = head.size();
    for (int i = 0; i < 8; ++i) blob.push_back(static_cast<char>((n >> (8 * i)) & 0xFF));
    blob += head;
    for (const auto& [name, t] : ordered) blob.append(static_cast<const char*>(t->data), t->nbytes);
    write_file_atomic(file, blob.data(), blob.size());
}

}  // namespace t5s
