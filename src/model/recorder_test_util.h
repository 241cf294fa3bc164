// Tests' UnitObserver: records the order of before_forward and gradients_ready calls.
#pragma once

#include <mutex>
#include <vector>

#include "model/model.h"

namespace dynacomm::model {

class Recorder : public UnitObserver {
 public:
  void before_forward(int unit) override { forward.push_back(unit); }
  void gradients_ready(int unit) override {
    std::lock_guard<std::mutex> lock(mu);
    ready.push_back(unit);
  }
  std::vector<int> forward, ready;
  std::mutex mu;
};

}  // namespace dynacomm::model
