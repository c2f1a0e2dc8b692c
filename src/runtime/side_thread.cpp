#include "runtime/side_thread.hpp"

#include <unistd.h>

#include <utility>

namespace xp::detail {

SideThread::SideThread() : pid_(static_cast<long>(getpid())), thread_([this] { loop(); }) {}

SideThread::~SideThread() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) {
    if (static_cast<long>(getpid()) == pid_)
      thread_.join();
    else
      thread_.detach();  // a forked child has no such thread to join
  }
}

bool SideThread::start(std::function<void()> job) {
  if (static_cast<long>(getpid()) != pid_) return false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (taken_ || stop_) return false;
    taken_ = true;
    pending_ = true;
    error_ = nullptr;
    job_ = std::move(job);
  }
  wake_.notify_one();
  return true;
}

void SideThread::finish() {
  std::exception_ptr error;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return !pending_; });
    error = std::exchange(error_, nullptr);
    taken_ = false;
  }
  if (error) std::rethrow_exception(error);
}

long SideThread::jobs_run() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return jobs_run_;
}

void SideThread::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || (pending_ && job_); });
    if (pending_ && job_) {
      std::function<void()> job = std::move(job_);
      job_ = nullptr;
      lock.unlock();
      std::exception_ptr error;
      try {
        job();
      } catch (...) {
        error = std::current_exception();
      }
      job = nullptr;  // what it holds goes before the caller is told
      lock.lock();
      error_ = error;
      pending_ = false;
      ++jobs_run_;
      done_.notify_all();
      continue;
    }
    if (stop_) return;
  }
}

}  // namespace xp::detail
