module aether.local/tools/peers/mcs-api

go 1.26

// The Multi-Cluster Services API (KEP-1645): only its CRDs are used (the mcs-api-crds peer).
require sigs.k8s.io/mcs-api v0.5.2
