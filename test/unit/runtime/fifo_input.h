// Test helper: a FIFO where a file is expected. A reader that opens it in blocking mode
// would wait for a writer forever, so once a while has passed without the test finishing,
// the FIFO opens and closes its own write end again and again: each such reader then sees
// an empty file and the test fails on what it read instead of hanging. (The wait guards
// against a hang; nothing is timed.)
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace bertc::testing {

/// A FIFO at `path` for the lifetime of the object.
class FifoInput {
public:
  explicit FifoInput(std::string path) : path_(std::move(path)) {
    ::mkfifo(path_.c_str(), 0600);
    unblocker_ = std::thread([this] {
      std::unique_lock<std::mutex> lock(mutex_);
      auto finished = [this] { return finished_; };
      if (done_.wait_for(lock, std::chrono::seconds(20), finished))
        return;
      // Readers are stuck in open(): give each a writer that writes nothing.
      do {
        int fd = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK);
        if (fd >= 0)
          ::close(fd);
      } while (!done_.wait_for(lock, std::chrono::milliseconds(10), finished));
    });
  }
  ~FifoInput() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      finished_ = true;
    }
    done_.notify_one();
    unblocker_.join();
    ::unlink(path_.c_str());
  }
  FifoInput(const FifoInput &) = delete;
  FifoInput &operator=(const FifoInput &) = delete;

  const std::string &path() const { return path_; }

private:
  std::string path_;
  std::mutex mutex_;
  std::condition_variable done_;
  bool finished_ = false;
  std::thread unblocker_;
};

} // namespace bertc::testing
