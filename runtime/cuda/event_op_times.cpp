// The CUDA target's op timer (event_op_times.h).
#include "event_op_times.h"

#include "bertc/runtime/cuda_check.h"

namespace bertc::cuda {

EventOpTimes::~EventOpTimes() {
  for (cudaEvent_t event : events_)
    (void)cudaEventDestroy(event);
}

void EventOpTimes::record() {
  if (recorded_ == events_.size()) {
    cudaEvent_t event = nullptr;
    BERTC_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDefault));
    events_.push_back(event);
  }
  BERTC_CUDA_CHECK(cudaEventRecord(events_[recorded_++], stream_));
}

void EventOpTimes::begin(const char *op) {
  spans_.push_back({op, recorded_, 0});
  record();
}

void EventOpTimes::end() {
  spans_.back().end = recorded_;
  record();
}

std::vector<std::pair<std::string, double>> EventOpTimes::takeMeasurements() {
  std::vector<std::pair<std::string, double>> measured;
  if (recorded_ > 0)
    BERTC_CUDA_CHECK(cudaEventSynchronize(events_[recorded_ - 1]));
  for (const Span &span : spans_) {
    float milliseconds = 0;
    BERTC_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, events_[span.begin], events_[span.end]));
    measured.emplace_back(span.op, double(milliseconds) / 1e3);
  }
  spans_.clear();
  recorded_ = 0;
  return measured;
}

} // namespace bertc::cuda
