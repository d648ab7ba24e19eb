#include "t5s/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <tuple>

#include "base/json_text.h"
#include "t5s/atomic_file.h"
#include "t5s/error.h"

namespace t5s {
namespace {

using json = nlohmann::json;

[[noreturn]] void corrupt(const std::filesystem::path& file, const std::string& what) {
    throw Error(ErrorCode::CorruptFile, file.string() + ": " + what);
}

// The dtypes the reference implementation (the `safetensors` crate) knows, with their size in
// bits. Names it knows but T5 Studio cannot hold are Unsupported, not corrupt.
int reference_dtype_bits(const std::string& s) {
    static const std::pair<const char*, int> kBits[] = {
        {"BOOL", 8}, {"U8", 8},   {"I8", 8},    {"F8_E5M2", 8}, {"F8_E4M3", 8}, {"F8_E8M0", 8}, {"I16", 16},
        {"U16", 16}, {"F16", 16}, {"BF16", 16}, {"I32", 32},    {"U32", 32},    {"F32", 32},    {"F64", 64},
        {"I64", 64}, {"U64", 64}, {"F4", 4},    {"F6_E2M3", 6}, {"F6_E3M2", 6}, {"C64", 64}};
    for (const auto& [name, bits] : kBits) {
        if (s == name) return bits;
    }
    return 0;
}

// An unsigned JSON integer as serde reads a usize: any non-negative integer that fits 64 bits.
bool as_usize(const json& v, uint64_t* out) {
    if (v.is_number_unsigned()) {
        *out = v.get<uint64_t>();
        return true;
    }
    if (v.is_number_integer() && v.get<int64_t>() >= 0) {  // "-0"
        *out = static_cast<uint64_t>(v.get<int64_t>());
        return true;
    }
    return false;
}

struct Entry {
    TensorView view;
    uint64_t begin = 0, end = 0;
};

Entry parse_entry(const std::string& name, const json& entry, const std::filesystem::path& file) {
    const std::string what = "tensor '" + name + "' ";
    if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") || !entry.contains("data_offsets") ||
        !entry["dtype"].is_string() || !entry["shape"].is_array() || !entry["data_offsets"].is_array() ||
        entry["data_offsets"].size() != 2) {
        corrupt(file, what + "has a malformed header entry (needs dtype, shape and data_offsets [begin, end])");
    }
    Entry e;
    e.view.name = name;
    const std::string dtype = entry["dtype"].get<std::string>();
    const int bits = reference_dtype_bits(dtype);
    if (bits == 0) corrupt(file, what + "has unknown dtype '" + dtype + "'");
    // Element count and byte size exactly as the reference checks them: left to right, failing on
    // the first 64-bit overflow (so [2^62, 8, 0] is rejected even though it holds nothing).
    uint64_t numel = 1;
    for (const auto& d : entry["shape"]) {
        uint64_t dim = 0;
        if (!as_usize(d, &dim)) corrupt(file, what + "has a non-integer or negative dimension");
        if (dim > INT64_MAX || (dim != 0 && numel > UINT64_MAX / dim)) corrupt(file, what + "is too large (shape overflows)");
        numel *= dim;
        e.view.shape.push_back(static_cast<int64_t>(dim));
    }
    if (numel > UINT64_MAX / static_cast<uint64_t>(bits)) corrupt(file, what + "is too large (shape overflows)");
    if (numel * bits % 8 != 0) corrupt(file, what + "does not fill whole bytes");
    const uint64_t expected = numel * bits / 8;
    const auto& off = entry["data_offsets"];
    if (!as_usize(off[0], &e.begin) || !as_usize(off[1], &e.end)) corrupt(file, what + "has invalid data_offsets");
    if (e.begin > e.end) corrupt(file, what + "has data_offsets with begin > end");
    if (expected != e.end - e.begin) {
        corrupt(file, what + "has " + std::to_string(e.end - e.begin) + " bytes but its shape and dtype need " +
                          std::to_string(expected));
    }
    const auto known = try_parse_enum<DType>(dtype);
    if (!known)
        throw Error(ErrorCode::Unsupported,
                    file.string() + ": " + what + "has dtype " + dtype + ", which T5 Studio does not read");
    e.view.dtype = *known;
    return e;
}

}  // namespace

