package main

// Session mode (kueue-oracle --session): one scenario (or several, one after
// the other) driven incrementally by a client such as the simulator's
// timeline (tests/support/kueue_session.py). JSON lines on stdin; exactly one
// JSON line answers each request on stdout, flushed.
//
//	setup document (first line), or {"op": "reset", ...setup document...}
//	    the keys of the one-shot input (resourceFlavors, cohorts,
//	    clusterQueues, localQueues, workloadPriorityClasses, namespaces,
//	    fairSharing, featureGates, workloads, now = the simulation start)
//	    -> {"ok": true, "validationErrors": [...]}
//	{"op": "submit", "workload": Workload}            -> {"ok": true}
//	{"op": "finish", "workload": "ns/name", "at": s}  -> {"ok": true}
//	{"op": "schedule", "at": s, "maxCycles": n, "state": bool}
//	    -> {"cycles", "stable", "decisions", "ties", "pending", "usage"}
//	    ("pending" and "usage" only unless "state" is false)
//	{"op": "state"}                                   -> {"pending", "usage"}
//	    as the last schedule answered them (or the setup, before any):
//	    pending adds the workloads submitted since, with an empty message;
//	    usage is the usage before the finishes since. A client that reads
//	    them seldom sends "state": false and asks when it needs them.
//
// Any bad request is answered with {"error": "..."} and the session goes on;
// EOF ends the process with exit code 0. A Go panic ends it with a non-zero
// exit code (Go's default), so a client waiting on stdout sees EOF.
//
// Determinism. A submitted workload without metadata.uid gets
// "sim-<12-digit submission number>", so UIDs sort by submission order: Kueue
// breaks ties between equal priority and creationTimestamp by UID (the
// ClusterQueue heap, pkg/cache/queue/cluster_queue.go baseCompareFunc, and the
// preemption candidates, preemption/common/ordering.go), and the preemption
// message names the preemptor's UID. Setup workloads keep the UID the
// document gives them. One tie Kueue leaves to chance: the classical
// iterator (pkg/scheduler/scheduler.go makeClassicalIterator) sorts the heads
// of one cycle, taken from a Go map of ClusterQueues, with an unstable sort
// whose last key is the creationTimestamp; two heads of different
// ClusterQueues with equal borrowing, priority and timestamp (whole seconds)
// are processed in a random order. The answer lists such heads in "ties"
// when they competed in a cycle that admitted or preempted something, so a
// comparison can tell a Kueue coin flip from a difference.
//
// With fair sharing, the iterator (pkg/scheduler/fair_sharing_iterator.go)
// runs a tournament per pop among the remaining heads of a root cohort; at
// each cohort the first of the candidates with the lowest (dominant resource
// share, -priority, queue-order timestamp) wins, and the candidates come from
// a set (hierarchy.Cohort.ChildCQs: UnsortedList), so equal ones win by
// chance. "ties" lists, for the winner of each pop of a cycle that admitted
// or preempted something, the heads of the other ClusterQueues of the same
// cohort that equal it. The log gives each share as PreciseWeightedShare
// only: two zero-weight borrowers (both +Inf, which Kueue orders by their
// unweighted ratio), or equal shares of which one borrows on a flavor the
// workload requests and the other not (FairSharingPrioritizeNonBorrowing),
// count as equal, so a group may hold a head Kueue would not have picked.
// Heads of different root cohorts (or of ClusterQueues without one) are also
// processed in a random order, but share no quota: only the order of their
// decisions in the answer changes.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"time"

	"github.com/go-logr/logr"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/resources"
	"sigs.k8s.io/kueue/pkg/util/priority"
	"sigs.k8s.io/kueue/pkg/webhooks"
	"sigs.k8s.io/kueue/pkg/workload"
	"sigs.k8s.io/kueue/pkg/workload/finish"
)

// A setup document, a reset line or EOF: 256 MiB bounds one line (a
// scenario's setup with its admitted workloads).
const maxLine = 256 << 20

