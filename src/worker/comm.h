// Private to the worker: the communication thread and the gate it offers the model.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "base/thread_annotations.h"
#include "compress/compressor.h"
#include "compress/pull_codec.h"
#include "compress/push_codec.h"
#include "model/model.h"
#include "net/job_protocol.h"
#include "net/shaped_transport.h"
#include "net/transport.h"
#include "plan/estimate/link_fit.h"
#include "plan/model/plan.h"
#include "plan/model/slicing.h"
#include "worker/codec_times.h"
#include "worker/fault.h"
#include "worker/link_clock.h"
#include "worker/ps_clock.h"
#include "worker/push_queue.h"

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
  // The job's atoms (plan/model/slicing.h): what messages and plans index; required.
  plan::Slicing slicing;
  // The codec of the pushes (compress/compressor.h), its draws from `seed`; and of the
  // pulls (compress/pull_codec.h: "none", float32).
  std::string compression = "none";
  std::string pull_compression = "none";
  double momentum = 0;  // the job's, for codecs that apply it on the worker (dgc)
  std::uint64_t seed = 1;
  // backup:B (ps/sync_policy.h): a worker whose pulls read versions past its iteration
  // (it was dropped) catches up: its pushes are for the oldest version it read, and its
  // next iteration is that one's next (next_iteration()).
  bool catch_up = false;
  // The PS's cloud link shared with the other workers (net/shared_shaper.h; "": none).
  std::string cloud_link;
};

// What one training step exchanges with the PS (local SGD's steps between rounds: nothing).
struct Exchange {
  bool pull = true, push = true;
};

// Owns the transport once started: the communication thread alone sends and receives,
// through the link emulation (net/shaped_transport.h) over it. The thread sleeps in the
// transport's poll until a message comes, the emulated link releases a frame, or another
// thread hands it work (state under mu_ plus a wake-up, or a deferred call): no polling.
// Training-thread calls: begin_iteration, the observer callbacks (via the model),
// finish_iteration, fetch_all, stop.
class Comm : public model::UnitObserver {
 public:
  Comm(net::Transport& transport, model::Model& model, const CommOptions& options);
  ~Comm() override;

  void start();
  // Plans index the job's atoms (options.slicing; Slicing::lift).
  // Starts iteration t: sends the plan's pull requests for t (after the one-way latency),
  // unless prefetch(t, ...) already did; then t's forward waits on those requests'
  // segments, and replies that arrived early are written into the model now.
  // predicted_ms: this worker's prediction of the iteration (0: none), sent with its pushes
  // for the BSP barrier (slowest_predicted_ms).
  // Local SGD's steps (optim/local_sgd.h) exchange less: `exchange` says whether this
  // step pulls (otherwise the model's weights stay as they are and no gate waits) and
  // whether it pushes; `iteration` is then the PS's round, the same for all its steps.
  void begin_iteration(std::int64_t iteration, const plan::Plan& plan, double predicted_ms = 0,
                       Exchange exchange = {});
  // The iteration after the current one: the current one's next, or with catch_up the
  // next after the oldest version this iteration's pulls read (once they are all in).
  std::int64_t next_iteration() const;
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
  // The job's full-duplex plans (ps/agreement.h): offers this worker's and waits until
  // the PS has everyone's and answers with the job's. Timeout naming the wait; the PS's
  // refusal, or an answer that is not the job's plans, as an Error.
  net::AgreedPlans agree_plans(const net::PlanOffer& offer);
  // Re-planning the job's plan together (ps/agreement.h): sends this worker's report on
  // it, made in `iteration`, without waiting (a report not yet sent is replaced), and
  // hands over the PS's latest change of the job's plan once, when one has come (Error
  // when it is not one).
  void report_replan(std::int64_t iteration, const net::ReplanReport& report);
  std::optional<net::JobPlanChange> take_job_replan();
  // Waits until every push of the iterations before `iteration` has been acknowledged: a
  // worker whose pulls do not wait for its own pushes (--sync other than bsp) runs at most
  // one iteration ahead of its uplink. Timeout naming the wait.
  void wait_for_pushes_before(std::int64_t iteration);
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
  // The iteration of the PS's newest checkpoint it has told of (net::kCheckpoint); -1: none.
  std::int64_t newest_checkpoint() const { return checkpoint_.load(); }
  // With --compress auto: each unit's method (an index into the job's, compress/push_codec.h)
  // for the pushes built from now on; before any call, every unit goes dense (index 0).
  // InvalidInput for a wrong count or index.
  void set_push_methods(const std::vector<int>& per_unit);
  const compress::PushCodec& push_codec() const { return *codec_; }
  // The codec's state (compress/push_codec.h), for a worker that stops and takes up again;
  // set before the first push (InvalidInput when it does not fit the job's codec).
  std::string codec_state() const;
  void codec_state_into(std::string& out) const;  // reusing out's memory
  void set_codec_state(const std::string& state);

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
    std::int64_t iteration;  // this worker's (a pull's round; when a push went out)
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
  // Compressed pushes (--compress other than none) the PS has acknowledged since the last
  // call: each atom's encoding as timed here, and the PS's decoding from its ack.
  std::vector<PushCosts> take_push_costs();

