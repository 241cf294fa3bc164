// The per-unit profiler: measures each unit's forward and backward time and byte size on
// this machine and returns a ModelProfile that `dynacomm plan` accepts.
//
// Forward time of unit u = from u's gate to the next unit's gate (so the parameter-free
// operations after a unit, like ReLU and pooling, count towards it; the loss towards the
// last unit). Backward time of unit u = how much later the gradients of units u..L-1 are
// all ready than those of units u+1..L-1: the quantity the push schedule depends on.
// Each is the median over the measured iterations, after warm-up, on synthetic data.
//
//   ProfileOptions o;  o.model = "resnet18";  o.batch = 32;
//   plan::ModelProfile p = profile_model(o);
#pragma once

#include <cstdint>
#include <string>

#include "model/model.h"
#include "plan/model/profile.h"

namespace dynacomm::train {

struct ProfileOptions {
  std::string model = "cnn";
  model::InputShape input;  // default 1x28x28
  int classes = 0;          // 0: 10 for inputs under 64 pixels, else 1000
  int batch = 32;
  int threads = 1;
  int iterations = 10;  // measured, >= 1
  int warmup = 3;
  std::uint64_t seed = 1;

  void validate() const;  // throws InvalidInput naming the option
};

plan::ModelProfile profile_model(const ProfileOptions& options);

// "x86_64, <cpu model>, N cores" for the profile's machine field.
std::string machine_description();

}  // namespace dynacomm::train
