#pragma once
// A memory-mapped reader of the safetensors format (8-byte little-endian header length, JSON
// header, raw little-endian data). Validates every offset against the file size before use.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace t5s {

enum class DType { F32, F16, BF16, F64, I64, I32, I16, I8, U8, Bool };
const char* to_string(DType dtype);
size_t dtype_size(DType dtype);

struct TensorView {
    std::string name;
    DType dtype = DType::F32;
    std::vector<int64_t> shape;
    const void* data = nullptr;  // points into the mapping; valid while the file is open
    size_t nbytes = 0;
    int64_t numel() const;
};

class SafetensorsFile {
public:
    // Throws t5s::Error naming the file: missing, truncated, header beyond the file, bad JSON,
    // unknown dtype, offsets out of range or not matching the shape.
    static std::shared_ptr<SafetensorsFile> open(const std::filesystem::path& file);
    ~SafetensorsFile();

    const std::filesystem::path& path() const { return path_; }
    const std::map<std::string, TensorView>& tensors() const { return tensors_; }
    const std::map<std::string, std::string>& metadata() const { return metadata_; }
    const TensorView* find(const std::string& name) const;

private:
    SafetensorsFile() = default;
    std::filesystem::path path_;
    void* map_ = nullptr;
    size_t map_size_ = 0;
    std::map<std::string, TensorView> tensors_;
    std::map<std::string, std::string> metadata_;
};

// Writes tensors (already in their stored dtype) atomically: temp file + rename.
struct TensorToWrite {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;
    const void* data;
    size_t nbytes;
};
void write_safetensors(const std::filesystem::path& file, const std::vector<TensorToWrite>& tensors,
                       const std::map<std::string, std::string>& metadata = {{"format", "pt"}});

}  // namespace t5s
