// This file only marks extension/ as outside the bridge's Go module: an
// npm package under node_modules (flatted) ships Go sources, and without
// it `go test ./...`, `go vet ./...` and staticcheck would build them as
// ours.
module github.com/oh-bridge/oh-bridge/extension-not-go

go 1.24