void parse_safetensors(const unsigned char* bytes, size_t size, const std::filesystem::path& file,
                       std::map<std::string, TensorView>* tensors, std::map<std::string, std::string>* metadata) {
    // The same checks, in the same order, as the reference reader (safetensors::SafeTensors::read_metadata).
    if (size < 8) corrupt(file, "truncated safetensors file (" + std::to_string(size) + " bytes, no header length)");
    uint64_t header_len = 0;
    for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | bytes[i];
    constexpr uint64_t kMaxHeader = 100000000;  // the reference's MAX_HEADER_SIZE
    if (header_len > kMaxHeader) corrupt(file, "header length " + std::to_string(header_len) + " is over the 100 MB limit");
    if (header_len > size - 8) {
        corrupt(file, "header length " + std::to_string(header_len) + " goes beyond the end of the file (" +
                          std::to_string(size) + " bytes)");
    }
    // nlohmann::json skips a UTF-8 byte-order mark; the reference (serde_json) refuses it.
    if (header_len >= 3 && bytes[8] == 0xEF && bytes[9] == 0xBB && bytes[10] == 0xBF)
        corrupt(file, "bad JSON header: it starts with a UTF-8 byte-order mark");
    // Duplicate names: the last one wins, as in the reference (serde into a HashMap).
    const json header = parse_json_text(std::string_view(reinterpret_cast<const char*>(bytes) + 8, header_len),
                                        file.string() + ": bad JSON header");
    if (!header.is_object()) corrupt(file, "bad JSON header: not an object");
    std::vector<Entry> entries;
    for (auto it = header.begin(); it != header.end(); ++it) {
        if (it.key() != "__metadata__") {
            entries.push_back(parse_entry(it.key(), it.value(), file));
            continue;
        }
        const json& meta = it.value();
        if (meta.is_null()) continue;
        if (!meta.is_object()) corrupt(file, "__metadata__ must be an object of strings");
        for (auto m = meta.begin(); m != meta.end(); ++m) {
            if (!m.value().is_string()) corrupt(file, "__metadata__ value '" + m.key() + "' must be a string");
            (*metadata)[m.key()] = m.value().get<std::string>();
        }
    }
    // Sorted by offsets, the tensors must tile the data section exactly: no gap, no overlap, no
    // bytes after the last one (a header length off by one would otherwise shift every tensor).
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return std::tie(a.begin, a.end) < std::tie(b.begin, b.end); });
    const uint64_t data_size = size - 8 - header_len;
    uint64_t covered = 0;
    for (const Entry& e : entries) {
        if (e.begin != covered) {
            corrupt(file, "tensor '" + e.view.name + "' starts at data byte " + std::to_string(e.begin) + ", expected " +
                              std::to_string(covered) + " (data_offsets must be contiguous and not overlap)");
        }
        if (e.end > data_size) {
            corrupt(file, "truncated: tensor '" + e.view.name + "' ends at data byte " + std::to_string(e.end) +
                              " but the file holds " + std::to_string(data_size) + " data bytes");
        }
        covered = e.end;
    }
    if (covered != data_size) {
        corrupt(file, "the tensors cover " + std::to_string(covered) + " data bytes but the file holds " +
                          std::to_string(data_size) + " (trailing bytes or wrong header length)");
    }
    for (Entry& e : entries) {
        e.view.data = bytes + 8 + header_len + e.begin;
        e.view.nbytes = e.end - e.begin;
        (*tensors)[e.view.name] = std::move(e.view);
    }
}

size_t dtype_size(DType d) {
    switch (d) {
        case DType::F64:
        case DType::I64: return 8;
        case DType::F32:
        case DType::I32: return 4;
        case DType::F16:
        case DType::BF16:
        case DType::I16: return 2;
        default: return 1;
    }
}

int64_t TensorView::numel() const {
    // The reader accepts what the reference accepts: a shape such as [2^60, 8, 0] whose partial
    // products exceed int64 but which holds nothing. Without a zero the product is bounded by the
    // tensor's bytes, which the reader checked.
    if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
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
    struct stat st {};
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
    parse_safetensors(static_cast<const unsigned char*>(map), size, file, &f->tensors_, &f->metadata_);
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
