// LibTorch's CUDA half is loaded on demand: a CPU run never maps libtorch_cuda (hundreds of MB
// resident), and loading it registers torch's CUDA backend (checked here without a GPU: a CUDA
// tensor then fails for want of a driver, not for want of the CUDA library).
#include <ATen/ATen.h>
#undef CHECK
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "skip.h"
#include "t5s/device.h"
#include "t5s/error.h"
#include "t5s/model.h"
#include "torch/cuda_backend.h"
#include "torch/runtime.h"

using namespace t5s;

namespace {

bool mapped(const std::string& library) {
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line))
        if (line.find(library) != std::string::npos) return true;
    return false;
}

}  // namespace

TEST_CASE("CUDA backend: not loaded for CPU work, loadable on demand", "[device][cuda]") {
    const auto model_dir = std::filesystem::path(T5S_TEST_DATA) / "models" / "t5v10-tied-relu";
    RuntimeOptions ro;
    ro.device = Device::Auto;  // the default: looks for a GPU without paying for CUDA when none can exist
    ro.threads = 1;
    auto model = Model::load(model_dir, ro);
    REQUIRE(model);
    GenerationOptions go;
    go.max_new_tokens = 3;
    CHECK(model->generate({"hello"}, go).size() == 1);
    (void)query_device_memory();                // telemetry must not load it either
    const bool driver = cuda_backend_loaded();  // a GPU machine loads it for Auto: nothing to prove there
    if (!driver) {
        CHECK(model->info().device == "cpu");
        CHECK_FALSE(mapped("libtorch_cuda.so"));
        CHECK_FALSE(mapped("libcublas"));
        CHECK(cuda_backend_message().find("driver") != std::string::npos);
    }
#ifdef T5S_TORCH_CUDA_LIBRARY
    // Asked for explicitly, it loads (no GPU needed for that) and torch's CUDA backend is registered.
    CHECK(load_cuda_backend(true));
    CHECK(mapped("libtorch_cuda.so"));
    if (!driver) {
        CHECK_FALSE(cuda_available(true));
        std::string what;
        try {
            (void)at::zeros({2}, at::Device(at::kCUDA, 0));
        } catch (const std::exception& e) {
            what = e.what();
        }
        INFO(what);
        CHECK(what.find("ATen_cuda") == std::string::npos);  // the backend is there...
        CHECK_FALSE(what.empty());                           // ...the GPU is not
        // A CUDA request fails with one clear line.
        RuntimeOptions cuda;
        cuda.device = Device::Cuda;
        try {
            (void)Model::load(model_dir, cuda);
            FAIL("loading on cuda without a GPU must fail");
        } catch (const Error& e) {
            CHECK(std::string(e.what()).find("no CUDA GPU") != std::string::npos);
        }
    }
#else
    T5S_SKIP("this LibTorch has no CUDA: only the CPU half was checked");
#endif
}
