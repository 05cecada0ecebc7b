#pragma once

#include "collide/scenario.pb.h"
#include "collide/testbed.pb.h"

// How many queues a lossless-capable virtual fabric's switch ports get for a scenario.
//
// A switch port has a queue per priority, so that a pause holds the lossless priority's traffic
// alone. On the virtual fabric a second queue costs an HTB tree and a classifier on every switch
// port, and on a machine of a few cores that work comes out of the same CPUs as the switches'
// PFC loop (measured on configs/fabric/pfc-deadlock.yaml: the loop late by more than 1 ms about
// twice as often with two queues, enough to move watchdog detections 5 ms off). A port whose
// every frame is on the lossless priority behaves the same with one queue, so the second is
// built only when the run has traffic for it, unless pfc.lossy_queue says otherwise.
namespace collide::orchestrator {

// True when a frame of the run rides a priority other than pfc.priority: a transport's DSCP (the
// baseline's, a variant's, a job's own), or BGP's and BFD's CS6 with routing: bgp.
bool has_lossy_traffic(const v1::Scenario& scenario);

// The scenario's virtual testbed as a run builds it: with pfc settings, pfc.lossy_queue decided
// (as the scenario sets it, else has_lossy_traffic). Every plan of the run's testbed starts here.
v1::VirtualTestbedSpec virtual_testbed_to_build(const v1::Scenario& scenario);

}  // namespace collide::orchestrator
