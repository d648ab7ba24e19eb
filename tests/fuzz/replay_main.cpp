// Replays saved inputs through the fuzz targets without libFuzzer (the g++ build, ASan + UBSan
// where T5S_SANITIZE is on): `fuzz_replay TARGET PATH...` runs every file named, or found in a
// directory named, once through TARGET. ctest uses it to keep every crash the fuzzers found fixed
// (tests/fuzz/regressions/<target>/) and the seed corpora passing. Each target's
// LLVMFuzzerTestOneInput is compiled under its own name (T5S_FUZZ_ENTRY in tests/fuzz.cmake).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_targets.h"  // T5S_FUZZ_TARGET_LIST(X), generated from tests/fuzz/targets.cmake

#define T5S_DECLARE(name) extern "C" int name##_entry(const uint8_t* data, size_t size);
T5S_FUZZ_TARGET_LIST(T5S_DECLARE)
#undef T5S_DECLARE

using Entry = int (*)(const uint8_t*, size_t);

int main(int argc, char** argv) {
    namespace fs = std::filesystem;
    const struct {
        const char* name;
        Entry entry;
    } targets[] = {
#define T5S_ROW(name) {#name, name##_entry},
        T5S_FUZZ_TARGET_LIST(T5S_ROW)
#undef T5S_ROW
    };
    Entry entry = nullptr;
    for (const auto& t : targets) {
        if (argc > 1 && std::strcmp(argv[1], t.name) == 0) entry = t.entry;
    }
    if (!entry) {
        std::fprintf(stderr, "usage: fuzz_replay TARGET PATH...  (TARGET: one of tests/fuzz/targets.cmake)\n");
        return 2;
    }
    std::vector<fs::path> files;
    for (int i = 2; i < argc; ++i) {
        std::error_code ec;
        if (fs::is_directory(argv[i], ec)) {
            for (const auto& e : fs::recursive_directory_iterator(argv[i])) {
                if (e.is_regular_file()) files.push_back(e.path());
            }
        } else if (fs::is_regular_file(argv[i], ec)) {
            files.push_back(argv[i]);
        }  // a target without saved crashes has no regressions folder: nothing to replay there
    }
    for (const auto& f : files) {
        std::ifstream in(f, std::ios::binary);
        const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::printf("replay %s: %s (%zu bytes)\n", argv[1], f.c_str(), bytes.size());
        std::fflush(stdout);
        entry(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    }
    std::printf("replay %s: %zu inputs ran without a crash\n", argv[1], files.size());
    return 0;
}
