// Streams and events on CUDA devices, as torch.cuda's: each thread has a
// current stream per device (the default stream until it sets another),
// and everything tessera does on a device goes on it: kernels, cuBLAS
// calls, copies, and the caching allocator's blocks, which are reused on
// the stream that freed them at once and on other streams only once the
// work recorded there is done.
//
// Streams come from a pool per device, handed out round-robin and kept for
// the program's life, as libtorch's getStreamFromPool: making and
// destroying CUDA streams is slow, and a Stream stays a cheap value.
//
// In the emulated build a stream is a number, device work runs on the host
// in order, and so every stream and event is complete as soon as the call
// that queued work returns; the current-stream bookkeeping, the allocator's
// stream-ordered reuse and the errors are the same code as under nvcc.
#pragma once
#include <thrust/execution_policy.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <ostream>
#include <vector>

#include "../detail/device_backend.hpp"
#include "caching_allocator.hpp"  // StreamId
#if defined(__CUDACC__)
#include <cuda_runtime_api.h>
#include <thrust/system_error.h>

#include "cuda_memory.hpp"
#endif

namespace tsr::detail::cuda {

inline constexpr int kStreamsPerDevice = 32;  // libtorch's pool size

// Each thread's current stream, per device (0: the default stream).
inline StreamId& current_stream_slot(int device) {
  thread_local std::vector<StreamId> current;
  if (current.size() <= static_cast<std::size_t>(device)) current.resize(static_cast<std::size_t>(device) + 1, 0);
  return current[static_cast<std::size_t>(device)];
}

// The next stream of a device's pool (made on first use).
inline StreamId next_pool_stream(int device) {
  static std::mutex mutex;
  static std::vector<std::array<StreamId, kStreamsPerDevice>> pools;
  static std::vector<int> next;
  const std::lock_guard<std::mutex> lock(mutex);
  if (pools.size() <= static_cast<std::size_t>(device)) {
    pools.resize(static_cast<std::size_t>(device) + 1, {});
    next.resize(static_cast<std::size_t>(device) + 1, 0);
  }
  auto& pool = pools[static_cast<std::size_t>(device)];
  int& i = next[static_cast<std::size_t>(device)];
  StreamId& stream = pool[static_cast<std::size_t>(i)];
  if (stream == 0) {
#if defined(__CUDACC__)
    const CurrentDeviceScope scope(device);
    cudaStream_t s = nullptr;
    // Non-blocking: it does not wait for the legacy default stream's work.
    check_cuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    stream = reinterpret_cast<StreamId>(s);
#else
    stream = static_cast<StreamId>(i + 1);
#endif
  }
  i = (i + 1) % kStreamsPerDevice;
  return stream;
}

// Where a device's work goes: the device made current (under nvcc) and the
// thread's current stream on it. A negative device (memory the caller
// placed itself, outside tensors' devices) is the current device's default
// stream.
class Launch {
 public:
  explicit Launch(int device)
      : stream_(device < 0 ? 0 : current_stream_slot(device))
#if defined(__CUDACC__)
        ,
        scope_(device < 0 ? current_device() : device)
#endif
  {
  }
  StreamId stream() const { return stream_; }
  // The Thrust execution policy on the stream, without a wait at the end:
  // a launch returns once its kernel is queued, as PyTorch's do, and the
  // host runs ahead of the device. What reads the device's results waits
  // for the stream: copies to the host, and algorithms that return a value
  // (a full reduction). Memory stays safe: a freed block is reused on its
  // own stream first (later work there runs after the kernels that used
  // it) and by other streams only after record_stream's events. Set
  // CUDA_LAUNCH_BLOCKING=1 to make every launch wait, so that a fault in a
  // kernel is reported by the call that launched it.
  auto policy() const {
#if defined(__CUDACC__)
    return thrust::cuda::par_nosync.on(reinterpret_cast<cudaStream_t>(stream_));
#else
    return thrust::device;
#endif
  }
  // f(policy()): a Thrust algorithm on the stream. A CUDA error Thrust
  // reports (a failed launch, a fault in a kernel) becomes tessera's Error,
  // with CUDA's message and the call.
  template <class F>
  decltype(auto) run(const char* call, F&& f) const {
#if defined(__CUDACC__)
    try {
      return f(policy());
    } catch (const thrust::system_error& e) {
      tsr::detail::fail<Error>("CUDA error: ", e.what(), " from ", call);
    }
#else
    (void)call;
    return f(policy());
#endif
  }

 private:
#if defined(__CUDACC__)
  static int current_device() {
    int d = 0;
    check_cuda(cudaGetDevice(&d), "cudaGetDevice");
    return d;
  }
#endif
  StreamId stream_;
#if defined(__CUDACC__)
  CurrentDeviceScope scope_;
#endif
};

// f(k) for every k in [0, n), one thread each, on the current stream of
// `device`: the launch behind every one-thread-per-element kernel here.
template <class F>
void for_each_index(int device, int64_t n, const F& f, const char* call) {
  if (n == 0) return;
  const Launch launch(device);
  launch.run(call, [&](const auto& policy) {
    thrust::for_each_n(policy, thrust::counting_iterator<int64_t>(0), n, f);
  });
}

}  // namespace tsr::detail::cuda

namespace tsr {

// A queue of work on a CUDA device, as torch.cuda.Stream. Work on one
// stream runs in order; work on different streams may run concurrently.
class cuda::Stream {
 public:
  // A stream of the device's pool (created on first use, round-robin over
  // 32 per device).
  explicit Stream(int device = 0) : device_(device), id_(0) {
    detail::cuda_backend(device);  // checks the index
    id_ = detail::cuda::next_pool_stream(device);
  }

