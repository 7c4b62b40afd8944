package distcheck

import (
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
)

// npmRegistry serves npm packages from their tarballs on 127.0.0.1, as
// the npm registry serves published ones: a package document (the
// "packument") at /NAME listing each version's package.json, tarball URL
// and integrity, and the tarball at /NAME/-/NAME-VERSION.tgz. Nothing is
// published from here; npm pointed at it (npm_config_registry) installs
// the packages as it would install them from the registry.
type npmRegistry struct {
	URL      string
	mu       sync.Mutex
	requests []string
}

// startNPMRegistry serves the tarballs, each read for its package.json.
func startNPMRegistry(t *testing.T, tarballs ...string) *npmRegistry {
	t.Helper()
	r := &npmRegistry{}
	docs := map[string][]byte{}
	files := map[string][]byte{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.URL = "http://" + ln.Addr().String() + "/"
	for _, tgz := range tarballs {
		entries, err := ReadTarGz(tgz)
		if err != nil {
			t.Fatal(err)
		}
		pj, ok := Find(entries, "package/package.json")
		if !ok {
			t.Fatalf("%s has no package/package.json", tgz)
		}
		var manifest map[string]any
		if err := json.Unmarshal(pj.Data, &manifest); err != nil {
			t.Fatalf("%s: package.json: %v", tgz, err)
		}
		name, _ := manifest["name"].(string)
		version, _ := manifest["version"].(string)
		data, err := os.ReadFile(tgz)
		if err != nil {
			t.Fatal(err)
		}
		path := name + "/-/" + name + "-" + version + ".tgz"
		files[path] = data
		s512 := sha512.Sum512(data)
		s1 := sha1.Sum(data)
		manifest["_id"] = name + "@" + version
		manifest["dist"] = map[string]any{
			"tarball":   r.URL + path,
			"integrity": "sha512-" + base64.StdEncoding.EncodeToString(s512[:]),
			"shasum":    hex.EncodeToString(s1[:]),
		}
		doc, err := json.Marshal(map[string]any{
			"name":      name,
			"dist-tags": map[string]string{"latest": version},
			"versions":  map[string]any{version: manifest},
		})
		if err != nil {
			t.Fatal(err)
		}
		docs[name] = doc
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		path := strings.TrimPrefix(req.URL.Path, "/")
		r.mu.Lock()
		r.requests = append(r.requests, req.Method+" /"+path)
		r.mu.Unlock()
		if data, ok := files[path]; ok {
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write(data)
			return
		}
		if doc, ok := docs[path]; ok {
			w.Header().Set("Content-Type", "application/json")
			w.Write(doc)
			return
		}
		http.Error(w, `{"error":"Not found"}`, http.StatusNotFound)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return r
}

// Requests lists what was asked, as "GET /path".
func (r *npmRegistry) Requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.requests...)
}

// env points npm at the registry, with an empty cache of its own.
func (r *npmRegistry) env(t *testing.T) []string {
	return []string{"npm_config_registry=" + r.URL, "npm_config_cache=" + t.TempDir(), "npm_config_update_notifier=false",
		"npm_config_audit=false", "npm_config_fund=false"}
}
