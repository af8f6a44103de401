// nn::save / nn::load: a module's state_dict to and from a checkpoint file,
// the format chosen by the extension: .pt / .pth (PyTorch's, what
// torch.save(model.state_dict(), path) writes and torch.load reads) or
// .safetensors.
//
//   nn::save(model, "model.pt");   // in Python: model.load_state_dict(torch.load("model.pt"))
//   nn::load(model, "model.pt");   // or a file PyTorch saved
#pragma once
#include <string>

#include "../io/checkpoint_format.hpp"
#include "../io/safetensors.hpp"
#include "holder.hpp"
#include "module.hpp"

namespace tsr::nn {

inline void save(const Module& module, const std::string& path) {
  if (io::checkpoint_format(path, "nn::save") == io::CheckpointFormat::Safetensors)
    io::save_safetensors(path, module.state_dict());
  else
    io::save_pt(path, io::tensor_dict_value(module.state_dict()));
}

// Loads the file's tensors into the module with load_state_dict (strict by
// default: PyTorch's error for missing, unexpected or mis-shaped keys; the
// module is unchanged when it fails).
inline void load(Module& module, const std::string& path, bool strict = true) {
  const StateDict sd = io::checkpoint_format(path, "nn::load") == io::CheckpointFormat::Safetensors
                           ? io::load_safetensors_ordered(path)
                           : io::to_tensor_dict(io::load_pt(path), path);
  module.load_state_dict(sd, strict);
}

template <class Impl>
void save(const ModuleHolder<Impl>& module, const std::string& path) {
  save(*module, path);
}
template <class Impl>
void load(const ModuleHolder<Impl>& module, const std::string& path, bool strict = true) {
  load(*module, path, strict);
}

}  // namespace tsr::nn