 private:
  void loop();
  // Runs `call` on the communication thread at its next turn (any thread), in order.
  void defer(std::function<void()> call);
  void run_deferred();
  void wake() { link_.wake(); }
  // The loop's steps (comm.cc says which run under mu_).
  void queue_pull_requests();
  void send_control();
  void build_pushes();
  void release_pushes(Clock::time_point now);
  bool goodbye_done();
  void take(net::Message m);  // a message the (emulated) link delivered
  void on_pull_reply(net::Message m);
  void fail(std::exception_ptr e);
  void check_failed();  // rethrows the comm thread's error on the training thread
  std::string where(int unit) const;

  // Set at construction, then read by both threads.
  model::Model& model_;
  const CommOptions options_;
  const std::optional<Fault> fault_ = Fault::from_env();  // worker/fault.h; unset: none
  const plan::Slicing& slicing_ = options_.slicing;

  // The training thread's own (the marks' bookkeeping and the emulated slowdown).
  Clock::time_point backward_mark_{};  // end of the previous unit's backward (emulation)
  std::thread::id training_thread_;    // the thread of the forward pass's marks
  // This iteration's compute so far: the forward pass's units without their waits at the
  // gates, and when the backward pass began.
  double forward_compute_ms_ = 0;
  Clock::time_point backward_start_{};
  void stretch(Clock::time_point since);  // sleeps (slowdown - 1) x (now - since)
  double slept_ms_ = 0;                   // by stretch, in all
  double thread_cpu_ms() const;           // the training thread's CPU time + slept_ms_

  // Any thread, without a lock.
  std::atomic<double> slowdown_;
  std::atomic<double> latency_now_;  // the latency as last set
  std::atomic<std::int64_t> checkpoint_{-1};

  // The communication thread's own: the transport with its emulated link, the codec.
  std::unique_ptr<compress::PushCodec> codec_;   // pushes encoded
  compress::PullCodec pulls_;                    // pull replies written or added
  // Per atom, the version of the PS's public copy the model holds (compressed pulls: an
  // update applies only onto the version before it); -1: none.
  std::vector<std::int64_t> held_version_ DYNACOMM_GUARDED_BY(mu_);
  std::mutex deferred_mu_;
  std::vector<std::function<void()>> deferred_ DYNACOMM_GUARDED_BY(deferred_mu_);

