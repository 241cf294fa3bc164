// Private to the worker: the communication thread and the gate it offers the model.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "model/model.h"
#include "net/connection.h"
#include "net/shaper.h"
#include "plan/link_fit.h"
#include "plan/plan.h"
#include "plan/slicing.h"

namespace dynacomm::worker {

using Clock = std::chrono::steady_clock;

inline double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

struct CommOptions {
  int rank = 0;
  double down_bps = 0, up_bps = 0;  // 0: not paced here (the kernel shapes the link)
  double latency_ms = 0, extra_overhead_ms = 0;
  double transport_one_way_ms = 0;  // measured (hello round trip / 2), outside the emulation
  // The PS's steady clock minus this one's, ms, taken at the hello (nullopt: unknown; the
  // transfers are then timed from the answers' receipt less the one-way time).
  std::optional<double> ps_clock_offset_ms;
  double device_slowdown = 1;  // >= 1: each unit's compute is stretched by this factor
  std::chrono::milliseconds timeout{60000};
  // The job's atoms (plan/slicing.h): what messages and plans index; required.
  plan::Slicing slicing;
};

// Owns the connection once started. Training-thread calls: begin_iteration, the
// observer callbacks (via the model), finish_iteration, fetch_all, stop.
class Comm : public model::UnitObserver {
 public:
  Comm(net::Connection& connection, model::Model& model, const CommOptions& options);
  ~Comm() override;

  void start();
  // Plans index the job's atoms (options.slicing; Slicing::lift).
  // Starts iteration t: sends the plan's pull requests for t (after the one-way latency),
  // unless prefetch(t, ...) already did; then t's forward waits on those requests'
  // segments, and replies that arrived early are written into the model now.
  // predicted_ms: this worker's prediction of the iteration (0: none), sent with its pushes
  // for the BSP barrier (slowest_predicted_ms).
  void begin_iteration(std::int64_t iteration, const plan::Plan& plan, double predicted_ms = 0);
  // A full-duplex plan: sends the pull requests for iteration t (the next one) now, during
  // the current iteration's backward pass, in the plan's pull order; the PS answers each
  // once its units are at version t, and the replies are held until begin_iteration(t).
  void prefetch(std::int64_t iteration, const plan::Plan& plan);
  void before_forward(int unit) override;
  void gradients_ready(int unit) override;
  // The forward pass has ended (after the last unit); returns that time, after the
  // emulated slowdown of the last unit.
  Clock::time_point forward_done();
  // Waits until every push segment has been handed to the (emulated) uplink.
  void finish_iteration();
  // Waits until the PS has acknowledged every push of this iteration (warm-up only: it
  // makes every transfer's timing available before planning).
  void wait_for_acks();
  // The job's full-duplex plans (ps/server.h): offers this worker's (JSON, {"plans":
  // [{index, predicted_ms, plan}]}) and waits until the PS has everyone's and answers with
  // the job's (the same shape, each entry with the rank whose plan it is). Timeout naming
  // the wait; the PS's refusal as an Error.
  std::string agree_plans(std::string offer);
  // Re-planning the job's plan together (ps/server.h): sends this worker's report on it,
  // made in `iteration` (JSON, {"current_ms", "proposal": {"predicted_ms", "plan"} or
  // null}), without waiting, and hands over the PS's latest change of the job's plan
  // ({"plan", "from_iteration", ...}) once, when one has come.
  void report_replan(std::int64_t iteration, std::string report);
  std::optional<std::string> take_job_replan();
  // Pulls every unit at version `iteration` into the model and waits for it.
  void fetch_all(std::int64_t iteration);
  // Sends goodbye once everything queued has left and the PS has acknowledged every
  // push (Timeout naming the first unacknowledged one), then stops the thread.
  void shutdown();

  // Live changes (any thread; a trace replay): the emulated link (bandwidths 0: leave
  // unpaced, for kernel-shaped links; messages already handed over keep their times) and
  // the emulated device slowdown.
  void set_link(double down_bps, double up_bps, double latency_ms);
  void set_device_slowdown(double factor);
  double latency_ms() const;  // as now emulated

