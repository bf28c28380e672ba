// Command etcd runs a single-member etcd (the go.etcd.io/etcd/server/v3 version
// that k8s.io/kubernetes v1.33.13 pins) for a throwaway test control plane.
// It listens on plain HTTP, so give it loopback addresses only.
package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

func mustURL(s string) url.URL {
	u, err := url.Parse(s)
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcd: bad URL %q: %v\n", s, err)
		os.Exit(2)
	}
	return *u
}

func main() {
	dataDir := flag.String("data-dir", "", "data directory (required)")
	clientURL := flag.String("client-url", "http://127.0.0.1:2379", "client listen and advertise URL")
	peerURL := flag.String("peer-url", "http://127.0.0.1:2380", "peer listen and advertise URL")
	noFsync := flag.Bool("unsafe-no-fsync", true, "skip fsync (fast, loses data on a crash: tests only)")
	logLevel := flag.String("log-level", "warn", "debug, info, warn or error")
	startTimeout := flag.Duration("start-timeout", 60*time.Second, "give up if not ready by then")
	flag.Parse()
	if *dataDir == "" {
		fmt.Fprintln(os.Stderr, "etcd: --data-dir is required")
		os.Exit(2)
	}

	cfg := embed.NewConfig()
	cfg.Name = "controlplane"
	cfg.Dir = *dataDir
	cu, pu := mustURL(*clientURL), mustURL(*peerURL)
	cfg.ListenClientUrls = []url.URL{cu}
	cfg.AdvertiseClientUrls = []url.URL{cu}
	cfg.ListenPeerUrls = []url.URL{pu}
	cfg.AdvertisePeerUrls = []url.URL{pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.UnsafeNoFsync = *noFsync
	cfg.Logger = "zap"
	cfg.LogLevel = *logLevel
	cfg.LogOutputs = []string{"stderr"}

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcd: start: %v\n", err)
		os.Exit(1)
	}
	select {
	case <-e.Server.ReadyNotify():
		fmt.Fprintf(os.Stderr, "etcd: ready on %s\n", cu.String())
	case <-time.After(*startTimeout):
		e.Server.Stop()
		fmt.Fprintln(os.Stderr, "etcd: not ready in time")
		os.Exit(1)
	}

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	select {
	case s := <-sig:
		fmt.Fprintf(os.Stderr, "etcd: %v, stopping\n", s)
		e.Close()
	case err := <-e.Err():
		fmt.Fprintf(os.Stderr, "etcd: %v\n", err)
		e.Close()
		os.Exit(1)
	}
}
