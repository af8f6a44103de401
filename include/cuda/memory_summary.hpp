// The caching allocator's statistics as the table torch.cuda.memory_summary
// prints, line for line, so that users can read them side by side.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "caching_allocator.hpp"

namespace tsr::detail::cuda {

// "{:7d} {}" of a value scaled down by 1024 (bytes) or 1000 (counts) for as
// long as the row's reference value (`pref`) is at least 768 KiB or 750 K,
// integer division, as PyTorch's _format_size and _format_count.
inline std::string scaled(int64_t value, double pref, const std::vector<const char*>& units, double threshold,
                          int64_t step, const char* after) {
  const char* unit = units[0];
  for (std::size_t u = 1; u < units.size() && pref >= threshold; ++u) {
    unit = units[u];
    value = value >= 0 ? value / step : -((-value + step - 1) / step);  // Python's floor division
    pref /= static_cast<double>(step);
  }
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%7lld %s%s", static_cast<long long>(value), unit, after);
  return buffer;
}
inline std::string summary_size(int64_t value, int64_t pref) {
  return scaled(value, static_cast<double>(pref), {"B ", "KB", "MB", "GB", "TB", "PB"}, 768.0 * 1024, 1024, "");
}
inline std::string summary_count(int64_t value, int64_t pref) {
  return scaled(value, static_cast<double>(pref), {" ", "K", "M"}, 750.0 * 1000, 1000, " ");
}

inline std::string memory_summary(const MemoryStats& stats, int device) {
  std::vector<std::string> lines;
  const std::string rule(75, '-'), double_rule(75, '=');
  char buffer[128];
  lines.push_back(double_rule);
  std::snprintf(buffer, sizeof buffer, " %16s tessera CUDA memory summary, device ID %-17d ", "", device);
  lines.emplace_back(buffer);
  lines.push_back(rule);
  std::snprintf(buffer, sizeof buffer, "  %9s CUDA OOMs: %-12lld | %6s cudaMalloc retries: %-8lld  ", "",
                static_cast<long long>(stats.num_ooms), "", static_cast<long long>(stats.num_alloc_retries));
  lines.emplace_back(buffer);
  lines.push_back(double_rule);
  lines.emplace_back("        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  ");

  using Format = std::string (*)(int64_t, int64_t);
  auto row = [&](const char* name, const Stat& s, const Stat& pref, Format f) {
    std::snprintf(buffer, sizeof buffer, " %-21s | %s | %s | %s | %s ", name, f(s.current, pref.current).c_str(),
                  f(s.peak, pref.peak).c_str(), f(s.allocated, pref.allocated).c_str(), f(s.freed, pref.freed).c_str());
    lines.emplace_back(buffer);
  };
  const struct {
    const StatArray* stat;
    const char* name;
    Format format;
  } metrics[] = {
      {&stats.allocated_bytes, "Allocated memory", summary_size},
      {&stats.active_bytes, "Active memory", summary_size},
      {&stats.reserved_bytes, "GPU reserved memory", summary_size},
      {&stats.inactive_split_bytes, "Non-releasable memory", summary_size},
      {&stats.allocation, "Allocations", summary_count},
      {&stats.active, "Active allocs", summary_count},
      {&stats.segment, "GPU reserved segments", summary_count},
      {&stats.inactive_split, "Non-releasable allocs", summary_count},
  };
  for (const auto& m : metrics) {
    lines.push_back(rule);
    const StatArray& a = *m.stat;
    row(m.name, a[kAllPools], a[kAllPools], m.format);
    row("      from large pool", a[kLargePool], a[kAllPools], m.format);
    row("      from small pool", a[kSmallPool], a[kAllPools], m.format);
  }
  // Blocks over a split-size limit: tessera's allocator sets none (as
  // PyTorch's default), so these stay zero.
  const Stat none;
  for (const char* name : {"Oversize allocations", "Oversize GPU segments"}) {
    lines.push_back(rule);
    row(name, none, none, summary_count);
  }
  lines.push_back(double_rule);

  std::string out;
  for (const std::string& line : lines) out += "|" + line + "|\n";
  return out;
}

}  // namespace tsr::detail::cuda
