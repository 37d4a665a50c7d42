// Package aetherbench times Envoy Gateway's own translation stages on one input file, the way its
// Kubernetes provider runs them on a watch event: Gateway API resources (with their
// EndpointSlices, which the provider adds and EG's YAML loader does not) → Xds IR
// (gatewayapi.Translator with the controller's defaults), then each Xds IR → xDS resources
// (xds translator.Translator). Loading and parsing the file are outside the timed parts.
//
// Two loaders build the same resource.Resources:
//   - the harness's own (the default): each YAML document decoded with sigs.k8s.io/yaml, the CRD
//     defaults applied as the API server applies them (apiextensions' structural defaulting with
//     the schemas of the CRDs Envoy Gateway embeds, envoygateway.GatewayCRDs), converted to the
//     typed struct of its kind and kept with what EG's loader keeps (type, name, namespace, spec;
//     the whole EndpointSlice); the Namespaces the objects name are added and the result sorted
//     (Resources.Sort), as EG's loader does. It does not validate: the inputs are known-valid
//     (an API server would have validated them before the provider saw them). Only the kinds of the
//     synthetic inputs are known to it (GatewayClass, Gateway, HTTPRoute, Service, EndpointSlice,
//     Namespace); any other kind stops the run.
//   - EG's own, with AETHER_EG_LOADER=eg: resource.LoadResourcesFromYAMLBytes, which runs
//     kubectl-validate's ValidateDocument (schema and CEL rules) and EG's go-openapi defaulter
//     (which re-encodes the kind's whole schema per object) on every Gateway API object: 65–95 s
//     at 1,000 routes, 13 min at 10,000 on a 2-core machine. Kept to show the two loaders hand the
//     translator the same input: compare inputHash, irHash and xdsHash of the final line
//     (AETHER_EG_HASH=1).
//
// aether's bench/eg_translate.ts copies the Envoy Gateway module (pinned in
// tools/peers/envoy-gateway/go.mod) to a temporary folder, places this file in
// internal/aetherbench/ and builds it with `go test -c -trimpath`; it is aether's
// code, not part of Envoy Gateway. Run:
//
//	AETHER_EG_INPUT=<file> AETHER_EG_ROUNDS=3 [AETHER_EG_LOADER=eg] [AETHER_EG_HASH=1] \
//	  ./eg-harness -test.run TestTranslate
//
// It prints one JSON line per round and a final one with the medians, the loader and its time and
// the peak RSS. With AETHER_EG_HASH=1 the final line also has counts of the xDS resources and
// SHA-256 hashes of the loaded input (its JSON), of the Xds IR (its JSON) and of the xDS resources
// (canonical JSON, in order), each round checked to produce the same; AETHER_EG_DUMP=<dir> also
// writes the loaded input and each round's Xds IR there as JSON. The equality check of the two
// loaders (2026-12-06, 100, 1,000 and 10,000 routes): the same three hashes with either loader.
package aetherbench

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"testing"
	"time"

	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/encoding/protojson"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	envoygateway "github.com/envoyproxy/gateway"
	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	"github.com/envoyproxy/gateway/internal/envoygateway/config"
	"github.com/envoyproxy/gateway/internal/gatewayapi"
	"github.com/envoyproxy/gateway/internal/gatewayapi/resource"
	"github.com/envoyproxy/gateway/internal/logging"
	"github.com/envoyproxy/gateway/internal/xds/translator"
	xdstypes "github.com/envoyproxy/gateway/internal/xds/types"
)

// defaultEndpointSlice applies what the API server defaults in an EndpointSlice's ports (the
// provider only ever sees defaulted objects).
func defaultEndpointSlice(es *discoveryv1.EndpointSlice) {
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
}

// loadEG is Envoy Gateway's own loader plus the EndpointSlices.
func loadEG(t *testing.T, input []byte) *resource.Resources {
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
		defaultEndpointSlice(&es)
		res.EndpointSlices = append(res.EndpointSlices, &es)
		return nil
	})
	if err != nil {
		t.Fatalf("endpoint slices: %v", err)
	}
	return res
}

// crdSchemas returns the structural schema of every version of every CRD Envoy Gateway embeds
// (the Gateway API's and its own), by group, version and kind.
func crdSchemas(t *testing.T) map[schema.GroupVersionKind]*structuralschema.Structural {
	out := map[schema.GroupVersionKind]*structuralschema.Structural{}
	err := resource.IterYAMLBytes(envoygateway.GatewayCRDs, func(doc []byte) error {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(doc, &crd); err != nil {
			return err
		}
		if crd.Kind != "CustomResourceDefinition" {
			return nil
		}
		for _, v := range crd.Spec.Versions {
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			var props apiextensions.JSONSchemaProps
			err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, &props, nil)
			if err != nil {
				return fmt.Errorf("%s %s: %w", crd.Name, v.Name, err)
			}
			s, err := structuralschema.NewStructural(&props)
			if err != nil {
				return fmt.Errorf("%s %s: %w", crd.Name, v.Name, err)
			}
			out[schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}] = s
		}
		return nil
	})
	if err != nil {
		t.Fatalf("CRD schemas: %v", err)
	}
	return out
}