type request struct {
	Op        string          `json:"op"`
	Workload  json.RawMessage `json:"workload,omitempty"`
	At        *int64          `json:"at,omitempty"`
	MaxCycles int             `json:"maxCycles,omitempty"`
	// State: schedule answers pending and usage unless false.
	State *bool `json:"state,omitempty"`
}

type decision struct {
	Event        string                             `json:"event"`
	Workload     string                             `json:"workload"`
	ClusterQueue string                             `json:"clusterQueue"`
	Flavors      map[string]map[string]string       `json:"flavors,omitempty"`
	Borrowed     map[string]map[string]string       `json:"borrowed,omitempty"`
	Preemptor    string                             `json:"preemptor,omitempty"`
	Reason       string                             `json:"reason,omitempty"`
	Message      string                             `json:"message,omitempty"`
	usage        resources.FlavorResourceQuantities // admitted: the workload's usage
}

type scheduleAnswer struct {
	Cycles    int        `json:"cycles"`
	Stable    bool       `json:"stable"`
	Decisions []decision `json:"decisions"`
	Ties      [][]string `json:"ties,omitempty"`
	// pending and usage, unless the request's "state" is false (nil: left
	// out; an empty map is an answer).
	*stateAnswer
}

type stateAnswer struct {
	Pending map[string]string                       `json:"pending"`
	Usage   map[string]map[string]map[string]string `json:"usage"`
}

type issuedPreemption struct{ target, preemptor, reason, message string }

// session is one scenario: a world whose scheduler is driven request by
// request, and what the session tracks of its workloads.
type session struct {
	w     *world
	ctx   context.Context
	log   logr.Logger
	start time.Time
	seq   int
	// pending: every workload waiting for quota -> the message of its
	// QuotaReserved=False condition (kept by observe, from each status write).
	pending map[string]string
	// reserved: the workloads holding a quota reservation.
	reserved map[string]bool
	// admitted: the workloads that got a quota reservation since the last reset
	// of this set (one cycle).
	admitted map[string]bool
	cqs      map[string]*kueue.ClusterQueue
	// usedBefore: the usage of each ClusterQueue a finish changed since the
	// last schedule, as that schedule left it (what the state op answers).
	usedBefore map[string]resources.FlavorResourceQuantities
}

// The feature gates as the binary starts (v0.19.2's defaults): a reset puts
// back those a previous scenario changed.
var (
	initialGates = map[string]bool{}
	changedGates = map[string]bool{}
)