  // Measurements of the last iteration.
  std::vector<Clock::time_point> gate_called, gate_passed, grads_ready;
  // The training thread's CPU time (ms, CLOCK_THREAD_CPUTIME_ID; plus the emulated
  // slowdown's sleeps) at the same instants, and at the forward pass's end. Wall minus CPU
  // over a unit is the time it was denied the CPU (the PS, the other workers, the kernel's
  // network stack on the same cores).
  // cpu_valid: every mark came from the training thread (a gradient hook on another
  // thread would read another thread's clock).
  std::vector<double> cpu_called, cpu_passed, cpu_ready;
  double cpu_forward_end = 0;
  std::atomic<bool> cpu_valid{true};
  // Bytes pushed and pulled in the current iteration so far (any thread; takes the lock).
  std::pair<std::int64_t, std::int64_t> bytes_moved() const;
  struct LinkEvent {
    bool up;  // uplink (push) or downlink (pull)
    std::int64_t iteration;
    int segment;
    std::int64_t bytes;
    // Pull: request sent .. parameters delivered. Push: gradients ready .. arrived at the PS.
    Clock::time_point start, end;
    double held_ms;     // pull: how long the PS held the request (units not yet updated);
                        // push: how long the PS took over it
    double service_ms;  // how long the link was busy with it: no waiting, queueing, latency
  };
  // The BSP barrier: how many times this worker's compute in `iteration` the slowest
  // worker's was (>= 1), from the PS's pull replies of iteration + 1; call once those have
  // all arrived (after that iteration's forward pass). nullopt: not known (no replies yet,
  // or nothing this worker pushed).
  std::optional<double> slowest_compute_factor(std::int64_t iteration) const;
  // The largest prediction of `iteration` any worker sent (the slowest link or device sets
  // the job's pace), from the PS's pull replies of iteration + 1; the same conditions.
  std::optional<double> slowest_predicted_ms(std::int64_t iteration) const;

  // Completed transfers since the last call (a push completes when the PS acknowledges
  // it, which may be during the next iteration).
  std::vector<LinkEvent> take_link_events();
  // The PS's updates (the aggregation: bytes of the push that completed the units, and
  // the PS's ms over it) its acks reported since the last call, each once, whichever
  // worker's push completed them.
  std::vector<plan::TransferSample> take_aggregations();

 private:
  void loop();
  // The loop's steps (comm.cc says which run under mu_).
  void apply_link_change();
  void queue_pull_requests(Clock::time_point now);
  void send_control();
  void build_pushes();
  void release_pushes(Clock::time_point now);
  bool goodbye_done();
  void send_due_frames();
  void deliver_due();
  void on_pull_reply(net::Message m, Clock::time_point delivered);
  void receive(std::chrono::milliseconds wait);
  void fail(std::exception_ptr e);
  void check_failed();  // rethrows the comm thread's error on the training thread
  std::string where(int unit) const;

  net::Connection& conn_;
  model::Model& model_;
  CommOptions options_;
  net::LinkShaper up_, down_;
  struct LinkChange {
    double down_bps, up_bps, latency_ms;
  };
  std::optional<LinkChange> link_change_;  // under mu_; applied by the comm thread
  std::atomic<double> slowdown_;
  Clock::time_point backward_mark_{};  // end of the previous unit's backward (emulation)
  std::thread::id training_thread_;    // the thread of the forward pass's marks
  // This iteration's compute so far (training thread): the forward pass's units without
  // their waits at the gates, and when the backward pass began.
  double forward_compute_ms_ = 0;
  Clock::time_point backward_start_{};
  void stretch(Clock::time_point since);  // sleeps (slowdown - 1) x (now - since)
  double slept_ms_ = 0;                   // by stretch, in all (training thread)
  double thread_cpu_ms() const;           // the training thread's CPU time + slept_ms_

