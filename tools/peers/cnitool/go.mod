module aether.local/tools/peers/cnitool

go 1.26.0

tool github.com/containernetworking/cni/cnitool

require github.com/containernetworking/cni v1.1.2 // indirect
