#pragma once
// The runtime options group — --dtype, --device, --threads — declared once for every command that
// loads a model: one help text, the names from the Device / Precision tables (t5s/enum_names.h),
// one parser. A command states its own default device here (the table carries it explicitly).
#include <string>
#include <vector>

#include "common/args.h"
#include "t5s/model.h"

namespace t5s::cli {

struct RuntimeFlags {
    // generate, sts, serve, train: auto (CUDA when present); info, score, embed: cpu (as they always were).
    Device default_device = Device::Auto;
    bool dtype = true;         // --dtype (train has its own --precision)
    bool device = true;        // --device
    bool device_index = true;  // --device takes cuda:N too
    bool threads = true;       // --threads

    std::vector<Flag> flags() const;
    // What the flags give (absent: the defaults above, fp32, 0 threads). An unknown device or dtype
    // is InvalidArgument naming the accepted names; --threads outside 0..1024 is a UsageError.
    RuntimeOptions read(const Args& args) const;
};

// device: auto, cpu, cuda (or an alias) or cuda:N; dtype: a Precision name or "auto" (the measured
// default for the device). Throws InvalidArgument naming the accepted values.
RuntimeOptions runtime_from_flags(const std::string& device, const std::string& dtype, int threads);

// --adapter DIR: a LoRA adapter folder (PEFT format) applied on load; empty: none.
inline RuntimeOptions with_adapter(RuntimeOptions o, const std::string& dir) {
    o.adapter = dir;
    return o;
}

}  // namespace t5s::cli