func runSession(stdin io.Reader, stdout io.Writer, verbosity int) int {
	// A session's live heap is small (one scenario) and it allocates fast
	// (fake-client copies, snapshots): fewer collections for some memory,
	// where the default spent a seventh of the CPU.
	debug.SetGCPercent(400)
	for f := range utilfeature.DefaultMutableFeatureGate.GetAll() {
		initialGates[string(f)] = utilfeature.DefaultFeatureGate.Enabled(f)
	}
	in := bufio.NewScanner(stdin)
	in.Buffer(make([]byte, 1<<20), maxLine)
	out := bufio.NewWriter(stdout)
	var s *session
	for in.Scan() {
		line := in.Bytes()
		if len(line) == 0 {
			continue
		}
		var answer any
		var err error
		s, answer, err = handle(s, line, verbosity)
		if err != nil {
			answer = map[string]string{"error": err.Error()}
		}
		b, err := json.Marshal(answer)
		if err != nil {
			b, _ = json.Marshal(map[string]string{"error": "encoding the answer: " + err.Error()})
		}
		if _, err := out.Write(append(b, '\n')); err != nil {
			fmt.Fprintf(os.Stderr, "kueue-oracle: writing the answer: %v\n", err)
			return 1
		}
		if err := out.Flush(); err != nil {
			fmt.Fprintf(os.Stderr, "kueue-oracle: writing the answer: %v\n", err)
			return 1
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintf(os.Stderr, "kueue-oracle: reading requests: %v\n", err)
		return 1
	}
	return 0
}

// handle answers one line; the session it returns is the current one (a new
// one after a successful setup or reset).
func handle(s *session, line []byte, verbosity int) (*session, any, error) {
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		return s, nil, fmt.Errorf("not a JSON request: %w", err)
	}
	if s == nil || req.Op == "reset" {
		if s == nil && req.Op != "" && req.Op != "reset" {
			return s, nil, fmt.Errorf("op %q before a setup document", req.Op)
		}
		ns, validation, err := newSession(line, verbosity)
		if err != nil {
			// A failed reset leaves no scenario: the old one must not be mistaken for the new.
			return nil, nil, err
		}
		return ns, map[string]any{"ok": true, "validationErrors": validation}, nil
	}
	switch req.Op {
	case "submit":
		return s, map[string]bool{"ok": true}, s.submit(req.Workload)
	case "finish":
		var key string
		if err := json.Unmarshal(req.Workload, &key); err != nil || req.At == nil {
			return s, nil, errors.New(`finish needs "workload": "ns/name" and "at": seconds`)
		}
		return s, map[string]bool{"ok": true}, s.finish(key, *req.At)
	case "schedule":
		if req.At == nil {
			return s, nil, errors.New(`schedule needs "at": seconds`)
		}
		a, err := s.schedule(*req.At, req.MaxCycles)
		if err != nil {
			return s, nil, err
		}
		if req.State == nil || *req.State {
			st, err := s.state()
			if err != nil {
				return s, nil, err
			}
			a.stateAnswer = st
		}
		return s, a, nil
	case "state":
		st, err := s.state()
		if err != nil {
			return s, nil, err
		}
		return s, st, nil
	}
	return s, nil, fmt.Errorf("unknown op %q (submit, finish, schedule, state, reset)", req.Op)
}

func newSession(line []byte, verbosity int) (*session, []string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, nil, err
	}
	delete(m, "op")
	for _, k := range []string{"mode", "preemption", "cycles", "untilStable", "maxCycles", "cycleInterval",
		"simulateEvictions", "includeEvents", "includeObjects"} {
		if _, ok := m[k]; ok {
			return nil, nil, fmt.Errorf("%q belongs to the one-shot mode, not to a session's setup", k)
		}
	}
	b, _ := json.Marshal(m)
	var in Input
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, nil, fmt.Errorf("parsing the setup document: %w", err)
	}
	gates := map[string]bool{}
	for g := range changedGates {
		gates[g] = initialGates[g]
	}
	for g, v := range in.FeatureGates {
		gates[g] = v
		changedGates[g] = true
	}
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(gates); err != nil {
		return nil, nil, fmt.Errorf("feature gates: %w", err)
	}
	w, ctx, err := newWorld(&in, verbosity)
	if err != nil {
		return nil, nil, err
	}
	s := &session{w: w, ctx: ctx, log: ctrllog.FromContext(ctx), start: w.now, pending: map[string]string{},
		reserved: map[string]bool{}, admitted: map[string]bool{}, cqs: map[string]*kueue.ClusterQueue{},
		usedBefore: map[string]resources.FlavorResourceQuantities{}}
	for _, cq := range w.cqs {
		s.cqs[cq.Name] = cq
	}
	for i := range w.wls {
		s.track(&w.wls[i])
	}
	w.observe = func(wl *kueue.Workload) {
		w.mu.Lock()
		defer w.mu.Unlock()
		s.track(wl)
	}
	if err := w.startScheduler(ctx, s.log); err != nil {
		return nil, nil, err
	}
	return s, w.validation, nil
}

// track records a workload's state after a status write (or at setup).
func (s *session) track(wl *kueue.Workload) {
	key := string(workload.Key(wl))
	switch {
	case finish.IsFinished(wl) || !workload.IsActive(wl):
		delete(s.pending, key)
		delete(s.reserved, key)
	case workload.HasQuotaReservation(wl):
		delete(s.pending, key)
		if !s.reserved[key] {
			s.admitted[key] = true
		}
		s.reserved[key] = true
	default:
		delete(s.reserved, key)
		msg := ""
		if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved); c != nil {
			msg = c.Message
		}
		s.pending[key] = msg
	}
}

