// A trimmed fortio command line: only `load`, over fortio's own HTTP runner and periodic pacer
// (fortio.org/fortio/fhttp, periodic). The upstream CLI also links a scripting REPL whose module
// the Go proxy here does not serve; the load engine and its JSON result are the same.
//
//	fortio load -qps 1000 -c 16 -t 20s -p 50,90,99,99.9 -H "Host: b" -json out.json http://host:port/path
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"fortio.org/fortio/fhttp"
	"fortio.org/fortio/version"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: fortio load|version [flags] URL")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "version":
		fmt.Println(version.Short())
		return
	case "load":
	default:
		fmt.Fprintf(os.Stderr, "unknown command %q: only load and version\n", os.Args[1])
		os.Exit(2)
	}
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	qps := fs.Float64("qps", 8, "target queries per second across all connections (0: as fast as possible)")
	conns := fs.Int("c", 8, "connections (goroutines)")
	dur := fs.Duration("t", 5*time.Second, "duration")
	pct := fs.String("p", "50,75,90,99,99.9", "percentiles")
	out := fs.String("json", "", "write the JSON result to this file (- for stdout)")
	uniform := fs.Bool("uniform", false, "stagger the connections' request times uniformly")
	jitter := fs.Bool("jitter", false, "±10% jitter on the pacing")
	timeout := fs.Duration("timeout", 3*time.Second, "request timeout")
	var headers []string
	fs.Func("H", "extra header `Name: value` (repeatable; Host: sets the Host header)", func(v string) error {
		headers = append(headers, v)
		return nil
	})
	res := fs.Duration("r", 0, "histogram resolution (default 10µs: buckets of 10–100µs below 1 ms)")
	_ = fs.Parse(os.Args[2:])
	if fs.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "load needs exactly one URL")
		os.Exit(2)
	}
	var percentiles []float64
	for _, s := range strings.Split(*pct, ",") {
		p, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bad percentile %q\n", s)
			os.Exit(2)
		}
		percentiles = append(percentiles, p)
	}
	o := fhttp.HTTPRunnerOptions{}
	o.QPS = *qps
	o.NumThreads = *conns
	o.Duration = *dur
	o.Percentiles = percentiles
	o.Uniform = *uniform
	o.Jitter = *jitter
	o.URL = fs.Arg(0)
	o.HTTPReqTimeOut = *timeout
	o.Out = os.Stderr
	o.RunnerOptions.Resolution = 0.00001
	if *res > 0 {
		o.RunnerOptions.Resolution = res.Seconds()
	}
	for _, h := range headers {
		if err := o.AddAndValidateExtraHeader(h); err != nil {
			fmt.Fprintln(os.Stderr, "bad header:", err)
			os.Exit(2)
		}
	}
	result, err := fhttp.RunHTTPTest(&o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "load failed:", err)
		os.Exit(1)
	}
	if *out != "" {
		b, err := json.MarshalIndent(result, "", "  ")
		if err != nil {
			fmt.Fprintln(os.Stderr, "json:", err)
			os.Exit(1)
		}
		if *out == "-" {
			os.Stdout.Write(b)
		} else if err := os.WriteFile(*out, b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "write:", err)
			os.Exit(1)
		}
	}
}
