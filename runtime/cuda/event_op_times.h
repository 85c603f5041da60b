// The CUDA target's op timer (op_times.h): each op's begin and end are events recorded on
// the stream its steps run on, read once the optimizer step's last event completes, so an
// op's time is what the device spent between them, not the host's launch time.
#pragma once

#include "bertc/runtime/op_times.h"

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

namespace bertc::cuda {

class EventOpTimes final : public OpTimes {
public:
  explicit EventOpTimes(cudaStream_t stream) : stream_(stream) {}
  ~EventOpTimes() override;
  EventOpTimes(const EventOpTimes &) = delete;
  EventOpTimes &operator=(const EventOpTimes &) = delete;

  void begin(const char *op) override;
  void end() override;

private:
  std::vector<std::pair<std::string, double>> takeMeasurements() override;
  /// Records the next event of the step's pool (created on first use) on the stream.
  void record();

  /// An op of this step: its begin event, and its end event the one after its last launch.
  struct Span {
    std::string op;
    size_t begin, end; ///< indices into events_
  };
  cudaStream_t stream_;
  std::vector<cudaEvent_t> events_; ///< reused step after step
  size_t recorded_ = 0;             ///< events recorded in this step
  std::vector<Span> spans_;         ///< the last one's end set by end()
};

} // namespace bertc::cuda