// loadOwn is the harness's own loader (see the package comment).
func loadOwn(t *testing.T, input []byte) *resource.Resources {
	schemas := crdSchemas(t)
	res := resource.NewResources()
	provided, required := sets.New[string](), sets.New[string]()
	var slices []*discoveryv1.EndpointSlice
	useDefaultNamespace := false
	err := resource.IterYAMLBytes(input, func(doc []byte) error {
		var obj map[string]any
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			return err
		}
		un := &unstructured.Unstructured{Object: obj}
		gvk := un.GroupVersionKind()
		name, namespace := un.GetName(), un.GetNamespace()
		if namespace == "" {
			useDefaultNamespace = true
			namespace = config.DefaultNamespace
		}
		required.Insert(namespace)
		if s, ok := schemas[gvk]; ok {
			structuraldefaulting.Default(obj, s)
		}
		typeMeta := metav1.TypeMeta{Kind: gvk.Kind, APIVersion: gvk.GroupVersion().String()}
		meta := metav1.ObjectMeta{Name: name, Namespace: namespace}
		from := runtime.DefaultUnstructuredConverter.FromUnstructured
		switch {
		case gvk.Group == gwapiv1.GroupName && gvk.Kind == resource.KindGatewayClass:
			var o gwapiv1.GatewayClass
			if err := from(obj, &o); err != nil {
				return err
			}
			res.GatewayClass = &gwapiv1.GatewayClass{TypeMeta: typeMeta, ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: o.Spec}
		case gvk.Group == gwapiv1.GroupName && gvk.Kind == resource.KindGateway:
			var o gwapiv1.Gateway
			if err := from(obj, &o); err != nil {
				return err
			}
			res.Gateways = append(res.Gateways, &gwapiv1.Gateway{TypeMeta: typeMeta, ObjectMeta: meta, Spec: o.Spec})
		case gvk.Group == gwapiv1.GroupName && gvk.Kind == resource.KindHTTPRoute:
			var o gwapiv1.HTTPRoute
			if err := from(obj, &o); err != nil {
				return err
			}
			res.HTTPRoutes = append(res.HTTPRoutes, &gwapiv1.HTTPRoute{TypeMeta: typeMeta, ObjectMeta: meta, Spec: o.Spec})
		case gvk.Group == "" && gvk.Kind == resource.KindService:
			var o corev1.Service
			if err := from(obj, &o); err != nil {
				return err
			}
			res.Services = append(res.Services, &corev1.Service{TypeMeta: typeMeta, ObjectMeta: meta, Spec: o.Spec})
		case gvk.Group == "" && gvk.Kind == resource.KindNamespace:
			res.Namespaces = append(res.Namespaces, &corev1.Namespace{TypeMeta: typeMeta, ObjectMeta: metav1.ObjectMeta{Name: name}})
			provided.Insert(name)
		case gvk.Group == discoveryv1.GroupName && gvk.Kind == "EndpointSlice":
			// Whole, as the loadEG path decodes it (the provider matches slices by their labels).
			var es discoveryv1.EndpointSlice
			if err := yaml.Unmarshal(doc, &es); err != nil {
				return err
			}
			defaultEndpointSlice(&es)
			slices = append(slices, &es)
		default:
			return fmt.Errorf("%s %s/%s: a kind the harness's loader does not know; use AETHER_EG_LOADER=eg", gvk, namespace, name)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	nsMeta := metav1.TypeMeta{Kind: resource.KindNamespace, APIVersion: corev1.SchemeGroupVersion.String()}
	if useDefaultNamespace && !provided.Has(config.DefaultNamespace) {
		res.Namespaces = append(res.Namespaces, &corev1.Namespace{TypeMeta: nsMeta, ObjectMeta: metav1.ObjectMeta{Name: config.DefaultNamespace}})
		provided.Insert(config.DefaultNamespace)
	}
	for _, ns := range sets.List(required) {
		if !provided.Has(ns) {
			res.Namespaces = append(res.Namespaces, &corev1.Namespace{TypeMeta: nsMeta, ObjectMeta: metav1.ObjectMeta{Name: ns}})
		}
	}
	res.Sort()
	// After the sort, in the file's order, as loadEG adds them (the translation does not depend on
	// their order: sorted, the input differs from loadEG's and the Xds IR and xDS hashes do not).
	res.EndpointSlices = slices
	return res
}

func load(t *testing.T, input []byte) *resource.Resources {
	var res *resource.Resources
	if os.Getenv("AETHER_EG_LOADER") == "eg" {
		res = loadEG(t, input)
	} else {
		res = loadOwn(t, input)
	}
	if res.GatewayClass == nil {
		t.Fatal("the input has no GatewayClass")
	}
	return res
}

func jsonHash(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("json: %v", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// dump writes v as indented JSON (AETHER_EG_DUMP=<dir>: the loaded input and each round's Xds IR,
// to compare the two loaders with diff).
func dump(t *testing.T, file string, v any) {
	b, err := json.MarshalIndent(v, "", " ")
	if err == nil {
		err = os.WriteFile(file, b, 0o644)
	}
	if err != nil {
		t.Fatalf("dump: %v", err)
	}
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
	// Load once, then give each round a deep copy, as each watch event brings objects of its own.
	loadStart := time.Now()
	loaded := load(t, input)
	loadMs := float64(time.Since(loadStart).Microseconds()) / 1000
	// AETHER_EG_HASH=1: hashes and counts of what is loaded and produced (outside the timed parts;
	// off by default, as the JSON they encode would add to the peak RSS reported).
	hashing := os.Getenv("AETHER_EG_HASH") == "1"
	var inputHash, irHash, xdsHash string
	if hashing {
		inputHash = jsonHash(t, loaded)
	}
	counts := map[string]int{}
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
		var tables []*xdstypes.ResourceVersionTable
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
			tables = append(tables, table)
		}
		t3 := time.Now()
		irMs = append(irMs, float64(t1.Sub(t0).Microseconds())/1000)
		xdsMs = append(xdsMs, float64(t3.Sub(t2).Microseconds())/1000)
		if dir := os.Getenv("AETHER_EG_DUMP"); dir != "" {
			dump(t, fmt.Sprintf("%s/ir-%s-%d.json", dir, loaderName(), r), result.XdsIR)
			if r == 0 {
				dump(t, fmt.Sprintf("%s/input-%s.json", dir, loaderName()), loaded)
			}
		}
		if hashing {
			roundIR := jsonHash(t, result.XdsIR)
			roundXds, roundCounts := hashXds(t, tables)
			if r > 0 && roundIR != irHash {
				t.Fatalf("round %d produced another Xds IR than round 0", r)
			}
			if r > 0 && roundXds != xdsHash {
				t.Fatalf("round %d produced other xDS resources than round 0", r)
			}
			irHash, xdsHash, counts = roundIR, roundXds, roundCounts
		}
		line, _ := json.Marshal(map[string]any{"round": r, "gatewayApiToIrMs": irMs[r], "irToXdsMs": xdsMs[r]})
		fmt.Println(string(line))
	}
	final := map[string]any{
		"gatewayApiToIrMs": median(irMs),
		"irToXdsMs":        median(xdsMs),
		"totalMs":          median(irMs) + median(xdsMs),
		"irRoutes":         routes,
		"clusters":         clusters,
		"listeners":        listeners,
		"loader":           loaderName(),
		"loadMs":           loadMs,
		"peakRssMiB":       peakRSSMiB(),
		"rounds":           rounds,
	}
	if hashing {
		final["xdsCounts"] = counts
		final["inputHash"] = inputHash
		final["irHash"] = irHash
		final["xdsHash"] = xdsHash
	}
	line, _ := json.Marshal(final)
	fmt.Println(string(line))
}

func loaderName() string {
	if os.Getenv("AETHER_EG_LOADER") == "eg" {
		return "eg"
	}
	return "harness"
}

// hashXds hashes every xDS resource (type by type in sorted order, resources in their order, each
// as canonical JSON: protojson re-encoded with encoding/json, so map fields and the messages
// inside Any fields come out in one order) and counts them: resources per type, and the routes of
// the route configurations and the endpoints of the cluster load assignments.
func hashXds(t *testing.T, tables []*xdstypes.ResourceVersionTable) (string, map[string]int) {
	h := sha256.New()
	counts := map[string]int{}
	for _, table := range tables {
		types := make([]string, 0, len(table.XdsResources))
		for typ := range table.XdsResources {
			types = append(types, string(typ))
		}
		sort.Strings(types)
		for _, typ := range types {
			list := table.XdsResources[typ]
			counts[typ] += len(list)
			for _, res := range list {
				b, err := protojson.Marshal(res)
				var v any
				if err == nil {
					err = json.Unmarshal(b, &v)
				}
				if err == nil {
					b, err = json.Marshal(v)
				}
				if err != nil {
					t.Fatalf("canonical JSON of a %s: %v", typ, err)
				}
				fmt.Fprintf(h, "%s %d\n", typ, len(b))
				h.Write(b)
				switch m := res.(type) {
				case *routev3.RouteConfiguration:
					for _, vh := range m.GetVirtualHosts() {
						counts["routes"] += len(vh.GetRoutes())
					}
				case *endpointv3.ClusterLoadAssignment:
					for _, le := range m.GetEndpoints() {
						counts["endpoints"] += len(le.GetLbEndpoints())
					}
				}
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)), counts
}