  // Shared between the threads: everything below is read and written under mu_.
  mutable std::mutex mu_;
  std::condition_variable cv_;
  double latency_ms_ DYNACOMM_GUARDED_BY(mu_);          // one way, as now emulated
  Clock::time_point last_heartbeat_{};                  // the comm thread's own
  std::unique_ptr<net::SharedCloudLink> cloud_;
  net::ShapedTransport link_;                           // the comm thread's own (wake(): any)
  std::int64_t bytes_up_ DYNACOMM_GUARDED_BY(mu_) = 0;  // this iteration's
  std::int64_t bytes_down_ DYNACOMM_GUARDED_BY(mu_) = 0;
  std::int64_t next_bytes_down_ DYNACOMM_GUARDED_BY(mu_) = 0;  // the prefetched round's
  std::exception_ptr error_ DYNACOMM_GUARDED_BY(mu_);
  std::vector<std::size_t> push_method_ DYNACOMM_GUARDED_BY(mu_);  // per atom
  bool stop_ DYNACOMM_GUARDED_BY(mu_) = false;
  bool send_goodbye_ DYNACOMM_GUARDED_BY(mu_) = false;
  Clock::time_point goodbye_deadline_ DYNACOMM_GUARDED_BY(mu_){};
  std::optional<std::string> agreed_plans_ DYNACOMM_GUARDED_BY(mu_);  // the PS's answer
  // To send (the comm thread), made in the iteration given.
  std::optional<std::pair<std::int64_t, std::string>> replan_report_ DYNACOMM_GUARDED_BY(mu_);
  std::optional<std::string> job_replan_ DYNACOMM_GUARDED_BY(mu_);  // the PS's, not yet taken
  std::uint64_t last_update_ DYNACOMM_GUARDED_BY(mu_) = 0;  // the PS's newest update reported
  std::vector<plan::TransferSample> aggregations_ DYNACOMM_GUARDED_BY(mu_);
  struct PullRequest {
    std::int64_t iteration;
    int segment;
    plan::Segment units;
    bool in_order;
    bool exact = false;  // the parameters, not the public copy (fetch_all)
  };
  std::vector<PullRequest> requests_ DYNACOMM_GUARDED_BY(mu_);  // to send, in order
  bool fetch_exact_ DYNACOMM_GUARDED_BY(mu_) = false;           // fetch_all's requests
  std::int64_t iteration_ DYNACOMM_GUARDED_BY(mu_) = 0;
  std::int64_t push_label_ DYNACOMM_GUARDED_BY(mu_) = 0;  // the pushes' iteration (catch_up)
  // The round after the last one this worker pushed: goodbye tells the PS (ps/server.cc
  // waits on that round for it no longer only once another worker needs it).
  std::int64_t unpushed_round_ DYNACOMM_GUARDED_BY(mu_) = 0;
  plan::Plan plan_ DYNACOMM_GUARDED_BY(mu_);
  // The pull requests of one iteration and what has come back.
  struct PullRound {
    std::int64_t iteration = -1;  // -1: none
    std::vector<plan::Segment> segments;
    std::vector<int> segment_of_atom;
    std::vector<bool> arrived;            // by pull segment
    std::vector<Clock::time_point> sent;  // when each request left
    std::vector<net::Message> held;       // replies that came before the iteration began
    std::int64_t oldest_version = -1;     // of the replies so far (-1: none)
  };
  // For iteration_ and (prefetched) iteration_ + 1.
  PullRound current_ DYNACOMM_GUARDED_BY(mu_), next_ DYNACOMM_GUARDED_BY(mu_);
  PullRound request_round(std::int64_t iteration, const plan::Plan& plan);  // queues them
  PullRound round_for(std::int64_t iteration, const plan::Plan& plan) const;  // queues none
  PullRound* round_of(std::int64_t iteration);
  void write_params(const net::Message& m);           // into the model
  std::vector<bool> ready_ DYNACOMM_GUARDED_BY(mu_);  // by atom: this iteration's gradients in
  // Forward + backward up to the last gradients handed over.
  double compute_so_far_ms_ DYNACOMM_GUARDED_BY(mu_) = 0;
  double predicted_ms_ DYNACOMM_GUARDED_BY(mu_) = 0;  // this worker's of the iteration (0: none)
  struct Barrier {
    double own_ms = 0;                // this worker's compute in the iteration (its last push's)
    double slowest_ms = 0;            // the slowest worker's, as the PS's replies reported it
    double slowest_predicted_ms = 0;  // the largest prediction of the iteration reported
  };
  std::map<std::int64_t, Barrier> barrier_ DYNACOMM_GUARDED_BY(mu_);  // by iteration, the last few
  LinkClock pull_clock_ DYNACOMM_GUARDED_BY(mu_);  // the downlink's busy time per reply
  std::vector<LinkEvent> link_events_ DYNACOMM_GUARDED_BY(mu_);
  // Pushes: a segment's frame is built (its gradients copied) as soon as its gradients are
  // in, then queued; plan order sends the queue as it is, priority sends the lowest ready
  // segment the credit allows. Queued pushes of t may still leave during t+1's forward.
  std::size_t next_push_ DYNACOMM_GUARDED_BY(mu_) = 0;     // built (plan order: the next one)
  std::vector<bool> push_built_ DYNACOMM_GUARDED_BY(mu_);  // priority: by push segment
  PushQueue push_queue_ DYNACOMM_GUARDED_BY(mu_);
  std::optional<std::size_t> next_push_to_build(bool priority) const;
  struct PushInFlight {
    int segment;
    std::int64_t bytes;
    Clock::time_point start;
    // This worker's iteration when it went onto the link. Its label (the key) is the
    // version it is for, which under ASP and backup workers runs ahead of a straggler's own
    // iterations: timed by the label, a straggler's warm-up pushes fell outside its warm-up
    // and its estimators' window of 8 iterations held one or two of its pushes.
    std::int64_t round;
  };
  // By (iteration, first atom).
  std::map<std::pair<std::int64_t, std::uint32_t>, PushInFlight> pushes_ DYNACOMM_GUARDED_BY(mu_);
  // Compressed pushes' costs: built, not yet acknowledged (by the same key); acknowledged.
  std::map<std::pair<std::int64_t, std::uint32_t>, PushCosts> push_costs_ DYNACOMM_GUARDED_BY(mu_);
  std::vector<PushCosts> push_costs_done_ DYNACOMM_GUARDED_BY(mu_);
  // When the PS says a message arrived (its clock, wire arrived_us), on this clock; nullopt
  // without the clocks' offset or a stamp.
  PsClock ps_clock_ DYNACOMM_GUARDED_BY(mu_);  // when the PS says a message arrived
  std::int64_t acks_of_iteration_ DYNACOMM_GUARDED_BY(mu_) = 0;  // acks received for iteration_
  LinkClock push_clock_ DYNACOMM_GUARDED_BY(mu_);                // the uplink's busy time per push
  void on_ack(const net::Message& m);
  std::thread thread_;
};

}  // namespace dynacomm::worker
