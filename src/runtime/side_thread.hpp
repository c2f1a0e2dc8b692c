#pragma once

// One thread that runs one job at a time beside its caller, for two pieces of work that do not
// depend on each other: the caller starts one here, does the other itself, then waits. The CUDA
// backend allocates a first output block here while it finds the program's kernel (both are
// driver calls of 0.1-0.25 ms on an H200 the first time).
//
// One caller at a time: start() says false, and starts nothing, while another caller's job has not
// been finished; that caller then does the work itself. Also false in a child forked after the
// thread started (the thread does not survive fork()).

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace xp::detail {

class SideThread {
 public:
  SideThread();
  // Stops the thread after its job and joins it (the CUDA backend keeps its one for the process).
  ~SideThread();
  SideThread(const SideThread&) = delete;
  SideThread& operator=(const SideThread&) = delete;

  // Starts job on the thread: true. False, with nothing started, when another caller's job is not
  // finished yet or the process forked after the thread started.
  bool start(std::function<void()> job);
  // Waits for the job this caller started to return, then rethrows what it threw. Call exactly once
  // after each start() that said true.
  void finish();

  // Runs job on the side thread while here() runs on the calling thread, and returns true once both
  // have returned. When the side thread cannot take the job (start() says false), runs job() and
  // then here() on the calling thread, and returns false. Either way nothing of job is still running
  // when this returns or throws. The error rethrown is here()'s when it threw, else job()'s (in turn:
  // job()'s, and here() does not run).
  template <class Job, class Here>
  bool run_beside(const Job& job, Here&& here) {
    if (!start(std::function<void()>(job))) {
      job();
      here();
      return false;
    }
    try {
      here();
    } catch (...) {
      try {
        finish();
      } catch (...) {  // here()'s error is the one reported
      }
      throw;
    }
    finish();
    return true;
  }

  // Jobs run so far (for tests).
  long jobs_run() const;

 private:
  void loop();

  mutable std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::function<void()> job_;
  std::exception_ptr error_;
  bool taken_ = false;    // a caller started a job and has not finished it
  bool pending_ = false;  // the job is waiting for the thread or running
  bool stop_ = false;
  long jobs_run_ = 0;
  long pid_ = 0;
  std::thread thread_;
};

}  // namespace xp::detail
