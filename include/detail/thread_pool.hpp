// A persistent fork-join pool: parallel_for splits a range of work units into
// one contiguous chunk per thread; the calling thread runs the first chunk.
#pragma once
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "../errors.hpp"

namespace tsr::detail {

class ThreadPool {
 public:
  static ThreadPool& instance() {
    static ThreadPool pool;
    return pool;
  }

  int num_threads() const { return num_threads_; }
  // Whether the workers run: from the first job on several threads until
  // set_num_threads (such a job has at least one worker).
  bool workers_started() const { return !workers_.empty(); }
  // The threads a parallel_for started here runs on at once: 1 inside a
  // parallel_for, whose nested calls run on the calling thread.
  int team_size() const { return in_worker() ? 1 : num_threads_; }

  void set_num_threads(int n) {
    check(n > 0, "set_num_threads expects a positive number of threads, got ", n);
    std::lock_guard run(run_mutex_);
    stop_workers();
    num_threads_ = n;  // the workers start with the next job that needs them
  }

  // Calls fn(begin, end) on disjoint chunks covering [0, n). Chunk boundaries
  // depend only on n and the thread count; callers that need results
  // independent of the thread count split their work into fixed units first.
  template <class F>
  void parallel_for(int64_t n, const F& fn) {
    const int64_t threads = std::min<int64_t>(num_threads_, n);
    if (threads <= 1 || in_worker()) {
      if (n > 0) fn(int64_t{0}, n);
      return;
    }
    std::lock_guard run(run_mutex_);  // one parallel region at a time
    if (workers_.empty()) start_workers();
    Job job;
    job.call = &invoke<F>;
    job.fn = &fn;
    job.n = n;
    job.threads = threads;
    {
      std::lock_guard lock(mutex_);
      job_ = &job;
      job_threads_ = threads;
      remaining_.store(static_cast<int>(threads - 1), std::memory_order_relaxed);
      ++generation_;
      published_.store(generation_, std::memory_order_release);
    }
    wake_.notify_all();
    in_worker() = true;  // a nested parallel_for runs here, serially
    run_chunk(job, 0);
    in_worker() = false;
    // Wait for the workers; spin first, since most jobs are short.
    for (int spin = 0; remaining_.load(std::memory_order_acquire) != 0; ++spin)
      if (spin > 1000) std::this_thread::yield();
    if (job.error) std::rethrow_exception(job.error);
  }

  ~ThreadPool() { stop_workers(); }

  // While alive, parallel_for calls made on this thread run serially on it:
  // for threads that are themselves the parallelism (DataLoader workers),
  // which would otherwise queue up for the pool one region at a time.
  class SerialScope {
   public:
    SerialScope() : previous_(in_worker()) { in_worker() = true; }
    ~SerialScope() { in_worker() = previous_; }
    SerialScope(const SerialScope&) = delete;
    SerialScope& operator=(const SerialScope&) = delete;

   private:
    bool previous_;
  };

 private:
  struct Job {
    void (*call)(const void*, int64_t, int64_t) = nullptr;
    const void* fn = nullptr;
    int64_t n = 0;
    int64_t threads = 1;
    std::exception_ptr error;
    std::mutex error_mutex;
  };

  template <class F>
  static void invoke(const void* fn, int64_t b, int64_t e) {
    (*static_cast<const F*>(fn))(b, e);
  }

  static bool& in_worker() {
    thread_local bool flag = false;
    return flag;
  }

  static void run_chunk(Job& job, int64_t t) {
    const int64_t b = job.n * t / job.threads, e = job.n * (t + 1) / job.threads;
    if (b >= e) return;
    try {
      job.call(job.fn, b, e);
    } catch (...) {
      std::lock_guard lock(job.error_mutex);
      if (!job.error) job.error = std::current_exception();
    }
  }

  // The workers start with the first job that needs them, not with the
  // pool: until a program starts a thread, glibc tells the C++ library that
  // it is single-threaded, and every std::shared_ptr copy (a tensor handle
  // in an expression, an autograd edge) is a plain increment instead of a
  // locked one. A small program that never runs a job on several threads
  // (a 3-parameter fit with autograd on 200 points) took a median 4.3 us
  // per step that way against 5.4 us with workers started by
  // set_num_threads (AVX-512 Xeon, 11 runs of each in turns, each the best
  // of 7 x 2000 steps).
  ThreadPool() { num_threads_ = std::max(1u, std::thread::hardware_concurrency()); }

  void start_workers() {
    std::lock_guard lock(mutex_);
    stop_ = false;
    published_.store(generation_, std::memory_order_relaxed);
    // New workers start from the current generation: the last job is done
    // and its pointer is stale.
    for (int t = 1; t < num_threads_; ++t) workers_.emplace_back([this, t, g = generation_] { worker_loop(t, g); });
  }
  void stop_workers() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
      published_.store(~uint64_t{0}, std::memory_order_release);  // ends the spinning
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
    workers_.clear();
  }

  void worker_loop(int t, uint64_t seen) {
    in_worker() = true;
    for (;;) {
      Job* job;
      int64_t threads;
      // Spin a little before sleeping: work often comes in quick succession
      // (the steps of one product, the ops of a training step), and waking a
      // sleeping thread costs tens of microseconds, on virtual machines more.
      for (int spin = 0; spin < kSpinsBeforeSleep && published_.load(std::memory_order_acquire) == seen; ++spin)
        pause();
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        job = job_;
        threads = job_threads_;  // read here: a job we do not take may be gone later
      }
      if (t < threads) {
        run_chunk(*job, t);
        remaining_.fetch_sub(1, std::memory_order_release);
      }
    }
  }

  // About 0.1 ms of pause instructions.
  static constexpr int kSpinsBeforeSleep = 4096;
  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }

  int num_threads_ = 1;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::mutex run_mutex_;
  std::condition_variable wake_;
  Job* job_ = nullptr;
  int64_t job_threads_ = 0;
  uint64_t generation_ = 0;
  std::atomic<uint64_t> published_{0};  // generation_, for the spinning workers
  std::atomic<int> remaining_{0};
  bool stop_ = false;
};

// A barrier for the threads of one parallel_for (each running one chunk of
// a team_size() job): they spin, yielding after a while, since the waits are
// short phases of one computation. Reusable: each wait is a new phase.
class SpinBarrier {
 public:
  explicit SpinBarrier(int threads) : threads_(threads) {}
  void wait() {
    if (threads_ == 1) return;
    const int phase = phase_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) == threads_ - 1) {
      arrived_.store(0, std::memory_order_relaxed);
      phase_.store(phase + 1, std::memory_order_release);
      return;
    }
    for (int spin = 0; phase_.load(std::memory_order_acquire) == phase; ++spin)
      if (spin > 256) std::this_thread::yield();
  }

 private:
  const int threads_;
  std::atomic<int> arrived_{0};
  std::atomic<int> phase_{0};
};

}  // namespace tsr::detail

namespace tsr {
// Number of threads used by evaluation and reductions (default: all cores).
inline void set_num_threads(int n) { detail::ThreadPool::instance().set_num_threads(n); }
inline int get_num_threads() { return detail::ThreadPool::instance().num_threads(); }
}  // namespace tsr
