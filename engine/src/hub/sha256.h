#pragma once
// SHA-256 (FIPS 180-4), streaming: what the Hub gives as an LFS file's hash. Tested against
// Python's hashlib (tests/test_hub.cpp).
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

namespace t5s::hub {

class Sha256 {
public:
    Sha256();
    void update(const void* data, size_t size);
    std::string hex_digest();  // finishes; call once

private:
    void block(const uint8_t* p);
    std::array<uint32_t, 8> h_;
    std::array<uint8_t, 64> buf_{};
    size_t buf_len_ = 0;
    uint64_t total_ = 0;
};

// The hex SHA-256 of a file's bytes (OpenSSL's libcrypto where the build found it, else Sha256);
// throws t5s::Error(FileNotFound) when it cannot be read. `stop`, when given, is asked every MiB:
// true returns "" at once (a Ctrl-C during the check of a big file).
std::string sha256_file(const std::filesystem::path& file, const std::function<bool()>& stop = {});

}  // namespace t5s::hub