  int device_index() const { return device_; }
  Device device() const { return tsr::cuda(device_); }
  // The cudaStream_t as an integer: 0 for the default stream.
  std::uintptr_t id() const { return id_; }

  // Whether all work queued on the stream has finished.
  bool query() const {
#if defined(__CUDACC__)
    const detail::cuda::CurrentDeviceScope scope(device_);
    return detail::cuda::finished(cudaStreamQuery(handle()), "cudaStreamQuery");
#else
    return true;
#endif
  }
  // Waits until all work queued on the stream has finished.
  void synchronize() const {
#if defined(__CUDACC__)
    const detail::cuda::CurrentDeviceScope scope(device_);
    detail::cuda::check_cuda(cudaStreamSynchronize(handle()), "cudaStreamSynchronize");
#endif
  }
  // Work queued on this stream from now on waits for the work queued on
  // `other` so far (the host does not wait).
  void wait_stream(const Stream& other) const;
  void wait_event(const Event& event) const;

  friend bool operator==(const Stream&, const Stream&) = default;
  // As PyTorch prints one: <torch.cuda.Stream device=cuda:0 cuda_stream=0x0>.
  friend std::ostream& operator<<(std::ostream& os, const Stream& s) {
    return os << "<tsr::cuda::Stream device=cuda:" << s.device_ << " cuda_stream=0x" << std::hex << s.id_ << std::dec
              << ">";
  }

#if defined(__CUDACC__)
  cudaStream_t handle() const { return reinterpret_cast<cudaStream_t>(id_); }
#endif

 private:
  friend struct cuda;
  struct Existing {};
  Stream(Existing, int device, std::uintptr_t id) : device_(device), id_(id) {}

  int device_;
  std::uintptr_t id_;
};

inline cuda::Stream cuda::default_stream(int device) {
  detail::cuda_backend(device);
  return Stream(Stream::Existing{}, device, 0);
}
inline cuda::Stream cuda::current_stream(int device) {
  detail::cuda_backend(device);
  return Stream(Stream::Existing{}, device, detail::cuda::current_stream_slot(device));
}
inline void cuda::set_stream(const Stream& stream) {
  detail::cuda::current_stream_slot(stream.device_index()) = stream.id();
}

// Makes a stream its device's current stream for this thread, for a scope
// (as c10::cuda::CUDAStreamGuard, or Python's `with torch.cuda.stream(s)`);
// the previous one is current again at its end.
class cuda::StreamGuard {
 public:
  explicit StreamGuard(const Stream& stream) : previous_(current_stream(stream.device_index())) { set_stream(stream); }
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;
  ~StreamGuard() { set_stream(previous_); }
  Stream original_stream() const { return previous_; }

 private:
  Stream previous_;
};

// A point in a stream's work, as torch.cuda.Event: recorded on a stream,
// then queried, waited for (by the host or by another stream), or timed
// against another event.
class cuda::Event {
 public:
  Event() = default;

  // Marks the work queued on `stream` so far (by default this thread's
  // current stream on device 0).
  void record(const Stream& stream = current_stream()) {
    device_ = stream.device_index();
#if defined(__CUDACC__)
    const detail::cuda::CurrentDeviceScope scope(device_);
    if (!event_) {
      cudaEvent_t e = nullptr;
      detail::cuda::check_cuda(cudaEventCreate(&e), "cudaEventCreate");
      event_ = std::shared_ptr<CUevent_st>(e, [](cudaEvent_t p) { cudaEventDestroy(p); });
    }
    detail::cuda::check_cuda(cudaEventRecord(event_.get(), stream.handle()), "cudaEventRecord");
#else
    recorded_at_ = std::chrono::steady_clock::now();
#endif
    recorded_ = true;
  }
  bool is_recorded() const { return recorded_; }
  // Whether the work it marks has finished (true for an event never recorded, as PyTorch's).
  bool query() const {
#if defined(__CUDACC__)
    return !recorded_ || detail::cuda::finished(cudaEventQuery(event_.get()), "cudaEventQuery");
#else
    return true;
#endif
  }
  // Waits until the work it marks has finished.
  void synchronize() const {
#if defined(__CUDACC__)
    if (recorded_) detail::cuda::check_cuda(cudaEventSynchronize(event_.get()), "cudaEventSynchronize");
#endif
  }
  // Milliseconds from this event to `end`, both recorded and finished.
  float elapsed_time(const Event& end) const {
    detail::check(recorded_ && end.recorded_,
                  "Both events must be recorded before calculating elapsed time.");
#if defined(__CUDACC__)
    float ms = 0;
    detail::cuda::check_cuda(cudaEventElapsedTime(&ms, event_.get(), end.event_.get()), "cudaEventElapsedTime");
    return ms;
#else
    return std::chrono::duration<float, std::milli>(end.recorded_at_ - recorded_at_).count();
#endif
  }

 private:
  friend class Stream;
  int device_ = 0;
  bool recorded_ = false;
#if defined(__CUDACC__)
  std::shared_ptr<CUevent_st> event_;
#else
  std::chrono::steady_clock::time_point recorded_at_{};
#endif
};

inline void cuda::Stream::wait_event(const Event& event) const {
#if defined(__CUDACC__)
  if (!event.recorded_) return;
  const detail::cuda::CurrentDeviceScope scope(device_);
  detail::cuda::check_cuda(cudaStreamWaitEvent(handle(), event.event_.get(), 0), "cudaStreamWaitEvent");
#else
  (void)event;  // host work is already in order
#endif
}
inline void cuda::Stream::wait_stream(const Stream& other) const {
  Event event;
  event.record(other);
  wait_event(event);
}

}  // namespace tsr
