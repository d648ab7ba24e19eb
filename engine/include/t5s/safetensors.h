#pragma once
// A memory-mapped reader of the safetensors format (8-byte little-endian header length, JSON
// header, raw little-endian data). Validates every offset against the file size before use.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "t5s/enum_names.h"

namespace t5s {

enum class DType { F32, F16, BF16, F64, I64, I32, I16, I8, U8, Bool };
template <>
struct EnumNames<DType> {  // the names of the safetensors header
    static constexpr const char* kWhat = "dtype";
    static constexpr EnumName<DType> kNames[] = {
        {DType::F32, "F32"}, {DType::F16, "F16"}, {DType::BF16, "BF16"}, {DType::F64, "F64"}, {DType::I64, "I64"},
        {DType::I32, "I32"}, {DType::I16, "I16"}, {DType::I8, "I8"},     {DType::U8, "U8"},   {DType::Bool, "BOOL"}};
};
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
    // Throws t5s::Error naming the file: missing, not a regular file, or anything
    // parse_safetensors() rejects.
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

// Parses and validates a whole safetensors file held in memory (`bytes` must outlive the views):
// exactly as strict as the reference implementation (the `safetensors` crate): header length within
// the file and under 100 MB, a JSON object, string-valued __metadata__, known dtypes, shapes that
// match their byte ranges, and data_offsets that tile the data section with no gap, overlap or
// trailing byte. Throws t5s::Error naming `file`.
void parse_safetensors(const unsigned char* bytes, size_t size, const std::filesystem::path& file,
                       std::map<std::string, TensorView>* tensors, std::map<std::string, std::string>* metadata);

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
