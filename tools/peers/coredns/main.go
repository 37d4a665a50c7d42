// Command coredns is CoreDNS with only the plugins the local cluster and the Gateway API
// conformance manifests use (the upstream main imports every plugin and with them every cloud SDK).
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/hosts"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
	_ "github.com/coredns/coredns/plugin/whoami"
)

func init() {
	// The order plugins run in, a subset of upstream's plugin.cfg order.
	dnsserver.Directives = []string{
		"reload", "bind", "ready", "health", "errors", "log", "cache", "hosts", "kubernetes",
		"loop", "forward", "whoami",
	}
}

func main() {
	coremain.Run()
}
