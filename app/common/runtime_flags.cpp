#include "common/runtime_flags.h"

#include "t5s/device.h"
#include "t5s/error.h"

namespace t5s::cli {

std::vector<Flag> RuntimeFlags::flags() const {
    std::vector<Flag> out;
    if (dtype)
        out.push_back({"dtype", "D",
                       "precision: " + enum_names_text<Precision>() +
                           ", or auto (the measured best for the device); default fp32; fp16 on CUDA only"});
    if (device)
        out.push_back({"device", "D",
                       std::string("auto (CUDA when present), cpu or cuda") + (device_index ? " (cuda:N: the Nth GPU)" : "") +
                           "; default " + to_string(default_device)});
    if (threads) out.push_back({"threads", "N", "CPU threads, 0..1024 (0 = physical cores, the default)"});
    return out;
}

RuntimeOptions RuntimeFlags::read(const Args& args) const {
    return runtime_from_flags(args.get("device", to_string(default_device)), args.get("dtype", "fp32"), args.get_threads());
}

RuntimeOptions runtime_from_flags(const std::string& device, const std::string& dtype, int threads) {
    RuntimeOptions o;
    const size_t colon = device.find(':');
    o.device = parse_enum<Device>(device.substr(0, colon));
    if (colon != std::string::npos) {  // cuda:N
        const std::string index = device.substr(colon + 1);
        if (o.device != Device::Cuda || index.empty() || index.size() > 3 ||
            index.find_first_not_of("0123456789") != std::string::npos)
            throw Error(ErrorCode::InvalidArgument, "unknown device '" + device + "' (expected " +
                                                        detail::list_names(enum_names<Device>(), ", ") + " or cuda:N)");
        o.device_index = std::stoi(index);
    }
    // "auto": measured from the hardware (bf16 on GPUs that have it, fp16 on older ones, fp32 on CPUs).
    o.precision = dtype == "auto" ? recommend_profile(o.device).precision : parse_enum<Precision>(dtype);
    o.threads = threads;
    return o;
}

}  // namespace t5s::cli
