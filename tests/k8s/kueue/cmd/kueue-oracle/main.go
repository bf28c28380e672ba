// Command kueue-oracle runs the real Kueue v0.19.2 scheduler in-process,
// deterministically, against a cluster state described as JSON (or YAML) on
// stdin, and writes what Kueue decided as JSON on stdout.
//
// One scheduling cycle at a time is driven through Kueue's own (unexported)
// Scheduler.schedule method, reached via shim_linkname.go; build with
// build.sh.
//
// The input and output formats are described in tests/support/kueue_oracle.py.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"
	testingclock "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueuev1beta1 "sigs.k8s.io/kueue/apis/kueue/v1beta1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	qcache "sigs.k8s.io/kueue/pkg/cache/queue"
	schdcache "sigs.k8s.io/kueue/pkg/cache/scheduler"
	"sigs.k8s.io/kueue/pkg/resources"
	"sigs.k8s.io/kueue/pkg/scheduler"
	"sigs.k8s.io/kueue/pkg/scheduler/flavorassigner"
	"sigs.k8s.io/kueue/pkg/scheduler/preemption"
	preemptexpectations "sigs.k8s.io/kueue/pkg/scheduler/preemption/expectations"
	"sigs.k8s.io/kueue/pkg/util/routine"
	utiltesting "sigs.k8s.io/kueue/pkg/util/testing"
	"sigs.k8s.io/kueue/pkg/webhooks"
	"sigs.k8s.io/kueue/pkg/workload"
)

const kueueVersion = "v0.19.2"

// ---------------------------------------------------------------- input

// Input is the document read from stdin.
type Input struct {
	// Mode is "schedule" (default): run Kueue scheduling cycles, or
	// "preempt": call the Preemptor directly with a given flavor assignment
	// (what pkg/scheduler/preemption's tests do).
	Mode string `json:"mode,omitempty"`
	// Now is the fake clock's start time (default 2025-01-01T00:00:00Z).
	Now *metav1.Time `json:"now,omitempty"`
	// FeatureGates overrides Kueue feature gates (defaults as in v0.19.2).
	FeatureGates map[string]bool `json:"featureGates,omitempty"`
	// FairSharing enables fair sharing when present (Configuration.fairSharing).
	FairSharing *configapi.FairSharing `json:"fairSharing,omitempty"`
	// AdmissionFairSharing, as Configuration.admissionFairSharing.
	AdmissionFairSharing *configapi.AdmissionFairSharing `json:"admissionFairSharing,omitempty"`
	// ApplyDefaults applies the CRD (OpenAPI) defaults of the Kueue CRDs,
	// like an API server would. Default true.
	ApplyDefaults *bool `json:"applyDefaults,omitempty"`

	Namespaces              []json.RawMessage `json:"namespaces,omitempty"`
	ResourceFlavors         []json.RawMessage `json:"resourceFlavors,omitempty"`
	Cohorts                 []json.RawMessage `json:"cohorts,omitempty"`
	ClusterQueues           []json.RawMessage `json:"clusterQueues,omitempty"`
	LocalQueues             []json.RawMessage `json:"localQueues,omitempty"`
	WorkloadPriorityClasses []json.RawMessage `json:"workloadPriorityClasses,omitempty"`
	PriorityClasses         []json.RawMessage `json:"priorityClasses,omitempty"`
	Workloads               []json.RawMessage `json:"workloads,omitempty"`
	// Objects: any other object known to the scheme (LimitRange, ...),
	// each with apiVersion and kind.
	Objects []json.RawMessage `json:"objects,omitempty"`

	// Cycles is the number of scheduling cycles (default 1).
	Cycles int `json:"cycles,omitempty"`
	// UntilStable runs cycles until a cycle changes nothing (bounded by MaxCycles).
	UntilStable bool `json:"untilStable,omitempty"`
	// MaxCycles bounds UntilStable (default 50).
	MaxCycles int `json:"maxCycles,omitempty"`
	// CycleInterval advances the fake clock between cycles (default 1s).
	CycleInterval *metav1.Duration `json:"cycleInterval,omitempty"`
	// SimulateEvictions: between cycles, complete the evictions that Kueue
	// issued (as the job + workload controllers would): release the quota of
	// evicted workloads and requeue them. Default true.
	SimulateEvictions *bool `json:"simulateEvictions,omitempty"`
	// IncludeEvents adds the recorded Kubernetes events to the output.
	IncludeEvents bool `json:"includeEvents,omitempty"`
	// IncludeObjects adds the full final Workload objects to the output.
	IncludeObjects bool `json:"includeObjects,omitempty"`

	// Preemption is required for mode "preempt".
	Preemption *PreemptionInput `json:"preemption,omitempty"`
}

// PreemptionInput drives Preemptor.GetTargets + IssuePreemptions directly.
type PreemptionInput struct {
	// Incoming is the preemptor Workload (not added to the cluster).
	Incoming json.RawMessage `json:"incoming"`
	// ClusterQueue the incoming workload is being scheduled in.
	ClusterQueue string `json:"clusterQueue"`
	// Assignment is the flavor assignment being tried.
	Assignment AssignmentInput `json:"assignment"`
}

type AssignmentInput struct {
	PodSets []PodSetAssignmentInput `json:"podSets"`
}

type PodSetAssignmentInput struct {
	Name    string                           `json:"name,omitempty"`
	Count   int32                            `json:"count,omitempty"`
	Flavors map[string]FlavorAssignmentInput `json:"flavors"`
}

type FlavorAssignmentInput struct {
	Name string `json:"name"`
	// Mode: Fit | Preempt | NoFit | DeferredFit
	Mode string `json:"mode"`
}

// ---------------------------------------------------------------- output

type Output struct {
	KueueVersion     string                                               `json:"kueueVersion"`
	Mode             string                                               `json:"mode"`
	FeatureGates     map[string]bool                                      `json:"featureGates,omitempty"`
	ValidationErrors []string                                             `json:"validationErrors,omitempty"`
	Cycles           []CycleOutput                                        `json:"cycles,omitempty"`
	Stable           *bool                                                `json:"stable,omitempty"`
	Workloads        []WorkloadOutput                                     `json:"workloads"`
	Assignments      map[string]*kueue.Admission                          `json:"assignments"`
	Left             map[kueue.ClusterQueueReference][]workload.Reference `json:"left"`
	InadmissibleLeft map[kueue.ClusterQueueReference][]workload.Reference `json:"inadmissibleLeft"`
	ClusterQueues    map[string]*CQOutput                                 `json:"clusterQueues,omitempty"`
	Preemption       *PreemptionOutput                                    `json:"preemption,omitempty"`
	Events           []EventOutput                                        `json:"events,omitempty"`
	Objects          []kueue.Workload                                     `json:"objects,omitempty"`
}