func (s *session) submit(raw json.RawMessage) error {
	if len(raw) == 0 {
		return errors.New(`submit needs "workload": a Workload object`)
	}
	o, err := decodeObject(raw, "Workload", true)
	if err != nil {
		return fmt.Errorf("workload: %w", err)
	}
	wl, ok := o.(*kueue.Workload)
	if !ok {
		return fmt.Errorf("workload: a %T, not a Workload", o)
	}
	if wl.Status.Admission != nil || len(wl.Status.Conditions) > 0 {
		return errors.New("a submitted workload is new: no status (admitted workloads belong to the setup)")
	}
	if wl.CreationTimestamp.IsZero() {
		return errors.New("workload: metadata.creationTimestamp is required (the submission time)")
	}
	if err := s.w.resolvePriority(wl); err != nil {
		return err
	}
	if errs := webhooks.ValidateWorkload(wl, nil); len(errs) > 0 {
		return fmt.Errorf("workload %s/%s: %v", wl.Namespace, wl.Name, errs.ToAggregate())
	}
	s.seq++
	if wl.UID == "" {
		wl.UID = types.UID(fmt.Sprintf("sim-%012d", s.seq))
	}
	if err := s.w.cl.Create(s.ctx, wl); err != nil {
		return fmt.Errorf("creating workload %s/%s: %w", wl.Namespace, wl.Name, err)
	}
	s.w.mu.Lock()
	s.track(wl)
	s.w.mu.Unlock()
	// As the workload controller does on a Workload create event.
	if err := s.w.queues.AddOrUpdateWorkload(s.log, wl.DeepCopy()); err != nil {
		return fmt.Errorf("queueing workload %s/%s: %w", wl.Namespace, wl.Name, err)
	}
	return nil
}

// finish is what Kueue's workload controller does when a workload's Finished
// condition appears (pkg/controller/core/workload_controller.go Update): the
// workload leaves the queues, its quota leaves the cache, and the inadmissible
// workloads of its ClusterQueue are requeued.
func (s *session) finish(key string, at int64) error {
	ns, name, ok := splitKey(key)
	if !ok {
		return fmt.Errorf("finish: %q is not ns/name", key)
	}
	var wl kueue.Workload
	if err := s.w.cl.Get(s.ctx, types.NamespacedName{Namespace: ns, Name: name}, &wl); err != nil {
		return fmt.Errorf("finish: %w", err)
	}
	if !workload.HasQuotaReservation(&wl) || finish.IsFinished(&wl) {
		return fmt.Errorf("finish: workload %s is not admitted", key)
	}
	if cq := string(wl.Status.Admission.ClusterQueue); s.usedBefore[cq] == nil && s.cqs[cq] != nil {
		u, err := s.cqUsage(cq)
		if err != nil {
			return fmt.Errorf("finish %s: %w", key, err)
		}
		s.usedBefore[cq] = u
	}
	apimeta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{
		Type: kueue.WorkloadFinished, Status: metav1.ConditionTrue, Reason: kueue.WorkloadFinishedReasonSucceeded,
		Message: "finished in the simulation", LastTransitionTime: metav1.NewTime(s.start.Add(time.Duration(at) * time.Second)),
	})
	if err := s.w.cl.Status().Update(s.ctx, &wl); err != nil {
		return fmt.Errorf("finish %s: %w", key, err)
	}
	ref := workload.Reference(key)
	s.w.queues.DeleteWorkload(s.log, ref)
	s.w.queues.AddFinishedWorkload(&wl)
	var cacheErr error
	s.w.queues.QueueAssociatedInadmissibleWorkloadsAfter(s.ctx, ref, func() {
		cacheErr = s.w.cache.DeleteWorkload(s.log, ref)
	})
	if cacheErr != nil {
		return fmt.Errorf("finish %s: removing it from the cache: %w", key, cacheErr)
	}
	return nil
}

