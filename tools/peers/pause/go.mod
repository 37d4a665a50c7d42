module aether.local/tools/peers/pause

go 1.26
