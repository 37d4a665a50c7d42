// Package aetherbench times Envoy Gateway's own translation stages on one input file, the way its
// Kubernetes provider runs them on a watch event: Gateway API resources (with their
// EndpointSlices, which the provider adds and the YAML loader does not) → Xds IR
// (gatewayapi.Translator with the controller's defaults), then each Xds IR → xDS resources
// (xds translator.Translator). Loading and parsing the file are outside the timed parts.
//
// aether's bench/eg_translate.ts copies the Envoy Gateway module (pinned in
// tools/peers/envoy-gateway/go.mod) to a temporary folder, places this file in
// internal/aetherbench/ and builds it with `go test -c -trimpath`; it is aether's
// code, not part of Envoy Gateway. Run:
//
//	AETHER_EG_INPUT=<file> AETHER_EG_ROUNDS=3 ./eg-harness -test.run TestTranslate
//
// It prints one JSON line per round and a final one with the medians and the peak RSS.
package aetherbench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	"github.com/envoyproxy/gateway/internal/gatewayapi"
	"github.com/envoyproxy/gateway/internal/gatewayapi/resource"
	"github.com/envoyproxy/gateway/internal/logging"
	"github.com/envoyproxy/gateway/internal/xds/translator"
)

func load(t *testing.T, input []byte) *resource.Resources {
	res, err := resource.LoadResourcesFromYAMLBytes(input, false, nil)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	err = resource.IterYAMLBytes(input, func(doc []byte) error {
		var head struct{ Kind string }
		if err := yaml.Unmarshal(doc, &head); err != nil || head.Kind != "EndpointSlice" {
			return nil
		}
		var es discoveryv1.EndpointSlice
		if err := yaml.Unmarshal(doc, &es); err != nil {
			return err
		}
		// What the API server defaults (the provider only ever sees defaulted objects).
		for i := range es.Ports {
			if es.Ports[i].Protocol == nil {
				tcp := corev1.ProtocolTCP
				es.Ports[i].Protocol = &tcp
			}
			if es.Ports[i].Name == nil {
				empty := ""
				es.Ports[i].Name = &empty
			}
		}
		res.EndpointSlices = append(res.EndpointSlices, &es)
		return nil
	})
	if err != nil {
		t.Fatalf("endpoint slices: %v", err)
	}
	if res.GatewayClass == nil {
		t.Fatal("the input has no GatewayClass")
	}
	return res
}

func peakRSSMiB() float64 {
	status, _ := os.ReadFile("/proc/self/status")
	m := regexp.MustCompile(`VmHWM:\s+(\d+)`).FindSubmatch(status)
	if m == nil {
		return 0
	}
	kb, _ := strconv.Atoi(string(m[1]))
	return float64(kb) / 1024
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func TestTranslate(t *testing.T) {
	input, err := os.ReadFile(os.Getenv("AETHER_EG_INPUT"))
	if err != nil {
		t.Fatalf("AETHER_EG_INPUT: %v", err)
	}
	rounds, _ := strconv.Atoi(os.Getenv("AETHER_EG_ROUNDS"))
	if rounds < 1 {
		rounds = 3
	}
	logger := logging.DefaultLogger(io.Discard, egv1a1.LogLevelInfo)
	var irMs, xdsMs []float64
	var routes, clusters, listeners int
	// EG's YAML loader validates every object (minutes per 1,000 routes): load once, then give each
	// round a deep copy, as each watch event brings objects of its own.
	loaded := load(t, input)
	for r := 0; r < rounds; r++ {
		res := loaded.DeepCopy()
		gt := &gatewayapi.Translator{
			GatewayControllerName: string(res.GatewayClass.Spec.ControllerName),
			GatewayClassName:      gwapiv1.ObjectName(res.GatewayClass.Name),
			ControllerNamespace:   "envoy-gateway-system",
			Logger:                logger,
		}
		t0 := time.Now()
		result, err := gt.Translate(res)
		t1 := time.Now()
		if err != nil && result == nil {
			t.Fatalf("gateway api translate: %v", err)
		}
		keys := make([]string, 0, len(result.XdsIR))
		for k := range result.XdsIR {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		routes, clusters, listeners = 0, 0, 0
		t2 := time.Now()
		for _, k := range keys {
			ir := result.XdsIR[k]
			xt := &translator.Translator{
				ControllerNamespace: "envoy-gateway-system",
				FilterOrder:         ir.FilterOrder,
				Logger:              logger,
			}
			table, err := xt.Translate(ir)
			if err != nil {
				t.Fatalf("xds translate %s: %v", k, err)
			}
			for typ, list := range table.XdsResources {
				switch {
				case typ == "type.googleapis.com/envoy.config.cluster.v3.Cluster":
					clusters += len(list)
				case typ == "type.googleapis.com/envoy.config.listener.v3.Listener":
					listeners += len(list)
				}
			}
			for _, l := range ir.HTTP {
				routes += len(l.Routes)
			}
		}
		t3 := time.Now()
		irMs = append(irMs, float64(t1.Sub(t0).Microseconds())/1000)
		xdsMs = append(xdsMs, float64(t3.Sub(t2).Microseconds())/1000)
		line, _ := json.Marshal(map[string]any{"round": r, "gatewayApiToIrMs": irMs[r], "irToXdsMs": xdsMs[r]})
		fmt.Println(string(line))
	}
	line, _ := json.Marshal(map[string]any{
		"gatewayApiToIrMs": median(irMs),
		"irToXdsMs":        median(xdsMs),
		"totalMs":          median(irMs) + median(xdsMs),
		"irRoutes":         routes,
		"clusters":         clusters,
		"listeners":        listeners,
		"peakRssMiB":       peakRSSMiB(),
		"rounds":           rounds,
	})
	fmt.Println(string(line))
}