func (s *session) schedule(at int64, maxCycles int) (*scheduleAnswer, error) {
	if maxCycles <= 0 {
		maxCycles = 100
	}
	now := s.start.Add(time.Duration(at) * time.Second)
	if now.Before(s.w.clock.Now()) {
		return nil, fmt.Errorf("schedule at %ds: the clock is already at %ds", at, int64(s.w.clock.Now().Sub(s.start)/time.Second))
	}
	// Every cycle of one call runs at start+at: the timeline's times are whole
	// seconds and the cycles of one call model one instant, so stepping the
	// clock (as the one-shot mode's cycleInterval does) would give admissions,
	// evictions and requeues times the timeline never had, and run into the
	// timeline's next event one second later.
	s.w.clock.SetTime(now)
	a := &scheduleAnswer{Stable: false, Decisions: []decision{}}
	for a.Cycles < maxCycles {
		// What Kueue's background requeuer does: inadmissible workloads of the
		// ClusterQueues and Cohorts notified since the last cycle (by a finish
		// or a completed eviction) go back to the active queues.
		s.w.requeuer.ProcessRequeues(s.ctx)
		if !s.hasHeads() {
			// Kueue's scheduler would block until a workload arrives.
			a.Stable = true
			break
		}
		s.w.mu.Lock()
		s.admitted = map[string]bool{}
		s.w.mu.Unlock()
		s.w.cycle(s.ctx)
		a.Cycles++
		decisions, victims, ties, err := s.cycleDecisions()
		if err != nil {
			return nil, err
		}
		a.Decisions = append(a.Decisions, decisions...)
		a.Ties = append(a.Ties, ties...)
		// The evictions complete before the next cycle (the job and workload
		// controllers' part), also after the last one: the timeline goes on.
		for _, v := range victims {
			if err := s.releaseVictim(v); err != nil {
				return nil, err
			}
		}
		if len(decisions) == 0 {
			a.Stable = true
			break
		}
	}
	s.usedBefore = map[string]resources.FlavorResourceQuantities{}
	return a, nil
}

// state: the pending workloads and the usage (see top). Pending messages
// change only in a schedule call; a submit adds its workload with an empty
// message and a finish removes nothing pending, so the current map is the
// answer.
func (s *session) state() (*stateAnswer, error) {
	st := &stateAnswer{Pending: make(map[string]string, len(s.pending))}
	for k, v := range s.pending {
		st.Pending[k] = v
	}
	usage, err := s.usage()
	if err != nil {
		return nil, err
	}
	st.Usage = usage
	return st, nil
}

// hasHeads: some active ClusterQueue has a workload in its active queue.
func (s *session) hasHeads() bool {
	for cq, wls := range s.w.queues.Dump() {
		if len(wls) > 0 && s.w.cache.ClusterQueueActive(cq) {
			return true
		}
	}
	return false
}

