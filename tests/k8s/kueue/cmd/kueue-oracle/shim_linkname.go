package main

// Access to two unexported methods of Kueue's *scheduler.Scheduler, so that
// exactly one scheduling cycle can be driven at a time, deterministically,
// the way Kueue's own unit tests drive it (pkg/scheduler/scheduler_test.go
// calls scheduler.schedule(ctx) and scheduler.setAdmissionRoutineWrapper).
//
// `go build -overlay` cannot add a file to a package that lives in
// GOMODCACHE ("Files beneath GOMODCACHE must not be replaced"), so the
// linker is asked to bind these declarations to the methods instead.

import (
	"context"
	_ "unsafe" // for go:linkname

	"sigs.k8s.io/kueue/pkg/scheduler"
	"sigs.k8s.io/kueue/pkg/util/routine"
	"sigs.k8s.io/kueue/pkg/util/wait"
)

//go:linkname kueueSchedule sigs.k8s.io/kueue/pkg/scheduler.(*Scheduler).schedule
func kueueSchedule(s *scheduler.Scheduler, ctx context.Context) wait.SpeedSignal

//go:linkname kueueSetAdmissionRoutineWrapper sigs.k8s.io/kueue/pkg/scheduler.(*Scheduler).setAdmissionRoutineWrapper
func kueueSetAdmissionRoutineWrapper(s *scheduler.Scheduler, w routine.Wrapper)

// scheduleOnce runs a single Kueue scheduling cycle; true when Kueue
// signalled KeepGoing (something was admitted).
func scheduleOnce(ctx context.Context, s *scheduler.Scheduler) bool {
	return kueueSchedule(s, ctx) == wait.KeepGoing
}
