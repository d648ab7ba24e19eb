#pragma once
// Where T5 Studio's files are: the one place that knows the difference between running from the
// build tree and running installed (a Debian package, or any root it was unpacked into).
//
// Installed layout (relative to the executable, so an unpacked package runs from any root):
//   <prefix>/bin/t5studio
//   <prefix>/lib/t5studio/       LibTorch's CPU libraries; t5studio-cuda adds libtorch_cuda + CUDA
//   <prefix>/share/t5studio/     demo-model/, model_catalogue.json
// User files follow the XDG base directories: settings in $XDG_CONFIG_HOME/t5studio
// (~/.config/t5studio), history in $XDG_DATA_HOME/t5studio (~/.local/share/t5studio).
#include <filesystem>
#include <string>

namespace t5s {

// The running executable's directory (/proc/self/exe); empty when it cannot be read.
std::filesystem::path executable_dir();

// <prefix>/lib/t5studio when the executable sits in an installed layout (that folder exists next
// to ../bin), else empty: the build tree, where LibTorch is found through the build RPATH.
std::filesystem::path installed_lib_dir();

// The bundled demo model: <prefix>/share/t5studio/demo-model when installed, else the source
// tree's assets/demo-model. Empty when neither holds a config.json.
std::filesystem::path demo_model_dir();

// A data file shipped with the app (e.g. "model_catalogue.json"): <prefix>/share/t5studio/NAME when
// installed, else the source tree's assets/NAME. Empty when it is not there.
std::filesystem::path asset_file(const std::string& name);

// $XDG_CONFIG_HOME/t5studio, else $HOME/.config/t5studio (./.config/t5studio without HOME).
std::filesystem::path user_config_dir();
// $XDG_DATA_HOME/t5studio, else $HOME/.local/share/t5studio.
std::filesystem::path user_data_dir();

}  // namespace t5s