// cycleDecisions reads what the last cycle did, in the order Kueue processed
// the heads: each admitted head, then the victims of the preemptions it
// issued (by name). Also the workloads to release and the ties (see top).
func (s *session) cycleDecisions() ([]decision, []string, [][]string, error) {
	s.w.mu.Lock()
	var attempts []string
	var preemptions []issuedPreemption
	evaluated := map[string]map[string]any{}
	var tournaments []map[string]any
	for _, e := range s.w.entries {
		switch e["msg"] {
		case "Attempting to schedule workload":
			attempts = append(attempts, refKey(e["workload"]))
		case "Preempted":
			p := issuedPreemption{target: refKey(e["targetWorkload"]), preemptor: refKey(e["preemptingWorkload"])}
			p.reason, _ = e["reason"].(string)
			p.message, _ = e["message"].(string)
			preemptions = append(preemptions, p)
		case evaluatedMsg:
			evaluated[refKey(e["workload"])] = e
		case drsMsg:
			tournaments = append(tournaments, e)
		}
	}
	admitted := s.admitted
	s.admitted = map[string]bool{}
	s.w.mu.Unlock()

	sort.SliceStable(preemptions, func(i, j int) bool { return preemptions[i].target < preemptions[j].target })
	var out []decision
	var victims []string
	seen := map[string]bool{}
	add := func(key string) error {
		if seen[key] {
			return nil
		}
		seen[key] = true
		if admitted[key] {
			d, err := s.admittedDecision(key)
			if err != nil {
				return err
			}
			out = append(out, d)
		}
		for _, p := range preemptions {
			if p.preemptor != key {
				continue
			}
			var cq string
			if wl, err := s.get(p.target); err == nil && wl.Status.Admission != nil {
				cq = string(wl.Status.Admission.ClusterQueue)
			}
			out = append(out, decision{Event: "preempted", Workload: p.target, ClusterQueue: cq, Preemptor: p.preemptor,
				Reason: p.reason, Message: p.message})
			victims = append(victims, p.target)
		}
		return nil
	}
	for _, k := range attempts {
		if err := add(k); err != nil {
			return nil, nil, nil, err
		}
	}
	// Not seen processed (none expected): after the others, by name.
	var rest []string
	for k := range admitted {
		rest = append(rest, k)
	}
	for _, p := range preemptions {
		rest = append(rest, p.preemptor)
	}
	sort.Strings(rest)
	for _, k := range rest {
		if err := add(k); err != nil {
			return nil, nil, nil, err
		}
	}
	if err := s.fillBorrowed(out); err != nil {
		return nil, nil, nil, err
	}
	var ties [][]string
	if len(out) > 0 {
		if s.w.in.FairSharing != nil {
			var err error
			if ties, err = s.fairTies(tournaments, evaluated); err != nil {
				return nil, nil, nil, err
			}
		} else {
			ties = s.ties(attempts, evaluated)
		}
	}
	return out, victims, ties, nil
}

func (s *session) admittedDecision(key string) (decision, error) {
	wl, err := s.get(key)
	if err != nil {
		return decision{}, err
	}
	if wl.Status.Admission == nil {
		return decision{}, fmt.Errorf("workload %s has a quota reservation but no admission", key)
	}
	d := decision{Event: "admitted", Workload: key, ClusterQueue: string(wl.Status.Admission.ClusterQueue),
		Flavors: map[string]map[string]string{}, usage: workload.NewInfo(wl).FlavorResourceUsage()}
	for _, psa := range wl.Status.Admission.PodSetAssignments {
		f := map[string]string{}
		for r, fl := range psa.Flavors {
			f[string(r)] = string(fl)
		}
		d.Flavors[string(psa.Name)] = f
	}
	return d, nil
}

// fillBorrowed sets each admission's `borrowed`: its ClusterQueue's usage
// above nominal quota after the admission minus before, per flavor and
// resource. The cache holds the usage after the cycle (the victims of the
// cycle still hold theirs until their eviction completes); the usage before an
// admission is that minus the usage of the cycle's later admissions in the
// same ClusterQueue.
func (s *session) fillBorrowed(ds []decision) error {
	after := map[string]resources.FlavorResourceQuantities{}
	for i := range ds {
		if ds[i].Event != "admitted" || after[ds[i].ClusterQueue] != nil {
			continue
		}
		u, err := s.cqUsage(ds[i].ClusterQueue)
		if err != nil {
			return err
		}
		after[ds[i].ClusterQueue] = u
	}
	cur := map[string]resources.FlavorResourceQuantities{}
	for cq, u := range after {
		c := resources.FlavorResourceQuantities{}
		for fr, v := range u {
			c[fr] = v
		}
		for _, d := range ds {
			if d.Event == "admitted" && d.ClusterQueue == cq {
				for fr, v := range d.usage {
					c[fr] = c[fr].Sub(v)
				}
			}
		}
		cur[cq] = c
	}
	for i := range ds {
		d := &ds[i]
		if d.Event != "admitted" {
			continue
		}
		nominal := s.nominal(d.ClusterQueue)
		c := cur[d.ClusterQueue]
		for fr, v := range d.usage {
			before := c[fr]
			c[fr] = before.Add(v)
			n := nominal[fr]
			b := max(0, c[fr].Int64()-n) - max(0, before.Int64()-n)
			if b == 0 {
				continue
			}
			if d.Borrowed == nil {
				d.Borrowed = map[string]map[string]string{}
			}
			if d.Borrowed[string(fr.Flavor)] == nil {
				d.Borrowed[string(fr.Flavor)] = map[string]string{}
			}
			d.Borrowed[string(fr.Flavor)][string(fr.Resource)] = quantityFormatter.ResourceQuantityString(fr.Resource, b)
		}
	}
	return nil
}

