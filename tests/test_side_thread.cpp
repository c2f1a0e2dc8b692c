// The side thread the CUDA backend allocates on beside a kernel's lookup (src/runtime/side_thread.hpp):
// jobs run on another thread, finish() waits for them and rethrows their errors, one caller at a time,
// nothing started in a forked child. White-box, no GPU.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>

#include "runtime/side_thread.hpp"
#include "xp/error.hpp"

using xp::detail::SideThread;

TEST(SideThread, AJobRunsOnAnotherThreadAndFinishWaitsForIt) {
  SideThread side;
  std::thread::id ran_on;
  std::atomic<bool> done{false};
  ASSERT_TRUE(side.start([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ran_on = std::this_thread::get_id();
    done = true;
  }));
  side.finish();
  EXPECT_TRUE(done.load());
  EXPECT_NE(ran_on, std::this_thread::get_id());
  EXPECT_EQ(side.jobs_run(), 1);
}

TEST(SideThread, OneCallerAtATime) {
  SideThread side;
  std::atomic<bool> release{false};
  ASSERT_TRUE(side.start([&] {
    while (!release) std::this_thread::yield();
  }));
  // Busy: a second caller does its work itself.
  int second = 0;
  EXPECT_FALSE(side.start([&] { second = 1; }));
  release = true;
  side.finish();
  // Still taken until finish(), even after the job returned: then free again.
  ASSERT_TRUE(side.start([&] { second = 2; }));
  side.finish();
  EXPECT_EQ(second, 2);
  EXPECT_EQ(side.jobs_run(), 2);
}

TEST(SideThread, FinishRethrowsTheJobsErrorAndTheThreadGoesOn) {
  SideThread side;
  ASSERT_TRUE(side.start([] { throw xp::OutOfMemory("cuda:0", 1024, 512, 0); }));
  try {
    side.finish();
    FAIL() << "the job's error was not rethrown";
  } catch (const xp::OutOfMemory& e) {
    EXPECT_EQ(e.requested(), 1024u);
    EXPECT_EQ(e.free(), 512u);
  }
  ASSERT_TRUE(side.start([] { throw std::runtime_error("second"); }));
  EXPECT_THROW(side.finish(), std::runtime_error);
  int value = 0;
  ASSERT_TRUE(side.start([&] { value = 7; }));
  EXPECT_NO_THROW(side.finish());
  EXPECT_EQ(value, 7);
}

TEST(SideThread, WhatTheJobHoldsIsReleasedBeforeFinishReturns) {
  SideThread side;
  auto held = std::make_shared<int>(1);
  std::weak_ptr<int> watch = held;
  ASSERT_TRUE(side.start([h = std::move(held)] { (void)*h; }));
  side.finish();
  EXPECT_TRUE(watch.expired());
}

TEST(SideThread, DestroyingItRunsTheStartedJobFirst) {
  std::atomic<bool> done{false};
  {
    SideThread side;
    ASSERT_TRUE(side.start([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
      done = true;
    }));
  }  // no finish(): the destructor waits for the job, then joins
  EXPECT_TRUE(done.load());
}

TEST(SideThread, AForkedChildStartsNothing) {
  SideThread side;
  ASSERT_TRUE(side.start([] {}));
  side.finish();
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // The thread does not exist here: a start would wait forever in finish().
    bool ran = false;
    const bool started = side.start([&] { ran = true; });
    _exit(started || ran ? 1 : 0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "a forked child started a job on a thread it does not have";
  // The parent's thread still works.
  int value = 0;
  ASSERT_TRUE(side.start([&] { value = 3; }));
  side.finish();
  EXPECT_EQ(value, 3);
}

// run_beside: how the CUDA backend allocates beside a kernel's lookup, and what it reports when
// either fails.
TEST(SideThreadBeside, BothRunAtOnceAndBothHaveReturned) {
  SideThread side;
  std::atomic<bool> job_running{false}, seen_together{false}, job_done{false};
  const bool beside = side.run_beside(
      [&] {
        job_running = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(40));
        job_done = true;
      },
      [&] {
        for (int i = 0; i < 2000 && !job_running; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        seen_together = job_running.load() && !job_done.load();
      });
  EXPECT_TRUE(beside);
  EXPECT_TRUE(job_done.load());
  EXPECT_TRUE(seen_together.load()) << "here() never saw the job running";
}

TEST(SideThreadBeside, HeresErrorComesAfterTheJobHasReturned) {
  SideThread side;
  std::atomic<bool> job_done{false};
  try {
    side.run_beside(
        [&] {
          std::this_thread::sleep_for(std::chrono::milliseconds(40));
          job_done = true;
        },
        [] { throw xp::ValueError("lookup failed"); });
    FAIL() << "here()'s error was not rethrown";
  } catch (const xp::ValueError& e) {
    EXPECT_STREQ(e.what(), "lookup failed");
    EXPECT_TRUE(job_done.load()) << "run_beside threw while the job could still write to the caller's memory";
  }
  EXPECT_TRUE(side.run_beside([] {}, [] {}));  // free again
}

TEST(SideThreadBeside, TheJobsErrorWhenHereSucceeds) {
  SideThread side;
  bool here_ran = false;
  EXPECT_THROW(side.run_beside([] { throw xp::OutOfMemory("cuda:0", 1 << 20, 0, 1 << 20); }, [&] { here_ran = true; }),
               xp::OutOfMemory);
  EXPECT_TRUE(here_ran);
}

TEST(SideThreadBeside, WhenBothFailHeresErrorIsReported) {
  SideThread side;
  EXPECT_THROW(side.run_beside([] { throw xp::OutOfMemory("cuda:0", 1 << 20, 0, 1 << 20); },
                               [] { throw xp::ValueError("lookup failed"); }),
               xp::ValueError);
  EXPECT_EQ(side.jobs_run(), 1);
}

TEST(SideThreadBeside, WhenTheThreadIsBusyBothRunHereInTurn) {
  SideThread side;
  std::atomic<bool> release{false};
  ASSERT_TRUE(side.start([&] {
    while (!release) std::this_thread::yield();
  }));
  std::thread::id job_on, here_on;
  int order = 0, job_at = 0, here_at = 0;
  const bool beside = side.run_beside(
      [&] {
        job_on = std::this_thread::get_id();
        job_at = ++order;
      },
      [&] {
        here_on = std::this_thread::get_id();
        here_at = ++order;
      });
  EXPECT_FALSE(beside);
  EXPECT_EQ(job_on, std::this_thread::get_id());
  EXPECT_EQ(here_on, std::this_thread::get_id());
  EXPECT_EQ(job_at, 1);
  EXPECT_EQ(here_at, 2);
  // In turn, the job's error stops here() from running.
  bool here_ran = false;
  EXPECT_THROW(side.run_beside([] { throw std::runtime_error("job"); }, [&] { here_ran = true; }), std::runtime_error);
  EXPECT_FALSE(here_ran);
  release = true;
  side.finish();
  EXPECT_EQ(side.jobs_run(), 1);
}