  mutable std::mutex mu_;
  std::int64_t bytes_up_ = 0, bytes_down_ = 0;  // under mu_: this iteration's
  std::condition_variable cv_;
  std::exception_ptr error_;
  bool stop_ = false, send_goodbye_ = false;
  std::optional<std::string> plans_offer_;                             // to send (comm thread)
  std::optional<std::string> agreed_plans_;                            // the PS's answer
  std::optional<std::pair<std::int64_t, std::string>> replan_report_;  // to send (comm thread)
  std::optional<std::string> job_replan_;  // the PS's latest change, not yet taken
  std::uint64_t last_update_ = 0;          // the PS's newest update reported so far
  std::vector<plan::TransferSample> aggregations_;
  struct PullRequest {
    std::int64_t iteration;
    int segment;
    plan::Segment units;
    bool in_order;
  };
  std::vector<PullRequest> requests_;  // to send, in order
  Clock::time_point goodbye_deadline_{};
  std::int64_t iteration_ = 0;
  plan::Plan plan_;
  // The pull requests of one iteration and what has come back.
  struct PullRound {
    std::int64_t iteration = -1;  // -1: none
    std::vector<plan::Segment> segments;
    std::vector<int> segment_of_atom;
    std::vector<bool> arrived;            // by pull segment
    std::vector<Clock::time_point> sent;  // when each request left
    std::vector<net::Message> held;       // replies that came before the iteration began
  };
  PullRound current_, next_;  // for iteration_ and (prefetched) iteration_ + 1
  PullRound request_round(std::int64_t iteration, const plan::Plan& plan);  // queues them
  PullRound* round_of(std::int64_t iteration);
  void write_params(const net::Message& m);  // into the model
  const plan::Slicing& slicing_ = options_.slicing;
  std::vector<bool> ready_;       // by atom: gradients of this iteration handed over
  double compute_so_far_ms_ = 0;  // forward + backward up to the last gradients handed over
  double predicted_ms_ = 0;       // this worker's prediction of the iteration (0: none)
  struct Barrier {
    double own_ms = 0;                // this worker's compute in the iteration (its last push's)
    double slowest_ms = 0;            // the slowest worker's, as the PS's replies reported it
    double slowest_predicted_ms = 0;  // the largest prediction of the iteration reported
  };
  std::map<std::int64_t, Barrier> barrier_;  // by iteration, the last few
  Clock::time_point last_pull_delivered_{};
  std::vector<LinkEvent> link_events_;
  // Pushes: a segment's frame is built (its gradients copied) as soon as its gradients are
  // in, then queued; plan order sends the queue as it is, priority sends the lowest ready
  // segment the credit allows. Queued pushes of t may still leave during t+1's forward.
  std::size_t next_push_ = 0;     // segments built (plan order: the next one to build)
  std::vector<bool> push_built_;  // priority: by push segment
  std::int64_t unacked_bytes_ = 0;
  struct QueuedPush {
    std::int64_t iteration;
    int segment;
    std::uint32_t first_atom;
    std::int64_t bytes, credit_bytes;  // credit 0: plan order
    std::string frame;
  };
  std::deque<QueuedPush> queued_;
  std::optional<std::size_t> next_push_to_build(bool priority) const;
  std::optional<std::size_t> next_queued_to_send() const;
  struct PushInFlight {
    int segment;
    std::int64_t bytes;
    Clock::time_point start;
  };
  std::map<std::pair<std::int64_t, std::uint32_t>, PushInFlight> pushes_;  // (t, first unit)
  // When the PS says a message arrived (its clock, wire arrived_us), on this clock; nullopt
  // without the clocks' offset or a stamp.
  std::optional<Clock::time_point> at_ps(std::uint64_t arrived_us) const;
  std::int64_t acks_of_iteration_ = 0;  // acks received for iteration_
  std::int64_t last_ack_iteration_ = -1;
  Clock::time_point last_push_done_{};
  struct Outgoing {
    std::string frame;
    std::int64_t pull_iteration;  // a pull request: its iteration and segment, else -1
    int pull_segment;
  };
  std::multimap<Clock::time_point, Outgoing> outgoing_;  // release time -> frame
  struct Incoming {
    Clock::time_point deliver;   // the emulated arrival
    Clock::time_point received;  // taken off the socket
    net::Message message;
  };
  std::deque<Incoming> incoming_;
  void on_ack(const net::Message& m, Clock::time_point received);
  std::thread thread_;
};

}  // namespace dynacomm::worker