func (s *session) nominal(cq string) map[resources.FlavorResource]int64 {
	out := map[resources.FlavorResource]int64{}
	c := s.cqs[cq]
	if c == nil {
		return out
	}
	for _, rg := range c.Spec.ResourceGroups {
		for _, fq := range rg.Flavors {
			for _, r := range fq.Resources {
				out[frOf(fq.Name, r.Name)] = resources.AmountFromQuantity(r.Name, r.NominalQuota).Int64()
			}
		}
	}
	return out
}

// cqUsage: what the ClusterQueue's workloads with a quota reservation use,
// per flavor and resource, in Kueue's units (from Kueue's cache).
func (s *session) cqUsage(cq string) (resources.FlavorResourceQuantities, error) {
	c := s.cqs[cq]
	if c == nil {
		return nil, fmt.Errorf("no ClusterQueue %q", cq)
	}
	st, err := s.w.cache.Usage(c)
	if err != nil {
		return nil, fmt.Errorf("usage of ClusterQueue %s: %w", cq, err)
	}
	out := resources.FlavorResourceQuantities{}
	for _, fu := range st.ReservedResources {
		for _, ru := range fu.Resources {
			out[frOf(fu.Name, ru.Name)] = resources.AmountFromQuantity(ru.Name, ru.Total)
		}
	}
	return out, nil
}

// usage: per ClusterQueue, flavor and resource, the non-zero usage.
func (s *session) usage() (map[string]map[string]map[string]string, error) {
	out := map[string]map[string]map[string]string{}
	for name := range s.cqs {
		if !s.w.cache.ClusterQueueActive(kueue.ClusterQueueReference(name)) {
			continue
		}
		u := s.usedBefore[name]
		if u == nil {
			var err error
			if u, err = s.cqUsage(name); err != nil {
				return nil, err
			}
		}
		for fr, v := range u {
			if v.Int64() == 0 {
				continue
			}
			if out[name] == nil {
				out[name] = map[string]map[string]string{}
			}
			if out[name][string(fr.Flavor)] == nil {
				out[name][string(fr.Flavor)] = map[string]string{}
			}
			out[name][string(fr.Flavor)][string(fr.Resource)] = quantityFormatter.AmountQuantityString(fr.Resource, v)
		}
	}
	return out, nil
}

// ties lists groups of heads of different ClusterQueues that Kueue's
// classical iterator cannot order (equal borrowing, priority and
// creationTimestamp; see top).
func (s *session) ties(attempts []string, evaluated map[string]map[string]any) [][]string {
	type tieKey struct {
		borrowing int
		priority  int32
		created   int64
	}
	groups := map[tieKey][]string{}
	cqOf := map[string]string{}
	var order []tieKey
	for _, k := range attempts {
		wl, err := s.get(k)
		if err != nil {
			continue
		}
		e := entryFromLog(evaluated[k])
		var prio int32
		if wl.Spec.Priority != nil {
			prio = *wl.Spec.Priority
		}
		tk := tieKey{e.Borrowing, prio, wl.CreationTimestamp.Unix()}
		if _, ok := groups[tk]; !ok {
			order = append(order, tk)
		}
		groups[tk] = append(groups[tk], k)
		cqOf[k] = e.ClusterQueue
	}
	var out [][]string
	for _, tk := range order {
		g := groups[tk]
		cqs := map[string]bool{}
		for _, k := range g {
			cqs[cqOf[k]] = true
		}
		if len(cqs) > 1 {
			sort.Strings(g)
			out = append(out, g)
		}
	}
	return out
}

