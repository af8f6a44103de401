// The checkpoint format a path's extension names, for nn::save / nn::load
// and optim::save / optim::load.
#pragma once
#include <string>

#include "../errors.hpp"

namespace tsr::io {

enum class CheckpointFormat { PyTorch, Safetensors };

// .pt, .pth, .bin and .ckpt are PyTorch's zip format; .safetensors is safetensors.
inline CheckpointFormat checkpoint_format(const std::string& path, const char* who) {
  const auto ends_with = [&](const char* ext) {
    const std::string e(ext);
    return path.size() > e.size() && path.compare(path.size() - e.size(), e.size(), e) == 0;
  };
  if (ends_with(".safetensors")) return CheckpointFormat::Safetensors;
  if (ends_with(".pt") || ends_with(".pth") || ends_with(".bin") || ends_with(".ckpt")) return CheckpointFormat::PyTorch;
  tsr::detail::fail<Error>(who, ": cannot tell the format of '", path,
                           "' from its extension (use .pt or .pth for PyTorch's format, .safetensors for safetensors)");
}

}  // namespace tsr::io
