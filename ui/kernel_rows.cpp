#include "kernel_rows.h"

namespace t5s::ui {
namespace {

// The engine's kernel names (describe_kernels) as the panel labels them.
std::string label_of(const std::string& kernel) {
    static const std::pair<const char*, const char*> kLabels[] = {
        {"fp32_gemm", "fp32 GEMM"}, {"weight_packing", "packing"}, {"int8_gemm", "int8 GEMM"},
        {"vocab", "vocabulary"},    {"step", "step kernels"},      {"decode_step", "decode step"},
    };
    for (const auto& [name, label] : kLabels)
        if (kernel == name) return label;
    return kernel;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> cpu_kernel_rows(const ModelInfo& info) {
    if (info.cpu_class.empty()) return {};
    std::string cpu = info.cpu_class;
    if (!info.cpu_class_detected.empty() && info.cpu_class_detected != info.cpu_class)
        cpu += " (detected " + info.cpu_class_detected + ")";
    std::vector<std::pair<std::string, std::string>> rows{{"CPU class", cpu}};
    if (!info.matmul_kernel.empty()) rows.emplace_back("matmul", info.matmul_kernel);
    for (const auto& [kernel, choice] : info.kernels) rows.emplace_back(label_of(kernel), choice);
    return rows;
}

}  // namespace t5s::ui