type CycleOutput struct {
	Cycle int `json:"cycle"`
	// KeepGoing is Kueue's own signal: true if something was admitted.
	KeepGoing bool          `json:"keepGoing"`
	Entries   []EntryOutput `json:"entries"`
	// Admitted lists workloads that got quota reserved in this cycle.
	Admitted []string `json:"admitted,omitempty"`
	// Preempted lists the victims whose eviction this cycle issued.
	Preempted []VictimOutput `json:"preempted,omitempty"`
	// EvictionsCompleted lists the evicted workloads whose quota was
	// released after this cycle (SimulateEvictions).
	EvictionsCompleted []string `json:"evictionsCompleted,omitempty"`
}

// EntryOutput is Kueue's own per-head record for the cycle (the values it
// logs in "Workload evaluated for admission").
type EntryOutput struct {
	Workload     string `json:"workload"`
	ClusterQueue string `json:"clusterQueue"`
	// Status: assumed | nominated | skipped | notNominated | evicted | preemptionGated | ...
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
	// Mode: representative mode of the flavor assignment (Fit, Preempt, NoFit, DeferredFit).
	Mode string `json:"mode,omitempty"`
	// Borrowing is flavorassigner.Assignment.Borrowing: 0 = no borrowing,
	// >0 = height of the smallest cohort subtree that provides the quota.
	Borrowing         int               `json:"borrowing"`
	PodSets           []PodSetOutput    `json:"podSets,omitempty"`
	PreemptionTargets []string          `json:"preemptionTargets,omitempty"`
	Usage             map[string]string `json:"usage,omitempty"`
}

type PodSetOutput struct {
	Name    string                  `json:"name"`
	Count   int32                   `json:"count"`
	Flavors map[string]FlavorOutput `json:"flavors,omitempty"`
	Message string                  `json:"message,omitempty"`
}

type FlavorOutput struct {
	Flavor string `json:"flavor"`
	Mode   string `json:"mode"`
}

type VictimOutput struct {
	Workload  string `json:"workload"`
	Preemptor string `json:"preemptor,omitempty"`
	// Reason is the Preempted condition reason Kueue set
	// (InClusterQueue, InCohortReclamation, InCohortFairSharing,
	// InCohortReclaimWhileBorrowing, ...).
	Reason  string `json:"reason"`
	Message string `json:"message,omitempty"`
}

type WorkloadOutput struct {
	Name string `json:"name"`
	// State: Admitted | QuotaReserved | Pending | Evicted | Finished | Inactive
	State        string            `json:"state"`
	ClusterQueue string            `json:"clusterQueue,omitempty"`
	Admission    *kueue.Admission  `json:"admission,omitempty"`
	Flavors      map[string]string `json:"flavors,omitempty"`
	// Borrowing: the workload's ClusterQueue is borrowing (usage above
	// nominal quota) on at least one flavor/resource this workload uses.
	Borrowing        bool                  `json:"borrowing"`
	Priority         int32                 `json:"priority"`
	PendingReason    string                `json:"pendingReason,omitempty"`
	PendingMessage   string                `json:"pendingMessage,omitempty"`
	Preempted        *VictimOutput         `json:"preempted,omitempty"`
	EvictedReason    string                `json:"evictedReason,omitempty"`
	Conditions       []metav1.Condition    `json:"conditions,omitempty"`
	ResourceRequests []kueue.PodSetRequest `json:"resourceRequests,omitempty"`
}

type CQOutput struct {
	Cohort             string              `json:"cohort,omitempty"`
	Active             bool                `json:"active"`
	ReservingWorkloads int                 `json:"reservingWorkloads"`
	AdmittedWorkloads  int                 `json:"admittedWorkloads"`
	FlavorsUsage       []kueue.FlavorUsage `json:"flavorsUsage,omitempty"`
	Borrowing          map[string]bool     `json:"borrowing,omitempty"`
}

type PreemptionOutput struct {
	Targets   []VictimOutput `json:"targets"`
	Preempted int            `json:"preempted"`
	Failed    int            `json:"failed"`
}

