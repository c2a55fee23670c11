// `dsekp experiment`: the paper's evaluation end to end on one machine (docs/EXPERIMENT.md).
//
// In order: a results folder; devices and broker accounts provisioned in a fresh registry; a
// private Mosquitto on a free loopback port (or --broker); optionally `dsekp link` between the
// devices and the broker; `dsekp edge`; the PSK run and then the DSEKP run with identical
// settings (`dsekp device`); the multi-session DSEKP trial with random resets and its own edge
// and logs; `dsekp analyze` on the main logs and on the trial's; report.md and experiment.json
// with our numbers beside the paper's Tables 6-7 and a verdict per claim.
//
// Every process it starts is stopped, last started first, on success, on failure and on
// SIGINT/SIGTERM/SIGHUP (process.hpp, interrupt.hpp).
#pragma once

#include "options.hpp"

namespace dsekp::experiment {

/// Runs the experiment. Returns the exit code: 0 when every phase completed (the verdicts may
/// still say "not reproduced": that is a result, not a failure), 1 when a phase failed (the
/// message says which and shows the end of the failing process's log; whatever was written so
/// far stays in the results folder), 2 for bad options, 130 after SIGINT/SIGTERM/SIGHUP.
int run_experiment(ExperimentOptions options);

}  // namespace dsekp::experiment