func (s *session) releaseVictim(key string) error {
	wl, err := s.get(key)
	if err != nil {
		return err
	}
	if !isEvicted(wl) || !workload.HasQuotaReservation(wl) {
		return fmt.Errorf("preempted workload %s is not evicted with its quota reserved", key)
	}
	return s.w.releaseEvicted(s.ctx, s.log, wl)
}

func (s *session) get(key string) (*kueue.Workload, error) {
	ns, name, ok := splitKey(key)
	if !ok {
		return nil, fmt.Errorf("%q is not ns/name", key)
	}
	var wl kueue.Workload
	if err := s.w.cl.Get(s.ctx, types.NamespacedName{Namespace: ns, Name: name}, &wl); err != nil {
		return nil, err
	}
	return &wl, nil
}

func splitKey(key string) (string, string, bool) {
	for i := 0; i < len(key); i++ {
		if key[i] == '/' {
			return key[:i], key[i+1:], i > 0 && i < len(key)-1
		}
	}
	return "", "", false
}

func refKey(v any) string {
	if r, ok := v.(klog.ObjectRef); ok {
		return r.Namespace + "/" + r.Name
	}
	return fmt.Sprint(v)
}

// The order Kueue's scheduler compares heads in (scheduler.New's default).
var queueOrdering = workload.Ordering{PodsReadyRequeuingTimestamp: configapi.EvictionTimestamp}

// fairTies lists, per tournament of the fair-sharing iterator (one per pop),
// the winner and the heads of the other ClusterQueues of its cohort that
// equal it: the same logged share at that cohort, effective priority and
// queue-order timestamp (see top). Each group once, sorted.
func (s *session) fairTies(tournaments []map[string]any, evaluated map[string]map[string]any) ([][]string, error) {
	var out [][]string
	seen := map[string]bool{}
	for _, t := range tournaments {
		winner := refKey(t["winningWorkload"])
		cohort, ok := t["cohort"].(klog.ObjectRef)
		if !ok {
			return nil, fmt.Errorf("tournament won by %s: no cohort in Kueue's log", winner)
		}
		// drsValues is a slice of scheduler.drsLogEntry (unexported); its JSON
		// form is the exported one.
		b, err := json.Marshal(t["drsValues"])
		if err != nil {
			return nil, fmt.Errorf("tournament won by %s: %w", winner, err)
		}
		var values []struct{ ParentCohort, Workload, DRS string }
		if err := json.Unmarshal(b, &values); err != nil {
			return nil, fmt.Errorf("tournament won by %s: reading the shares: %w", winner, err)
		}
		share := map[string]string{}
		for _, v := range values {
			if v.ParentCohort == cohort.Name {
				share[v.Workload] = v.DRS
			}
		}
		ws, ok := share[winner]
		if !ok {
			return nil, fmt.Errorf("tournament won by %s: no share of it at cohort %s", winner, cohort.Name)
		}
		group := []string{winner}
		var w *kueue.Workload
		for k, d := range share {
			if k == winner || d != ws {
				continue
			}
			// Only the heads of ClusterQueues directly in the cohort compete
			// with the winner there.
			cq := s.cqs[entryFromLog(evaluated[k]).ClusterQueue]
			if cq == nil || string(cq.Spec.CohortName) != cohort.Name {
				continue
			}
			if w == nil {
				if w, err = s.get(winner); err != nil {
					return nil, err
				}
			}
			o, err := s.get(k)
			if err != nil {
				return nil, err
			}
			if priority.EffectivePriority(s.log, o) == priority.EffectivePriority(s.log, w) &&
				queueOrdering.GetQueueOrderTimestamp(o).Equal(queueOrdering.GetQueueOrderTimestamp(w)) {
				group = append(group, k)
			}
		}
		if len(group) < 2 {
			continue
		}
		sort.Strings(group)
		if id := fmt.Sprint(group); !seen[id] {
			seen[id] = true
			out = append(out, group)
		}
	}
	return out, nil
}