type EventOutput struct {
	Object  string `json:"object"`
	Type    string `json:"type"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// ---------------------------------------------------------------- log capture

const evaluatedMsg = "Workload evaluated for admission"

// recordedMessages are the log lines the sink keeps: the end-of-cycle record
// per head (both modes), and, for the session mode, the order in which the
// scheduler processes the heads and the preemptions it issues (with the
// preemptor, which the Workload objects do not name).
var recordedMessages = map[string]bool{
	evaluatedMsg:                      true,
	"Attempting to schedule workload": true,
	"Preempted":                       true,
	drsMsg:                            true,
}

// drsMsg: the fair-sharing iterator's record of one tournament (V(4)), the
// dominant resource shares it compared; the session reads its ties from it.
const drsMsg = "DominantResourceShare values used during tournament"

// entrySink is a logr.LogSink that records the structured values Kueue's
// scheduler logs for every head at the end of a cycle
// ("Workload evaluated for admission", V(3)/V(4)). Optionally tees all
// log lines to stderr as text.
type entrySink struct {
	mu      *sync.Mutex
	entries *[]map[string]any
	kv      []any
	name    string
	verb    int
	tee     io.Writer
}

func (s *entrySink) Init(logr.RuntimeInfo) {}
func (s *entrySink) Enabled(level int) bool {
	return level <= 4 || level <= s.verb
}
func (s *entrySink) Info(level int, msg string, kv ...any) {
	if s.tee != nil && level <= s.verb {
		s.mu.Lock()
		fmt.Fprintf(s.tee, "I%d %s %q %v %v\n", level, s.name, msg, s.kv, kv)
		s.mu.Unlock()
	}
	if !recordedMessages[msg] {
		return
	}
	m := map[string]any{"msg": msg}
	all := append(append([]any{}, s.kv...), kv...)
	for i := 0; i+1 < len(all); i += 2 {
		if k, ok := all[i].(string); ok {
			m[k] = all[i+1]
		}
	}
	s.mu.Lock()
	*s.entries = append(*s.entries, m)
	s.mu.Unlock()
}
func (s *entrySink) Error(err error, msg string, kv ...any) {
	if s.tee != nil {
		s.mu.Lock()
		fmt.Fprintf(s.tee, "E %s %q err=%v %v %v\n", s.name, msg, err, s.kv, kv)
		s.mu.Unlock()
	}
}
func (s *entrySink) WithValues(kv ...any) logr.LogSink {
	c := *s
	c.kv = append(append([]any{}, s.kv...), kv...)
	return &c
}
func (s *entrySink) WithName(name string) logr.LogSink {
	c := *s
	if c.name == "" {
		c.name = name
	} else {
		c.name = c.name + "/" + name
	}
	return &c
}

// ---------------------------------------------------------------- decoding

var (
	scheme    = runtime.NewScheme()
	kueueV1b2 = kueue.SchemeGroupVersion
	kueueV1b1 = kueuev1beta1.SchemeGroupVersion
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(kueue.AddToScheme(scheme))
	utilruntime.Must(kueuev1beta1.AddToScheme(scheme))
}

func setDefault(m map[string]any, key string, val any) {
	if _, ok := m[key]; !ok {
		m[key] = val
	}
}

func child(m map[string]any, key string) map[string]any {
	if v, ok := m[key].(map[string]any); ok {
		return v
	}
	return nil
}

// applyCRDDefaults mirrors the +kubebuilder:default markers of the Kueue
// CRDs (v1beta1 and v1beta2 share the field names involved), i.e. what the
// API server's structural defaulting does on create.
func applyCRDDefaults(kind string, obj map[string]any) {
	spec := child(obj, "spec")
	if spec == nil {
		spec = map[string]any{}
		obj["spec"] = spec
	}
	switch kind {
	case "ClusterQueue":
		setDefault(spec, "queueingStrategy", "BestEffortFIFO")
		setDefault(spec, "stopPolicy", "None")
		setDefault(spec, "flavorFungibility", map[string]any{})
		ff := child(spec, "flavorFungibility")
		if ff != nil {
			setDefault(ff, "whenCanBorrow", "MayStopSearch")
			setDefault(ff, "whenCanPreempt", "TryNextFlavor")
		}
		setDefault(spec, "preemption", map[string]any{})
		if p := child(spec, "preemption"); p != nil {
			setDefault(p, "reclaimWithinCohort", "Never")
			setDefault(p, "withinClusterQueue", "Never")
			setDefault(p, "borrowWithinCohort", map[string]any{})
			if b := child(p, "borrowWithinCohort"); b != nil {
				setDefault(b, "policy", "Never")
			}
		}
		if fs := child(spec, "fairSharing"); fs != nil {
			setDefault(fs, "weight", "1")
		}
	case "Cohort":
		if fs := child(spec, "fairSharing"); fs != nil {
			setDefault(fs, "weight", "1")
		}
	case "LocalQueue":
		setDefault(spec, "stopPolicy", "None")
		if fs := child(spec, "fairSharing"); fs != nil {
			setDefault(fs, "weight", "1")
		}
	case "Workload":
		setDefault(spec, "active", true)
		if ps, ok := spec["podSets"].([]any); ok {
			for _, p := range ps {
				if pm, ok := p.(map[string]any); ok {
					setDefault(pm, "name", "main")
					setDefault(pm, "count", 1)
				}
			}
		}
		if st := child(obj, "status"); st != nil {
			if adm := child(st, "admission"); adm != nil {
				if psas, ok := adm["podSetAssignments"].([]any); ok {
					for _, p := range psas {
						if pm, ok := p.(map[string]any); ok {
							setDefault(pm, "name", "main")
						}
					}
				}
			}
		}
	}
}

var defaultGV = map[string]schema.GroupVersion{
	"Namespace":     corev1.SchemeGroupVersion,
	"PriorityClass": schedulingv1.SchemeGroupVersion,
}

// decodeObject decodes one object. kind is the default kind for the list it
// came from ("" for the generic objects list). Kueue v1beta1 objects are
// converted to v1beta2 (the version the scheduler uses).
func decodeObject(raw json.RawMessage, kind string, defaults bool) (ctrl.Object, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if k, ok := m["kind"].(string); ok && k != "" {
		kind = k
	}
	if kind == "" {
		return nil, errors.New("object without kind")
	}
	m["kind"] = kind
	gv := kueueV1b2
	if d, ok := defaultGV[kind]; ok {
		gv = d
	}
	if av, ok := m["apiVersion"].(string); ok && av != "" {
		var err error
		if gv, err = schema.ParseGroupVersion(av); err != nil {
			return nil, err
		}
	}
	m["apiVersion"] = gv.String()
	if defaults && gv.Group == kueue.SchemeGroupVersion.Group {
		applyCRDDefaults(kind, m)
	}
	gvk := gv.WithKind(kind)
	obj, err := scheme.New(gvk)
	if err != nil {
		return nil, fmt.Errorf("kind %s: %w", gvk, err)
	}
	b, _ := json.Marshal(m)
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(obj); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", gvk, err)
	}
	if gv == kueueV1b1 {
		conv, ok := obj.(conversion.Convertible)
		if !ok {
			return nil, fmt.Errorf("%s has no conversion to v1beta2", gvk)
		}
		hubObj, err := scheme.New(kueueV1b2.WithKind(kind))
		if err != nil {
			return nil, err
		}
		hub := hubObj.(conversion.Hub)
		if err := conv.ConvertTo(hub); err != nil {
			return nil, fmt.Errorf("converting %s to v1beta2: %w", gvk, err)
		}
		obj = hub
		obj.GetObjectKind().SetGroupVersionKind(kueueV1b2.WithKind(kind))
	}
	co, ok := obj.(ctrl.Object)
	if !ok {
		return nil, fmt.Errorf("%s is not a client.Object", gvk)
	}
	return co, nil
}

func decodeList(raws []json.RawMessage, kind string, defaults bool) ([]ctrl.Object, error) {
	var out []ctrl.Object
	for i, r := range raws {
		o, err := decodeObject(r, kind, defaults)
		if err != nil {
			return nil, fmt.Errorf("%s #%d: %w", kind, i, err)
		}
		out = append(out, o)
	}
	return out, nil
}

// ---------------------------------------------------------------- main

func main() {
	verbosity := flag.Int("v", -1, "tee Kueue's logs up to this verbosity to stderr (-1: off)")
	pretty := flag.Bool("pretty", false, "indent JSON output")
	sessionMode := flag.Bool("session", false, "JSON lines: a setup document, then requests, one answer line each (session.go)")
	cpuProfile := flag.String("cpuprofile", "", "write a Go CPU profile of the session to this file (go tool pprof)")
	flag.Parse()
	if *sessionMode {
		os.Exit(profiled(*cpuProfile, func() int { return runSession(os.Stdin, os.Stdout, *verbosity) }))
	}
	if *cpuProfile != "" {
		fatal(errors.New("--cpuprofile profiles a --session run"))
	}

	raw, err := io.ReadAll(os.Stdin)
	if err != nil {
		fatal(err)
	}
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		fatal(fmt.Errorf("input is neither JSON nor YAML: %w", err))
	}
	var in Input
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		fatal(fmt.Errorf("parsing input: %w", err))
	}
	out, err := run(&in, *verbosity)
	if err != nil {
		fatal(err)
	}
	enc := json.NewEncoder(os.Stdout)
	if *pretty {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(out); err != nil {
		fatal(err)
	}
}

// profiled runs f, under a CPU profile written to file when file is set: the
// session is where the time goes (a month of scheduling calls).
func profiled(file string, f func() int) int {
	if file == "" {
		return f()
	}
	pf, err := os.Create(file)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kueue-oracle: %v\n", err)
		return 1
	}
	if err := pprof.StartCPUProfile(pf); err != nil {
		fmt.Fprintf(os.Stderr, "kueue-oracle: %v\n", err)
		return 1
	}
	code := f()
	pprof.StopCPUProfile()
	if err := pf.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "kueue-oracle: writing the CPU profile: %v\n", err)
		return 1
	}
	return code
}

func fatal(err error) {
	fmt.Fprintf(os.Stderr, "kueue-oracle: %v\n", err)
	os.Exit(1)
}

type world struct {
	in         *Input
	now        time.Time
	clock      *testingclock.FakeClock
	cl         ctrl.Client
	cache      *schdcache.Cache
	queues     *qcache.Manager
	requeuer   interface{ ProcessRequeues(context.Context) int }
	recorder   *utiltesting.EventRecorder
	sched      *scheduler.Scheduler
	wg         *sync.WaitGroup
	entries    []map[string]any
	mu         sync.Mutex
	sink       *entrySink
	cqs        []*kueue.ClusterQueue
	lqs        []kueue.LocalQueue
	wls        []kueue.Workload
	rfs        []*kueue.ResourceFlavor
	cohorts    []*kueue.Cohort
	others     []ctrl.Object
	validation []string
	wpcValue   map[string]int32
	pcValue    map[string]int32
	// observe, when set (session mode), sees every Workload whose status was
	// written, right after the write.
	observe func(*kueue.Workload)
}

func run(in *Input, verbosity int) (*Output, error) {
	if in.Mode == "" {
		in.Mode = "schedule"
	}
	if in.Mode != "schedule" && in.Mode != "preempt" {
		return nil, fmt.Errorf("unknown mode %q", in.Mode)
	}
	if len(in.FeatureGates) > 0 {
		if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(in.FeatureGates); err != nil {
			return nil, fmt.Errorf("feature gates: %w", err)
		}
	}
	w, ctx, err := newWorld(in, verbosity)
	if err != nil {
		return nil, err
	}
	logger := ctrllog.FromContext(ctx)

	out := &Output{KueueVersion: kueueVersion, Mode: in.Mode, FeatureGates: in.FeatureGates, ValidationErrors: w.validation}
	if in.Mode == "preempt" {
		err = w.runPreempt(ctx, out)
	} else {
		err = w.runSchedule(ctx, logger, out)
	}
	if err != nil {
		return nil, err
	}
	if in.IncludeEvents {
		for _, e := range w.recorder.RecordedEvents {
			out.Events = append(out.Events, EventOutput{Object: e.Key.String(), Type: e.EventType, Reason: e.Reason, Message: e.Message})
		}
	}
	return out, nil
}

// newWorld decodes and validates the input's objects, with a fake clock at
// its `now` and a logger that records what the modes read (entrySink).
func newWorld(in *Input, verbosity int) (*world, context.Context, error) {
	w := &world{in: in, now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	if in.Now != nil {
		w.now = in.Now.Time
	}
	w.clock = testingclock.NewFakeClock(w.now)
	w.sink = &entrySink{mu: &w.mu, entries: &w.entries, verb: verbosity}
	if verbosity >= 0 {
		w.sink.tee = os.Stderr
	}
	logger := logr.New(w.sink)
	ctrllog.SetLogger(logger)
	klog.SetLogger(logger)
	ctx := ctrllog.IntoContext(context.Background(), logger)

	if err := w.decode(); err != nil {
		return nil, nil, err
	}
	w.validate()
	return w, ctx, nil
}

func (w *world) decode() error {
	defaults := w.in.ApplyDefaults == nil || *w.in.ApplyDefaults
	nsObjs, err := decodeList(w.in.Namespaces, "Namespace", defaults)
	if err != nil {
		return err
	}
	rfObjs, err := decodeList(w.in.ResourceFlavors, "ResourceFlavor", defaults)
	if err != nil {
		return err
	}
	for _, o := range rfObjs {
		w.rfs = append(w.rfs, o.(*kueue.ResourceFlavor))
	}
	coObjs, err := decodeList(w.in.Cohorts, "Cohort", defaults)
	if err != nil {
		return err
	}
	for _, o := range coObjs {
		w.cohorts = append(w.cohorts, o.(*kueue.Cohort))
	}
	cqObjs, err := decodeList(w.in.ClusterQueues, "ClusterQueue", defaults)
	if err != nil {
		return err
	}
	for _, o := range cqObjs {
		w.cqs = append(w.cqs, o.(*kueue.ClusterQueue))
	}
	lqObjs, err := decodeList(w.in.LocalQueues, "LocalQueue", defaults)
	if err != nil {
		return err
	}
	for _, o := range lqObjs {
		w.lqs = append(w.lqs, *o.(*kueue.LocalQueue))
	}
	wpcObjs, err := decodeList(w.in.WorkloadPriorityClasses, "WorkloadPriorityClass", defaults)
	if err != nil {
		return err
	}
	pcObjs, err := decodeList(w.in.PriorityClasses, "PriorityClass", defaults)
	if err != nil {
		return err
	}
	wlObjs, err := decodeList(w.in.Workloads, "Workload", defaults)
	if err != nil {
		return err
	}
	otherObjs, err := decodeList(w.in.Objects, "", defaults)
	if err != nil {
		return err
	}

	// Priorities: the job integrations copy the priority class value into
	// spec.priority when they create the Workload; do the same when missing.
	w.wpcValue = map[string]int32{}
	for _, o := range wpcObjs {
		c := o.(*kueue.WorkloadPriorityClass)
		w.wpcValue[c.Name] = c.Value
	}
	w.pcValue = map[string]int32{}
	for _, o := range pcObjs {
		c := o.(*schedulingv1.PriorityClass)
		w.pcValue[c.Name] = c.Value
	}
	for _, o := range wlObjs {
		wl := o.(*kueue.Workload)
		if err := w.resolvePriority(wl); err != nil {
			return err
		}
		w.wls = append(w.wls, *wl)
	}

	// Namespaces: keep the given ones, and create missing referenced ones
	// without labels.
	have := map[string]bool{}
	for _, o := range nsObjs {
		have[o.GetName()] = true
	}
	var need []string
	for _, q := range w.lqs {
		need = append(need, q.Namespace)
	}
	for _, wl := range w.wls {
		need = append(need, wl.Namespace)
	}
	for _, n := range need {
		if n != "" && !have[n] {
			have[n] = true
			nsObjs = append(nsObjs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}})
		}
	}
	w.others = append(w.others, nsObjs...)
	w.others = append(w.others, wpcObjs...)
	w.others = append(w.others, pcObjs...)
	w.others = append(w.others, otherObjs...)
	return nil
}

// resolvePriority copies the priority class value into spec.priority when
// missing, as the job integrations do when they create the Workload.
func (w *world) resolvePriority(wl *kueue.Workload) error {
	if wl.Spec.Priority != nil || wl.Spec.PriorityClassRef == nil {
		return nil
	}
	ref := wl.Spec.PriorityClassRef
	var v int32
	var ok bool
	if ref.Kind == kueue.PodPriorityClassKind {
		v, ok = w.pcValue[ref.Name]
	} else {
		v, ok = w.wpcValue[ref.Name]
	}
	if !ok {
		return fmt.Errorf("workload %s/%s: unknown priority class %q", wl.Namespace, wl.Name, ref.Name)
	}
	wl.Spec.Priority = &v
	return nil
}

// validate runs Kueue's own webhook validation and reports (does not fail).
func (w *world) validate() {
	for _, cq := range w.cqs {
		if errs := webhooks.ValidateClusterQueue(cq); len(errs) > 0 {
			w.validation = append(w.validation, fmt.Sprintf("ClusterQueue %s: %v", cq.Name, errs.ToAggregate()))
		}
	}
	for _, rf := range w.rfs {
		if errs := webhooks.ValidateResourceFlavor(rf); len(errs) > 0 {
			w.validation = append(w.validation, fmt.Sprintf("ResourceFlavor %s: %v", rf.Name, errs.ToAggregate()))
		}
	}
	for i := range w.wls {
		if errs := webhooks.ValidateWorkload(&w.wls[i], nil); len(errs) > 0 {
			w.validation = append(w.validation, fmt.Sprintf("Workload %s/%s: %v", w.wls[i].Namespace, w.wls[i].Name, errs.ToAggregate()))
		}
	}
}

func (w *world) buildClient(wls []kueue.Workload, lqs []kueue.LocalQueue) ctrl.Client {
	var objs []ctrl.Object
	objs = append(objs, w.others...)
	for _, rf := range w.rfs {
		objs = append(objs, rf.DeepCopy())
	}
	for _, c := range w.cohorts {
		objs = append(objs, c.DeepCopy())
	}
	// A plain object tracker: the default one keeps managedFields (which the
	// fake client strips from every object it returns, and which no SSA patch
	// reads: TreatSSAAsStrategicMerge turns them into strategic merges) and
	// builds a REST mapper of the whole scheme on every write, a tenth of a
	// session's time.
	tracker := clienttesting.NewObjectTracker(scheme, serializer.NewCodecFactory(scheme).UniversalDecoder())
	return utiltesting.NewClientBuilder().
		WithObjectTracker(tracker).
		WithLists(&kueue.WorkloadList{Items: wls}, &kueue.LocalQueueList{Items: lqs}).
		WithObjects(objs...).
		WithStatusSubresource(&kueue.Workload{}).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourcePatch: func(ctx context.Context, c ctrl.Client, sub string, obj ctrl.Object, patch ctrl.Patch, opts ...ctrl.SubResourcePatchOption) error {
				err := utiltesting.TreatSSAAsStrategicMerge(ctx, c, sub, obj, patch, opts...)
				w.observed(err, obj)
				return err
			},
			SubResourceUpdate: func(ctx context.Context, c ctrl.Client, sub string, obj ctrl.Object, opts ...ctrl.SubResourceUpdateOption) error {
				err := c.SubResource(sub).Update(ctx, obj, opts...)
				w.observed(err, obj)
				return err
			},
		}).
		Build()
}

func (w *world) observed(err error, obj ctrl.Object) {
	if wl, ok := obj.(*kueue.Workload); ok && err == nil && w.observe != nil {
		w.observe(wl)
	}
}

// addOtherKueueObjects feeds AdmissionChecks and Topologies given in
// "objects" to the cache, as Kueue's controllers would.
func (w *world) addOtherKueueObjects(log logr.Logger) {
	for _, o := range w.others {
		switch v := o.(type) {
		case *kueue.AdmissionCheck:
			w.cache.AddOrUpdateAdmissionCheck(log, v)
		case *kueue.Topology:
			w.cache.AddOrUpdateTopology(log, v)
		}
	}
}

func (w *world) cacheOptions() []schdcache.Option {
	var opts []schdcache.Option
	if w.in.FairSharing != nil {
		opts = append(opts, schdcache.WithFairSharing(true))
	}
	if w.in.AdmissionFairSharing != nil {
		opts = append(opts, schdcache.WithAdmissionFairSharing(w.in.AdmissionFairSharing))
	}
	return opts
}

func (w *world) runSchedule(ctx context.Context, logger logr.Logger, out *Output) error {
	if err := w.startScheduler(ctx, logger); err != nil {
		return err
	}
	return w.runCycles(ctx, logger, out)
}

// startScheduler builds the fake API client, Kueue's cache and queue manager
// fed with the decoded objects (as Kueue's controllers would), and the
// scheduler whose admissions the world can wait for.
func (w *world) startScheduler(ctx context.Context, log logr.Logger) error {
	w.cl = w.buildClient(w.wls, w.lqs)
	w.recorder = &utiltesting.EventRecorder{}
	w.cache = schdcache.New(w.cl, w.cacheOptions()...)
	expectations := preemptexpectations.New()
	qopts := []qcache.Option{qcache.WithPreemptionExpectations(expectations)}
	if w.in.AdmissionFairSharing != nil {
		qopts = append(qopts, qcache.WithAdmissionFairSharing(w.in.AdmissionFairSharing))
	}
	qm, requeuer := qcache.NewManagerForUnitTestsWithRequeuer(w.cl, w.cache, qopts...)
	w.queues, w.requeuer = qm, requeuer

	for i := range w.lqs {
		if err := w.queues.AddLocalQueue(ctx, &w.lqs[i]); err != nil {
			return fmt.Errorf("adding LocalQueue %s/%s: %w", w.lqs[i].Namespace, w.lqs[i].Name, err)
		}
	}
	for _, rf := range w.rfs {
		w.cache.AddOrUpdateResourceFlavor(log, rf)
	}
	w.addOtherKueueObjects(log)
	for _, cq := range w.cqs {
		if err := w.cache.AddClusterQueue(ctx, cq); err != nil {
			return fmt.Errorf("adding ClusterQueue %s to cache: %w", cq.Name, err)
		}
		if err := w.queues.AddClusterQueue(ctx, cq); err != nil {
			return fmt.Errorf("adding ClusterQueue %s to queues: %w", cq.Name, err)
		}
		if err := w.cl.Create(ctx, cq.DeepCopy()); err != nil {
			return fmt.Errorf("creating ClusterQueue %s: %w", cq.Name, err)
		}
	}
	for _, c := range w.cohorts {
		if err := w.cache.AddOrUpdateCohort(c); err != nil {
			return fmt.Errorf("adding Cohort %s: %w", c.Name, err)
		}
		w.queues.AddOrUpdateCohort(ctx, c)
	}

	w.sched = scheduler.New(w.queues, w.cache, w.cl, w.recorder,
		scheduler.WithFairSharing(w.in.FairSharing),
		scheduler.WithAdmissionFairSharing(w.in.AdmissionFairSharing),
		scheduler.WithClock(nil, w.clock),
		scheduler.WithPreemptionExpectations(expectations))
	w.wg = &sync.WaitGroup{}
	kueueSetAdmissionRoutineWrapper(w.sched, routine.NewWrapper(
		func() { w.wg.Add(1) },
		func() { w.wg.Done() },
	))
	return nil
}

// cycle runs one Kueue scheduling cycle and waits for the admissions it
// started; Kueue's KeepGoing signal.
func (w *world) cycle(ctx context.Context) bool {
	w.mu.Lock()
	w.entries = nil
	w.mu.Unlock()
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	go w.queues.CleanUpOnContext(cctx)
	keepGoing := scheduleOnce(cctx, w.sched)
	w.wg.Wait()
	return keepGoing
}

// runCycles is the one-shot mode's loop (cycles, or untilStable).
func (w *world) runCycles(ctx context.Context, log logr.Logger, out *Output) error {

	cycles := w.in.Cycles
	if cycles <= 0 {
		cycles = 1
	}
	maxCycles := w.in.MaxCycles
	if maxCycles <= 0 {
		maxCycles = 50
	}
	if w.in.UntilStable {
		cycles = maxCycles
	}
	interval := time.Second
	if w.in.CycleInterval != nil {
		interval = w.in.CycleInterval.Duration
	}
	simulate := w.in.SimulateEvictions == nil || *w.in.SimulateEvictions

	stable := false
	for c := 1; c <= cycles; c++ {
		if c > 1 {
			w.clock.Step(interval)
		}
		if len(w.queues.Dump()) == 0 {
			// No heads: Kueue's scheduler would block waiting for work.
			stable = true
			break
		}
		before := w.snapshotWorkloads(ctx)
		keepGoing := w.cycle(ctx)

		co := CycleOutput{Cycle: c, KeepGoing: keepGoing}
		w.mu.Lock()
		for _, e := range w.entries {
			if e["msg"] == evaluatedMsg {
				co.Entries = append(co.Entries, entryFromLog(e))
			}
		}
		w.mu.Unlock()
		sort.SliceStable(co.Entries, func(i, j int) bool { return co.Entries[i].Workload < co.Entries[j].Workload })

		after := w.snapshotWorkloads(ctx)
		for _, k := range sortedKeys(after) {
			a := after[k]
			b, existed := before[k]
			if workload.HasQuotaReservation(a) && (!existed || !workload.HasQuotaReservation(b)) {
				co.Admitted = append(co.Admitted, k)
			}
			if isEvicted(a) && (!existed || !isEvicted(b)) {
				v := victimFrom(a)
				for _, e := range co.Entries {
					if slices.Contains(e.PreemptionTargets, k) {
						v.Preemptor = e.Workload
					}
				}
				co.Preempted = append(co.Preempted, v)
			}
		}
		changed := len(co.Admitted) > 0 || len(co.Preempted) > 0
		if simulate && c < cycles {
			done, err := w.completeEvictions(ctx, log)
			if err != nil {
				return err
			}
			co.EvictionsCompleted = done
			changed = changed || len(done) > 0
		}
		out.Cycles = append(out.Cycles, co)
		if w.in.UntilStable && !changed {
			stable = true
			break
		}
		if c < cycles {
			// What Kueue's background requeuer does between cycles: move
			// inadmissible workloads of notified ClusterQueues/Cohorts back
			// to the active queues. Not done after the last cycle, so the
			// output shows the state right after it (as Kueue's tests do).
			w.requeuer.ProcessRequeues(ctx)
		}
	}
	if w.in.UntilStable {
		out.Stable = &stable
	}
	return w.fillFinal(ctx, out)
}

// completeEvictions plays the part of the job and workload controllers for
// workloads Kueue evicted (e.g. preempted): the job is stopped, the quota
// reservation is released, the workload leaves the cache and goes back to
// its queue, and inadmissible workloads of its ClusterQueue are requeued.
func (w *world) completeEvictions(ctx context.Context, log logr.Logger) ([]string, error) {
	var list kueue.WorkloadList
	if err := w.cl.List(ctx, &list); err != nil {
		return nil, err
	}
	var done []string
	for i := range list.Items {
		wl := &list.Items[i]
		if !isEvicted(wl) || !workload.HasQuotaReservation(wl) {
			continue
		}
		if err := w.releaseEvicted(ctx, log, wl); err != nil {
			return nil, err
		}
		done = append(done, string(workload.Key(wl)))
	}
	sort.Strings(done)
	return done, nil
}

// releaseEvicted completes the eviction of one evicted workload that still
// holds its quota reservation (see completeEvictions).
func (w *world) releaseEvicted(ctx context.Context, log logr.Logger, wl *kueue.Workload) error {
	key := workload.Key(wl)
	ev := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted)
	workload.UnsetQuotaReservationWithCondition(wl, "Pending", ev.Message, w.clock.Now())
	if err := w.cl.Status().Update(ctx, wl); err != nil {
		return fmt.Errorf("releasing quota of %s: %w", key, err)
	}
	var fresh kueue.Workload
	if err := w.cl.Get(ctx, ctrl.ObjectKeyFromObject(wl), &fresh); err != nil {
		return err
	}
	w.queues.QueueAssociatedInadmissibleWorkloadsAfter(ctx, key, func() {
		_ = w.cache.DeleteWorkload(log, key)
		if workload.IsActive(&fresh) {
			if err := w.queues.AddOrUpdateWorkloadWithoutLock(log, fresh.DeepCopy()); err != nil {
				log.V(2).Info("requeue failed", "error", err)
			}
		}
	})
	return nil
}

func (w *world) snapshotWorkloads(ctx context.Context) map[string]*kueue.Workload {
	var list kueue.WorkloadList
	_ = w.cl.List(ctx, &list)
	m := map[string]*kueue.Workload{}
	for i := range list.Items {
		m[string(workload.Key(&list.Items[i]))] = &list.Items[i]
	}
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func isEvicted(wl *kueue.Workload) bool {
	return apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadEvicted)
}

func victimFrom(wl *kueue.Workload) VictimOutput {
	v := VictimOutput{Workload: string(workload.Key(wl))}
	if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadPreempted); c != nil && c.Status == metav1.ConditionTrue {
		v.Reason = c.Reason
		v.Message = c.Message
	} else if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted); c != nil {
		v.Reason = c.Reason
		v.Message = c.Message
	}
	return v
}

func entryFromLog(m map[string]any) EntryOutput {
	e := EntryOutput{}
	if r, ok := m["workload"].(klog.ObjectRef); ok {
		e.Workload = r.Namespace + "/" + r.Name
	}
	if r, ok := m["clusterQueue"].(klog.ObjectRef); ok {
		e.ClusterQueue = r.Name
	}
	e.Status = fmt.Sprint(m["status"])
	if e.Status == "" {
		// Kueue's entryStatus notNominated is the empty string.
		e.Status = "notNominated"
	}
	if s, ok := m["reason"].(string); ok {
		e.Message = s
	}
	if a, ok := m["nominatedAssignment"].(flavorassigner.Assignment); ok && len(a.PodSets) > 0 {
		e.Mode = a.RepresentativeMode().String()
		e.Borrowing = a.Borrowing
		for _, ps := range a.PodSets {
			po := PodSetOutput{Name: string(ps.Name), Count: ps.Count}
			for r, f := range ps.Flavors {
				if f == nil {
					continue
				}
				if po.Flavors == nil {
					po.Flavors = map[string]FlavorOutput{}
				}
				po.Flavors[string(r)] = FlavorOutput{Flavor: string(f.Name), Mode: f.Mode.String()}
			}
			if m := ps.Status.Message(); m != "" {
				po.Message = m
			}
			e.PodSets = append(e.PodSets, po)
		}
		if len(a.Usage.Quota) > 0 {
			e.Usage = map[string]string{}
			for fr, v := range a.Usage.Quota {
				e.Usage[string(fr.Flavor)+"/"+string(fr.Resource)] = quantityFormatter.AmountQuantityString(fr.Resource, v)
			}
		}
	}
	if refs, ok := m["preempted"].([]klog.ObjectRef); ok {
		for _, r := range refs {
			e.PreemptionTargets = append(e.PreemptionTargets, r.Namespace+"/"+r.Name)
		}
		sort.Strings(e.PreemptionTargets)
	}
	return e
}

func (w *world) fillFinal(ctx context.Context, out *Output) error {
	snap, err := w.cache.Snapshot(ctx)
	if err != nil {
		return err
	}
	out.Assignments = map[string]*kueue.Admission{}
	for _, cq := range snap.ClusterQueues() {
		for key, wi := range cq.Workloads {
			if wi.Obj.Status.Admission != nil {
				out.Assignments[string(key)] = wi.Obj.Status.Admission.DeepCopy()
			}
		}
	}
	out.Left = w.queues.Dump()
	out.InadmissibleLeft = w.queues.DumpInadmissible()
	for m := range out.Left {
		sort.Slice(out.Left[m], func(i, j int) bool { return out.Left[m][i] < out.Left[m][j] })
	}
	for m := range out.InadmissibleLeft {
		sort.Slice(out.InadmissibleLeft[m], func(i, j int) bool { return out.InadmissibleLeft[m][i] < out.InadmissibleLeft[m][j] })
	}

	out.ClusterQueues = map[string]*CQOutput{}
	for _, cq := range w.cqs {
		o := &CQOutput{Cohort: string(cq.Spec.CohortName), Active: w.cache.ClusterQueueActive(kueue.ClusterQueueReference(cq.Name))}
		if st, err := w.cache.Usage(cq); err == nil && st != nil {
			o.ReservingWorkloads = st.ReservingWorkloads
			o.AdmittedWorkloads = st.AdmittedWorkloads
			o.FlavorsUsage = st.ReservedResources
		}
		if cs := snap.ClusterQueue(kueue.ClusterQueueReference(cq.Name)); cs != nil {
			for _, rg := range cq.Spec.ResourceGroups {
				for _, fq := range rg.Flavors {
					for _, r := range fq.Resources {
						if cs.Borrowing(frOf(fq.Name, r.Name)) {
							if o.Borrowing == nil {
								o.Borrowing = map[string]bool{}
							}
							o.Borrowing[string(fq.Name)+"/"+string(r.Name)] = true
						}
					}
				}
			}
		}
		out.ClusterQueues[cq.Name] = o
	}

	var list kueue.WorkloadList
	if err := w.cl.List(ctx, &list); err != nil {
		return err
	}
	sort.Slice(list.Items, func(i, j int) bool { return workload.Key(&list.Items[i]) < workload.Key(&list.Items[j]) })
	for i := range list.Items {
		wl := &list.Items[i]
		o := WorkloadOutput{Name: string(workload.Key(wl)), Conditions: wl.Status.Conditions, ResourceRequests: wl.Status.ResourceRequests}
		if wl.Spec.Priority != nil {
			o.Priority = *wl.Spec.Priority
		}
		switch {
		case apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished):
			o.State = "Finished"
		case isEvicted(wl) && workload.HasQuotaReservation(wl):
			o.State = "Evicted"
		case workload.IsAdmitted(wl):
			o.State = "Admitted"
		case workload.HasQuotaReservation(wl):
			o.State = "QuotaReserved"
		case !workload.IsActive(wl):
			o.State = "Inactive"
		default:
			o.State = "Pending"
		}
		if wl.Status.Admission != nil {
			o.Admission = wl.Status.Admission
			o.ClusterQueue = string(wl.Status.Admission.ClusterQueue)
			o.Flavors = map[string]string{}
			cs := snap.ClusterQueue(wl.Status.Admission.ClusterQueue)
			for _, psa := range wl.Status.Admission.PodSetAssignments {
				for r, f := range psa.Flavors {
					o.Flavors[string(psa.Name)+"/"+string(r)] = string(f)
					if cs != nil && cs.Borrowing(frOf(f, r)) {
						o.Borrowing = true
					}
				}
			}
		}
		if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved); c != nil && c.Status == metav1.ConditionFalse {
			o.PendingReason = c.Reason
			o.PendingMessage = c.Message
		}
		if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadPreempted); c != nil && c.Status == metav1.ConditionTrue {
			v := victimFrom(wl)
			o.Preempted = &v
		}
		if c := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted); c != nil && c.Status == metav1.ConditionTrue {
			o.EvictedReason = c.Reason
		}
		out.Workloads = append(out.Workloads, o)
		if w.in.IncludeObjects {
			out.Objects = append(out.Objects, *wl)
		}
	}
	return nil
}

var quantityFormatter = resources.NewResourceFormatter()

func frOf(f kueue.ResourceFlavorReference, r corev1.ResourceName) resources.FlavorResource {
	return resources.FlavorResource{Flavor: f, Resource: r}
}

// ---------------------------------------------------------------- preempt mode

func parseMode(s string) (flavorassigner.FlavorAssignmentMode, error) {
	switch strings.ToLower(s) {
	case "fit":
		return flavorassigner.Fit, nil
	case "preempt", "":
		return flavorassigner.Preempt, nil
	case "nofit":
		return flavorassigner.NoFit, nil
	case "deferredfit":
		return flavorassigner.DeferredFit, nil
	}
	return flavorassigner.NoFit, fmt.Errorf("unknown flavor assignment mode %q", s)
}

func (w *world) runPreempt(ctx context.Context, out *Output) error {
	p := w.in.Preemption
	if p == nil {
		return errors.New(`mode "preempt" needs "preemption"`)
	}
	defaults := w.in.ApplyDefaults == nil || *w.in.ApplyDefaults
	o, err := decodeObject(p.Incoming, "Workload", defaults)
	if err != nil {
		return fmt.Errorf("incoming: %w", err)
	}
	incoming := o.(*kueue.Workload)
	if incoming.Spec.Priority == nil && incoming.Spec.PriorityClassRef != nil {
		return errors.New("incoming: set spec.priority explicitly in preempt mode")
	}
	log := ctrllog.FromContext(ctx)
	w.cl = w.buildClient(w.wls, w.lqs)
	w.recorder = &utiltesting.EventRecorder{}
	w.cache = schdcache.New(w.cl, w.cacheOptions()...)
	for _, rf := range w.rfs {
		w.cache.AddOrUpdateResourceFlavor(log, rf)
	}
	w.addOtherKueueObjects(log)
	for _, cq := range w.cqs {
		if err := w.cache.AddClusterQueue(ctx, cq); err != nil {
			return fmt.Errorf("adding ClusterQueue %s: %w", cq.Name, err)
		}
	}
	for _, c := range w.cohorts {
		if err := w.cache.AddOrUpdateCohort(c); err != nil {
			return fmt.Errorf("adding Cohort %s: %w", c.Name, err)
		}
	}
	preemptor := preemption.New(w.cl, workload.Ordering{}, w.recorder, w.in.FairSharing,
		w.in.AdmissionFairSharing != nil, w.clock, nil, preemptexpectations.New(), nil)
	snap, err := w.cache.Snapshot(ctx)
	if err != nil {
		return err
	}
	var a flavorassigner.Assignment
	for _, ps := range p.Assignment.PodSets {
		psa := flavorassigner.PodSetAssignment{Name: kueue.PodSetReference(ps.Name), Count: ps.Count, Flavors: flavorassigner.ResourceAssignment{}}
		if psa.Name == "" {
			psa.Name = kueue.DefaultPodSetName
		}
		if psa.Count == 0 {
			psa.Count = 1
		}
		for r, f := range ps.Flavors {
			mode, err := parseMode(f.Mode)
			if err != nil {
				return err
			}
			psa.Flavors[corev1.ResourceName(r)] = &flavorassigner.FlavorAssignment{Name: kueue.ResourceFlavorReference(f.Name), Mode: mode}
		}
		a.PodSets = append(a.PodSets, psa)
	}
	info := workload.NewInfo(incoming)
	info.ClusterQueue = kueue.ClusterQueueReference(p.ClusterQueue)
	if snap.ClusterQueue(info.ClusterQueue) == nil {
		return fmt.Errorf("clusterQueue %q not found or inactive", p.ClusterQueue)
	}
	targets := preemptor.GetTargets(ctx, *info, a, snap)
	preempted, failed, err := preemptor.IssuePreemptions(ctx, w.cache, info, targets, snap.ClusterQueue(info.ClusterQueue))
	if err != nil {
		return fmt.Errorf("issuing preemptions: %w", err)
	}
	po := &PreemptionOutput{Preempted: preempted, Failed: failed, Targets: []VictimOutput{}}
	for _, t := range targets {
		po.Targets = append(po.Targets, VictimOutput{Workload: string(workload.Key(t.WorkloadInfo.Obj)), Preemptor: string(workload.Key(incoming)), Reason: t.Reason})
	}
	sort.Slice(po.Targets, func(i, j int) bool { return po.Targets[i].Workload < po.Targets[j].Workload })
	out.Preemption = po
	// The test-style queue manager is not used in this mode.
	qm, rq := qcache.NewManagerForUnitTestsWithRequeuer(w.cl, w.cache)
	w.queues, w.requeuer = qm, rq
	return w.fillFinal(ctx, out)
}
