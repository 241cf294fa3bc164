// `dynacomm bench --compress none,fp16,topk:0.01,auto,...`: every codec on the same cluster,
// data and links, one job each (a codec is a job setting), the codecs taking turns over
// --repeat rounds (A B C A B C) so machine drift hits all alike. Two modes:
//
// - per iteration (no --target-accuracy): --iterations measured after the warm-up; per
//   codec the bytes each way per iteration, the median iteration (min-max, every round's
//   iterations pooled), the job's prediction and measured / predicted, and what `auto`
//   chose;
// - time to accuracy (--target-accuracy A): each job trains until rank 0's evaluation
//   (every --eval-every iterations, on --test-samples, default all) reaches A, or to the
//   end of --epochs; per codec the training time (evaluations left out), iterations and
//   bytes to A, the final accuracy, and a chart of test accuracy against training time.
//
// codecs.md, codecs.json, codecs.csv and the charts in --out; each job's run folder under
// it (CODEC[-ROUND]).
#pragma once

#include "cli/bench/options.h"

namespace dynacomm::cli::bench {

// True when the bench's flags ask for the codec bench: --compress lists several codecs,
// or --target-accuracy is set.
bool codec_bench_requested(const BenchFlags& f);

void run_codec_bench(const BenchFlags& f);

}  // namespace dynacomm::cli::bench
