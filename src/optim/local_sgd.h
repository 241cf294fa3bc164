// Local SGD's schedule (`--sync local:H[,warmup=K]`): which training steps of a worker
// exchange with the PS, and the rounds the PS counts.
//
// Each device takes H SGD steps between averagings. The first K steps are BSP (post-local
// SGD, Lin et al., ICLR'20: a BSP start, then local steps); after them every round is H
// steps (the job's last may be shorter): the round's first step pulls the PS's model, its
// last pushes, and the steps between exchange nothing.
// On the device each step is plain SGD from the pulled weights w0, w = w0 - lr * (sum of the
// round's gradients), the learning rate the PS's for the round; the push is that sum. The PS
// applies its optimiser (momentum, weight decay) to the workers' mean of the sums, once a
// round: SlowMo (Wang, Tantia, Ballas and Rabbat, ICLR'20) with slow learning rate 1 and
// slow momentum the job's. Without momentum and weight decay that is the average of the
// devices' models; with H = 1 every step is a round and the job is BSP, bit for bit.
//
// The PS sees rounds as BSP's iterations: its versions, checkpoints and the job's length
// (`rounds`) count rounds; the worker's steps, epochs and records count steps.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace dynacomm::optim {

class LocalSgd {
 public:
  // "local:H" or "local:H,warmup=K" (H in 1..1000, K >= 0): the schedule; another mode's
  // spec: nullopt. InvalidInput naming what is wrong in a "local:" spec.
  static std::optional<LocalSgd> parse(const std::string& spec);
  // H local steps, after `bsp_steps` steps of BSP (K).
  LocalSgd(int steps, std::int64_t bsp_steps);
  LocalSgd() : LocalSgd(1, 0) {}  // BSP: every step a round

  int steps() const { return steps_; }
  std::int64_t warmup() const { return bsp_steps_; }

  // The round a step belongs to; the PS's iterations for a job of `total_steps` steps.
  std::int64_t round_of(std::int64_t step) const;
  std::int64_t rounds(std::int64_t total_steps) const;
  // A round's first step (where a worker rejoining at that round begins).
  std::int64_t first_step(std::int64_t round) const;
  // Does the step pull (its round's first) or push (its round's last, or the job's last)?
  bool pulls(std::int64_t step) const { return first_step(round_of(step)) == step; }
  bool pushes(std::int64_t step, std::int64_t total_steps) const;

 private:
  int steps_;
  std::int64_t bsp_steps_;
};

}  // namespace dynacomm::optim
